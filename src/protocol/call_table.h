// Owns: the tool calls in flight. It accepts a tools/call, runs its
// handler, hands the work to the executor that does it (the capture pool,
// the input actor, the desktop thread, or a loop timer), and turns the one
// completion that comes back into the one answer; it knows where each
// call's work is, so a cancellation reaches it, and it sends the progress
// notifications of calls that asked for them. computer_batch's steps run
// through it as well (batch_runner.h).
// Thread affinity: the loop thread.
#pragma once

#include <simdjson.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture/pool.h"
#include "core/completion_queue.h"
#include "core/tool_result.h"
#include "desktop/desktop.h"
#include "input/actor.h"
#include "protocol/batch_runner.h"
#include "protocol/coordinates.h"
#include "protocol/replies.h"
#include "protocol/screen_watch.h"
#include "toolsets/grants.h"
#include "toolsets/registry.h"
#include "util/config.h"

namespace cu {

struct tool_def;
class a11y;
class tool_call;

// What the call table works with; all of it outlives the table.
struct call_context {
  uv_loop_t* loop;
  const config& cfg;
  replies& out;
  coordinates& coords;
  session_grants& grants;
  capture_pool& pool;
  input_actor& actor;
  desktop& desk;
  // The a11y thread, or null (not built, or the a11y toolset is off).
  class a11y* ax = nullptr;
  // Whether the server is stopping (no new batch step starts then).
  std::function<bool()> stopping;
  // A call ended: backpressure may ease, and a stop may finish.
  std::function<void()> on_call_end;
};

class call_table {
 public:
  explicit call_table(call_context ctx);
  call_table(const call_table&) = delete;
  call_table& operator=(const call_table&) = delete;

  // A tools/call request with these params (nothing: none were sent).
  void call(std::string_view id_json, const std::optional<simdjson::dom::object>& params);

  // notifications/cancelled for the request with this id: it is never
  // answered, and its work stops as soon as its executor can stop it.
  void cancel(std::string_view id_json);
  // Every call in flight, as above (a signal, or nobody reads the answers).
  void cancel_all();

  // stdin reached EOF: waits (and watches of the screen) answer now with
  // an error, and batches pausing between steps go on at once (to start no
  // further step).
  void end_waits_early();

  // The server stops: the screen watches close their loop handle.
  void close() { watches_.close(); }

  // A completion from an executor (seq nonzero).
  void on_completion(completion& c);

  // Hands waiting captures to the pool while stdout has room for them.
  void pump_captures();

  size_t size() const { return calls_.size(); }
  bool stopping() const { return ctx_.stopping(); }
  toolset_mask toolsets() const { return ctx_.cfg.toolsets_on; }
  bool empty() const { return calls_.empty(); }

  // For batch_runner: a batch's own request and the ways its steps run.
  batch_run& batch(uint64_t seq) { return *calls_.at(seq).batch; }
  bool cancelled(uint64_t seq) const { return calls_.at(seq).cancelled; }
  // Runs a step's handler as part of batch seq; its result when it finished
  // at once, otherwise the result comes back through batch_runner.
  std::optional<tool_result> run_step(uint64_t seq, const tool_def& def,
                                      simdjson::dom::object args);
  // The screenshot after a step (screenshot each/final).
  void capture_for_batch(uint64_t seq);
  // Calls batch_runner::resume(seq) after ms.
  void pause_batch(uint64_t seq, uint64_t ms);
  // Ends batch seq's call with r (nothing: it was cancelled).
  void finish_batch(uint64_t seq, std::optional<tool_result> r);

 private:
  friend class table_tool_call;

  // Where a call's work (for a batch: its current step's) is right now, so
  // a cancellation knows whom to tell.
  enum class where { here, settle, pool, actor, desktop, a11y, timer, watch };

  // screenshot_find with `until`: the find runs again each time something
  // is drawn where it searches, one at a time, until the condition holds.
  struct until_run {
    capture_job job;  // The find, as the handler made it.
    bool appear = true;
    double timeout_secs = 0;
    bool finding = false;  // A find is out (queued, settling or in the pool).
    bool dirty = false;    // Drawn on while a find was out: look again.
    int checks = 0;
    size_t last_matches = 0;  // What the last look found.
    point last_first;
    // Why it must end once the find that is out comes back (timeout, EOF).
    std::optional<std::string> end_reason;
  };

