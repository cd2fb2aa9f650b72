// Owns: the interface a tool handler sees: its arguments and the ways it can
// finish (now, on the capture pool, or on the input actor).
// Thread affinity: the loop thread; handlers run there and hand work off.
#pragma once

#include <simdjson.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/geometry.h"
#include "core/job.h"
#include "capture/pool.h"
#include "input/actor.h"
#include "core/tool_result.h"
#include "core/watch_spec.h"
#include "toolsets/computer/batch.h"
#include "toolsets/grants.h"
#include "toolsets/registry.h"
#include "desktop/desktop_op.h"

namespace cu {
class a11y_op;
class damage_monitor;
}

namespace cu {

// One tools/call (or computer_batch step) in progress. Exactly one of the
// completing functions (finish, capture, input, desktop, finish_after,
// watch, find_until, run_batch) must be called, exactly once; the server turns it into exactly
// one response (or one step result).
class tool_call {
 public:
  explicit tool_call(simdjson::dom::object arguments) : args(arguments) {}
  virtual ~tool_call() = default;

  // The call's arguments ({} when the client sent none). Valid only during
  // the handler: copy what outlives it.
  simdjson::dom::object args;

  // Completes the call with r right away.
  virtual void finish(tool_result r) = 0;
  void fail(std::string message) { finish(tool_result::failure(std::move(message))); }

  // Completes the call on the capture pool; the server fills in the job's
  // sequence number and id, and waits out CU_SCREENSHOT_DELAY after input.
  virtual void capture(capture_job job) = 0;

  // Completes the call on the input actor with run's result. read_only: run
  // sends no input (cursor_position).
  virtual void input(std::function<tool_result(input_context&, job_control&)> run,
                     bool read_only = false) = 0;

  // Completes the call on the desktop thread with op's result.
  virtual void desktop(std::unique_ptr<desktop_op> op) = 0;

  // Completes the call on the a11y thread with op's result (the a11y
  // toolset; only when the server was built with libatspi).
  virtual void a11y(std::unique_ptr<a11y_op> op) = 0;

  // Completes the call on the service of toolset t's room (the gamepad's
  // thread): post receives the job's header (its request, where its end
  // goes) and hands the job to the service, which ends it with exactly one
  // completion; a cancellation goes to the service's cancel.
  virtual void room(toolset t, std::function<void(job_header)> post) = 0;

  // The service toolset t's room runs, or null (the toolset is off, or its
  // room runs none).
  virtual room_service* service(toolset t) = 0;

  // Chains a further step: the completing function called next (capture,
  // input, desktop, a11y) does not end the call; its result goes to next,
  // which runs on the loop thread with a call of its own (no arguments)
  // and must call one completing function of that call, which may chain
  // again. Call it before the completing function. A cancellation while
  // the step runs ends the call unanswered, and next never runs.
  virtual void then(std::function<void(tool_call&, tool_result)> next) = 0;

  // Completes the call with r after seconds, on a loop timer (wait). A
  // cancellation ends it at once; stdin EOF ends it early with an error.
  virtual void finish_after(double seconds, tool_result r) = 0;

  // Completes the call when the screen does what spec waits for (a change,
  // or quiet), or with an error at its timeout, from X DAMAGE's record of
  // drawing. A cancellation ends it at once; stdin EOF ends it early.
  virtual void watch(watch_spec spec) = 0;

  // Runs job (kind::find) until its matches appear (appear) or are all gone,
  // again each time something is drawn where it searches, and completes
  // the call with the find that met the condition, or with an error after
  // timeout_secs.
  virtual void find_until(capture_job job, bool appear, double timeout_secs) = 0;

  // Runs plan's steps one after another (computer_batch) and completes the
  // call with the batch's result.
  virtual void run_batch(batch_plan plan) = 0;

  // The coordinate session of the last screenshot, if any.
  virtual std::optional<coord_session> session() const = 0;

  // The record of what X DAMAGE saw drawn (the capture pool's monitor):
  // whether a place changed since a look (acting by mark). Its touched()
  // takes no round trip; sync_mark() takes one, so it is called from
  // another thread (the input actor), never the loop.
  virtual damage_monitor* damage() = 0;

  // The area screenshots show (switch_display); nothing: the whole screen.
  virtual std::optional<rect> display_area() const = 0;

  // The X display this server drives (DISPLAY).
  virtual const std::string& x_display() const = 0;

  // The session's grants (request_access), on the loop thread.
  virtual session_grants& grants() = 0;
  // What the agent may touch (CU_GRANTS; docs/grants.md): request_access
  // publishes the grants there, and the tools that act on a window judge
  // it with the current view.
  virtual grant_policy& policy() = 0;

  // The toolsets that are on (CU_TOOLSETS).
  virtual toolset_mask toolsets() const = 0;

  // The name the call was made with.
  virtual std::string_view tool_name() const = 0;

  // The call's work will take about this long (hold_key's duration):
  // progress notifications give it as their total. Call before handing
  // the work off.
  virtual void expect_seconds(double seconds) = 0;
};

}  // namespace cu
