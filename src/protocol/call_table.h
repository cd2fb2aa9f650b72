// Owns: the tool calls in flight, from accepted to answered. It accepts a
// tools/call, runs its handler, hands the work to the executor that does it
// (protocol/executor.h), and turns the one completion that comes back into
// the one answer; each call's entry points at the executor its work is on,
// so a cancellation reaches it. When a capture may start is
// protocol/schedule.h's, progress notifications are protocol/progress.h's,
// and the toolsets' state machines are their rooms' (computer_batch:
// toolsets/computer/batch_runner.h; screenshot_find's until:
// toolsets/vision/find_until.h), which ask for what they need through the
// host interfaces this table implements.
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
#include <set>
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
#include "protocol/coordinates.h"
#include "protocol/executors.h"
#include "protocol/progress.h"
#include "protocol/replies.h"
#include "protocol/schedule.h"
#include "protocol/screen_watch.h"
#include "toolsets/computer/batch_runner.h"
#include "toolsets/grants.h"
#include "toolsets/registry.h"
#include "toolsets/vision/find_until.h"
#include "trace/recorder.h"
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
  grant_policy& policy;
  capture_pool& pool;
  input_actor& actor;
  desktop& desk;
  // The a11y thread, or null (not built, or the a11y toolset is off).
  class a11y* ax = nullptr;
  // The services the rooms of the toolsets that are on run (the
  // gamepad's thread), by toolset.
  std::vector<std::pair<toolset, room_service*>> services;
  // Whether the server is stopping (no new batch step starts then).
  std::function<bool()> stopping;
  // A call ended: backpressure may ease, and a stop may finish.
  std::function<void()> on_call_end;
  // The flight recorder, or null (CU_TRACE_DIR is not set).
  recorder* trace = nullptr;
};

class call_table final : public batch_host, public until_host {
 public:
  explicit call_table(call_context ctx);
  call_table(const call_table&) = delete;
  call_table& operator=(const call_table&) = delete;

  // A tools/call request with these params (nothing: none were sent), in
  // the era whose result shape its answer takes.
  //
  // Calls run at once and answer in completion order, with one exception
  // that keeps a pipeline meaning what it says: a call whose arguments are
  // in the screenshot's image space (tool_def::image_coordinates) waits
  // while a screenshot-making call sent before it is in flight, so its
  // coordinates map through that screenshot's session; and once any call
  // waits, later calls of image coordinates or input (the input actor's
  // tools, computer_batch) wait behind it, so input goes out in the order
  // it was sent. Each waits kParkSlackMs past CU_SCREENSHOT_DELAY at most,
  // then runs against whatever session there is (docs/protocol.md, "Order").
  void call(std::string_view id_json, const std::optional<simdjson::dom::object>& params,
            rpc_era era = rpc_era::legacy);

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
  void pump_captures() { captures_.pump(); }

  size_t size() const { return calls_.size(); }
  // The bytes of arguments the waiting calls keep (call's exception): the
  // server stops reading stdin while they are many (server.h).
  size_t parked_bytes() const { return parked_bytes_; }
  bool stopping() const override { return ctx_.stopping(); }
  toolset_mask toolsets() const override { return ctx_.cfg.toolsets_on; }
  bool empty() const { return calls_.empty(); }

  // batch_host: a batch's own request and the ways its steps run.
  batch_run& batch(uint64_t seq) override { return *calls_.at(seq).batch; }
  bool cancelled(uint64_t seq) const override { return calls_.at(seq).cancelled; }
  std::optional<tool_result> run_step(uint64_t seq, const tool_def& def,
                                      simdjson::dom::object args) override;
  void capture_for_batch(uint64_t seq) override;
  void pause_batch(uint64_t seq, uint64_t ms) override;
  void finish_batch(uint64_t seq, std::optional<tool_result> r) override;

  // until_host: screenshot_find's until loop.
  void look(uint64_t seq, capture_job job) override;
  void note(uint64_t seq, std::string_view text) override { progress_.send(seq, text); }
  void end(uint64_t seq, std::optional<tool_result> r) override { deliver(seq, std::move(r)); }

 private:
  friend class table_tool_call;