  struct call_state {
    std::string id_json;
    bool cancelled = false;
    where at = where::here;
    uv_timer_t* timer = nullptr;     // settle, wait or batch delay, by `at`.
    uv_timer_t* progress = nullptr;  // notifications/progress ticker.
    std::string progress_token;      // JSON; empty for none.
    double progress_total = 0;       // Seconds (wait, hold_key); 0: unknown.
    bool is_wait = false;            // The timer is a wait's (ends early at EOF).
    std::optional<tool_result> waiting;  // What the wait answers when its timer fires.
    std::optional<capture_job> settle_job;  // The capture waiting for the screen to settle.
    std::chrono::steady_clock::time_point started;
    // The tool's name (at most 64 bytes) when debug lines were wanted as
    // the call started; its end is logged when set.
    std::string tool;
    std::unique_ptr<batch_run> batch;
    std::shared_ptr<rpc_group> group;
    std::unique_ptr<until_run> until;
    double progress_sent = -1;  // The last progress value sent.
    // tool_call::then: what the result of the step under way goes to, and
    // the tool it belongs to.
    std::function<void(tool_call&, tool_result)> next;
    const tool_def* next_def = nullptr;
  };

  uint64_t accept(std::string_view id_json, std::string progress_token);
  // Runs def's handler for call seq (a step of batch seq when in_batch),
  // after refusing any argument def does not take (tools/known_args.h):
  // the one way into a handler for calls, steps and condition probes. A
  // step's result when it finished at once; a plain call answers itself.
  std::optional<tool_result> dispatch(uint64_t seq, const tool_def& def,
                                      simdjson::dom::object args, bool in_batch);
  // Ends call seq with line (ignored when it was cancelled; empty: no answer).
  void complete(uint64_t seq, std::string line);
  // A piece of call seq's work came back: r, or nothing when it was
  // cancelled. Ends a plain call; hands a batch's step result to the batch.
  void deliver(uint64_t seq, std::optional<tool_result> r);
  // Queues a capture for the pool, once the screen has settled when input
  // came just before; the pool gets it from capture_backlog_.
  void queue_capture(uint64_t seq, capture_job job);
  // When a capture queued now may start: nothing for at once. After input,
  // once the screen (X DAMAGE) has been quiet for CU_SETTLE_QUIET_MS since
  // the input and since its last change, and CU_SCREENSHOT_DELAY after the
  // input at the latest (without DAMAGE, then).
  std::optional<std::chrono::steady_clock::time_point> settled_at() const;
  // Starts call seq's settle timer for ready; when it fires, the capture
  // goes to the pool, or waits again if the screen changed meanwhile.
  void arm_settle(uint64_t seq, std::chrono::steady_clock::time_point ready);
  void log_call_end(const call_state& f, std::string_view line) const;
  // A progress notification for seq, if it asked for them; note: the
  // message (a batch's own says which step it is on instead).
  void send_progress(uint64_t seq, std::string_view note = {});

  // wait_for_change, wait_until_stable: seq waits on the screen.
  void start_watch(uint64_t seq, watch_spec spec);
  // screenshot_find with until (see until_run).
  void start_until(uint64_t seq, capture_job job, bool appear, double timeout_secs);
  void until_find(uint64_t seq);
  void until_result(uint64_t seq, std::optional<tool_result> r);
  // A chained step of call seq came back (tool_call::then).
  void run_next(uint64_t seq, std::optional<tool_result> r);

  // Timers owned by the loop; stop_timer closes and frees one.
  uv_timer_t* start_timer(uint64_t ms, uint64_t repeat_ms, std::function<void()> fire);
  static void stop_timer(uv_timer_t*& t);

  call_context ctx_;
  simdjson::dom::parser empty_parser_;
  simdjson::dom::object empty_args_;
  batch_runner batches_;
  screen_watches watches_;
  simdjson::dom::parser until_parser_;  // Reads the finds' matches.
  uint64_t next_seq_ = 0;
  std::unordered_map<uint64_t, call_state> calls_;
  // Captures wait here for the pool: a few at a time go to it, and none
  // while stdout is backed up, so finished images cannot pile up.
  std::deque<capture_job> capture_backlog_;
  size_t captures_in_pool_ = 0;
  bool captures_held_ = false;  // The backlog waits for stdout to drain.
  // find_text calls let into the pool and not yet answered. Their places
  // in the pool are free once the grab is done (completion::handed_on),
  // but each leaves its grey pixels with the recognizer: at most
  // kTextsOut at a time (one read, the next ready), so a burst of them
  // costs neither memory nor stale pixels, and holds no screenshot up.
  static constexpr size_t kTextsOut = 2;
  std::unordered_set<uint64_t> texts_out_;
  std::optional<std::chrono::steady_clock::time_point> last_input_;
};

}  // namespace cu
