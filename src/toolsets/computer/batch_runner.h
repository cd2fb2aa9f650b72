// Owns: computer_batch's state machine. A batch lives in its call's entry
// of the call table and runs one step at a time: first, when the step has
// a condition (`if`), its probe (another tool's handler, run as a call of
// the batch like a step), which decides whether the step runs or is
// skipped; then the step's handler, as a call of the batch (its work goes
// out under the batch's own sequence number and comes back here); then the
// screenshot the plan asks for, then the pause (delay_ms). A failed step
// (unless stop_on_error is false), the last step or a cancellation ends it
// with the result toolsets/computer/batch.h assembles. What it needs of
// the call table (run a handler as a step, a capture, a pause, the end) it
// asks through batch_host, which the protocol room implements: the state
// machine lives with its toolset, below the protocol room.
// Thread affinity: the loop thread.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tool_result.h"
#include "toolsets/computer/batch.h"
#include "toolsets/registry.h"

namespace cu {

// A computer_batch in progress.
struct batch_run {
  batch_plan plan;  // With its steps' arguments, parsed once.
  std::vector<step_outcome> done;
  size_t next = 0;         // The step to start next.
  bool probing = false;    // The work out is the probe of step next - 1's condition.
  bool capturing = false;  // The work out is the capture after done.back().
  bool leased = false;     // An input step went to the actor.
  // What step next - 1's condition found, once its probe has answered.
  std::optional<bool> condition;
};

// What a batch asks of the call it runs in (the call table implements it).
class batch_host {
 public:
  // Batch seq's state, in its call's entry.
  virtual batch_run& batch(uint64_t seq) = 0;
  virtual bool cancelled(uint64_t seq) const = 0;
  // The server is stopping: no new step starts.
  virtual bool stopping() const = 0;
  virtual toolset_mask toolsets() const = 0;
  // Runs a step's handler as part of batch seq; its result when it
  // finished at once, otherwise the result comes back to on_result.
  virtual std::optional<tool_result> run_step(uint64_t seq, const tool_def& def,
                                              simdjson::dom::object args) = 0;
  // The screenshot after a step (screenshot each/final); to on_result.
  virtual void capture_for_batch(uint64_t seq) = 0;
  // Calls batch_runner::resume(seq) after ms.
  virtual void pause_batch(uint64_t seq, uint64_t ms) = 0;
  // Ends batch seq's call with r (nothing: it was cancelled).
  virtual void finish_batch(uint64_t seq, std::optional<tool_result> r) = 0;

 protected:
  ~batch_host() = default;
};

class batch_runner {
 public:
  explicit batch_runner(batch_host& calls) : calls_(calls) {}

  // Runs batch seq's steps from the next one on, until one is under way
  // (its result comes back through on_result), a pause begins, or the
  // batch ends.
  void resume(uint64_t seq);

  // What batch seq's work out gave: the step's result, its probe's or its
  // capture's; nothing when it was cancelled.
  void on_result(uint64_t seq, std::optional<tool_result> r);

  // "step 2 of 5: left_click": where the batch is, for its progress; while
  // a condition's probe is out, "step 2 of 5: left_click (checking
  // condition image_present)".
  static std::string progress_message(const batch_run& b);

 private:
  // Starts the next step (its probe first, when it has a condition); its
  // result when it finished at once.
  std::optional<tool_result> start_step(uint64_t seq);
  // The current step's probe answered r: the step fails (the probe
  // failed), is skipped (the condition does not hold: an empty result) or
  // runs. Its result when it finished at once.
  std::optional<tool_result> after_probe(uint64_t seq, tool_result r);
  // Runs the current step's own handler; its result when it finished at once.
  std::optional<tool_result> run_current(uint64_t seq);
  // Records a finished step; true when the next step may start right away.
  bool step_done(uint64_t seq, tool_result r);
  // After a step (and its capture): stop, pause or go on; true: go on now.
  bool after_step(uint64_t seq);
  void end(uint64_t seq);

  batch_host& calls_;
};

}  // namespace cu