  struct call_state {
    std::string id_json;
    rpc_era era = rpc_era::legacy;  // The shape of its answer.
    bool cancelled = false;
    // The executor the call's work (for a batch: its current step's) is on
    // right now, whom a cancellation tells; null: on the loop, between
    // steps.
    call_executor* at = nullptr;
    std::chrono::steady_clock::time_point started;
    // The tool's name (at most 64 bytes) when debug lines were wanted as
    // the call started; its end is logged when set.
    std::string tool;
    // The call (or one of its steps) sent input or captured the screen:
    // the flight recorder takes a frame after it.
    bool traced_frame = false;
    std::unique_ptr<batch_run> batch;
    std::shared_ptr<rpc_group> group;
    std::unique_ptr<find_until> until;
    // tool_call::then: what the result of the step under way goes to, and
    // the tool it belongs to.
    std::function<void(tool_call&, tool_result)> next;
    const tool_def* next_def = nullptr;
  };

  uint64_t accept(std::string_view id_json, std::string progress_token, rpc_era era);
  // Runs def's handler for call seq (a step of batch seq when in_batch),
  // after refusing any argument def does not take (tools/known_args.h):
  // the one way into a handler for calls, steps and condition probes. A
  // step's result when it finished at once; a plain call answers itself.
  std::optional<tool_result> dispatch(uint64_t seq, const tool_def& def,
                                      simdjson::dom::object args, bool in_batch);
  // Hands job to e for call seq, which now waits on it.
  template <class Job>
  void hand_off(uint64_t seq, job_executor<Job>& e, Job job) {
    calls_.at(seq).at = &e;
    e.submit(std::move(job));
  }
  // Ends call seq with its answer line (ignored when it was cancelled;
  // empty: no answer); is_error: the answer is a tool error, for the log;
  // r: the result the line was rendered from, for the flight recorder
  // (null: not kept, or none).
  void complete(uint64_t seq, std::string line, bool is_error, const tool_result* r = nullptr);
  // Ends call seq with r rendered as its answer (nothing: unanswered).
  void answer(uint64_t seq, std::optional<tool_result> r);
  // A piece of call seq's work came back: r, or nothing when it was
  // cancelled. Ends a plain call; hands a batch's step result to the batch.
  void deliver(uint64_t seq, std::optional<tool_result> r);
  void log_call_end(const call_state& f, std::string_view line, bool is_error) const;
  // What a call's progress notifications say of their own: a batch's step.
  std::string progress_message(uint64_t seq) const;

  // wait_for_change, wait_until_stable: seq waits on the screen.
  void start_watch(uint64_t seq, watch_spec spec);
  // screenshot_find with until (toolsets/vision/find_until.h).
  void start_until(uint64_t seq, capture_job job, bool appear, double timeout_secs);
  // A chained step of call seq came back (tool_call::then).
  void run_next(uint64_t seq, std::optional<tool_result> r);

  // The calls that wait for a screenshot sent before them (call's
  // exception): parked, each with its arguments as JSON text (the request's
  // parser is reused by the next line), run in order once no
  // session-making call sent before the first is in flight, or when the
  // first's bound runs out.
  struct parked_call {
    uint64_t seq;
    const tool_def* def;
    std::string args;
  };
  static constexpr uint64_t kParkSlackMs = 5000;
  // Whether def's call, sent now, must wait (a call sent before it is in
  // flight and would make the session it maps through, or calls wait).
  bool must_park(uint64_t seq, const tool_def& def) const;
  void park(uint64_t seq, const tool_def& def, simdjson::dom::object args);
  // Runs the parked calls that may run now; forced: this one's bound ran
  // out, and it runs whatever is in flight.
  void run_parked(uint64_t forced = 0);
  // The calls in flight whose answer becomes the coordinate session
  // (tool_def::makes_session), by seq.
  std::set<uint64_t> session_makers_;
  std::deque<parked_call> parked_;
  size_t parked_bytes_ = 0;
  bool running_parked_ = false;  // run_parked is on the stack.
  simdjson::dom::parser parked_parser_;

  call_context ctx_;
  simdjson::dom::parser empty_parser_;
  simdjson::dom::object empty_args_;
  batch_runner batches_;
  screen_watches watches_;
  progress_notes progress_;
  // The executors; a call's entry points at one of them (call_state::at).
  capture_schedule captures_;
  actor_executor actor_;
  desktop_executor desktop_;
#if CU_HAVE_A11Y
  std::optional<a11y_executor> a11y_;  // Only when the a11y thread runs.
#endif
  // One per room service, as call_context::services lists them.
  std::vector<std::unique_ptr<room_executor>> rooms_;
  room_executor* room_of(toolset t);
  timer_executor waits_;   // wait's timers (finish_after).
  timer_executor pauses_;  // A batch's pauses between steps.
  timer_executor parking_;  // A parked call's bound.
  watch_executor watching_;
  uint64_t next_seq_ = 0;
  std::unordered_map<uint64_t, call_state> calls_;
};

}  // namespace cu
