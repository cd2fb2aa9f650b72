// Owns: when a capture may start, and the capture pool as an executor. A
// capture asked for right after input waits on a loop timer until the
// screen has settled; then it waits in the backlog until the pool has room
// for it: a few at a time go to the pool, none while stdout is backed up,
// and at most kTextsOut find_text calls between grab and answer.
// Thread affinity: the loop thread.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "capture/pool.h"
#include "core/completion_queue.h"
#include "protocol/executor.h"
#include "protocol/replies.h"
#include "util/config.h"

namespace cu {

class capture_schedule final : public job_executor<capture_job> {
 public:
  capture_schedule(uv_loop_t* loop, const config& cfg, capture_pool& pool, replies& out)
      : loop_(loop), cfg_(cfg), pool_(pool), out_(out) {}
  capture_schedule(const capture_schedule&) = delete;
  capture_schedule& operator=(const capture_schedule&) = delete;

  std::string_view name() const override { return "the capture pool"; }

  // Queues job for the pool, once the screen has settled when input came
  // just before.
  void submit(capture_job job) override;

  // Settling or waiting its turn: dropped here (true). In the pool's queue
  // the pool drops it; under way, its result is dropped when it comes.
  bool cancel(uint64_t seq) override;

  // Input was sent (a completion with was_input): captures wait for the
  // screen to settle after it.
  void note_input() { last_input_ = std::chrono::steady_clock::now(); }

  // A completion came back: frees its place in the pool (and a find_text's
  // among those read). true when it is not the call's end (handed_on).
  bool on_completion(const completion& c);

  // Hands waiting captures to the pool while stdout has room for them.
  void pump();

 private:
  using clock = std::chrono::steady_clock;

  // When a capture queued now may start: nothing for at once. After input,
  // once the screen (X DAMAGE) has been quiet for CU_SETTLE_QUIET_MS since
  // the input and since its last change, and CU_SCREENSHOT_DELAY after the
  // input at the latest (without DAMAGE, then).
  std::optional<clock::time_point> settled_at() const;
  // Starts seq's settle timer for ready; when it fires, the capture goes to
  // the backlog, or waits again if the screen changed meanwhile.
  void arm_settle(uint64_t seq, clock::time_point ready);

  struct settling {
    uv_timer_t* timer = nullptr;
    capture_job job;
  };

  uv_loop_t* loop_;
  const config& cfg_;
  capture_pool& pool_;
  replies& out_;
  std::unordered_map<uint64_t, settling> settling_;
  // Captures wait here for the pool: a few at a time go to it, and none
  // while stdout is backed up, so finished images cannot pile up.
  std::deque<capture_job> backlog_;
  size_t in_pool_ = 0;
  bool held_ = false;  // The backlog waits for stdout to drain.
  // find_text calls let into the pool and not yet answered. Their places
  // in the pool are free once the grab is done (completion::handed_on),
  // but each leaves its grey pixels with the recognizer: at most
  // kTextsOut at a time (one read, the next ready), so a burst of them
  // costs neither memory nor stale pixels, and holds no screenshot up.
  static constexpr size_t kTextsOut = 2;
  std::unordered_set<uint64_t> texts_out_;
  std::optional<clock::time_point> last_input_;
};

}  // namespace cu
