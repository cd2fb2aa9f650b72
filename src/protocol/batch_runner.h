// Owns: computer_batch's state machine. A batch lives in its call's entry
// of the call table and runs one step at a time: each step's handler runs
// as a call of the batch (its work goes out under the batch's own sequence
// number and comes back here), then the screenshot the plan asks for, then
// the pause (delay_ms); a failed step, the last step or a cancellation ends
// it with the result tools/batch.h assembles.
// Thread affinity: the loop thread.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tool_result.h"
#include "tools/batch.h"

namespace cu {

class call_table;

// A computer_batch in progress.
struct batch_run {
  batch_plan plan;
  simdjson::dom::parser parser;  // The steps' arguments, one at a time.
  std::vector<step_outcome> done;
  size_t next = 0;         // The step to start next.
  bool capturing = false;  // The work out is the capture after done.back().
  bool leased = false;     // An input step went to the actor.
};

class batch_runner {
 public:
  explicit batch_runner(call_table& calls) : calls_(calls) {}

  // Runs batch seq's steps from the next one on, until one is under way
  // (its result comes back through on_result), a pause begins, or the
  // batch ends.
  void resume(uint64_t seq);

  // What batch seq's work out gave: the step's result or its capture's;
  // nothing when it was cancelled.
  void on_result(uint64_t seq, std::optional<tool_result> r);

  // "step 2 of 5: left_click": where the batch is, for its progress.
  static std::string progress_message(const batch_run& b);

 private:
  // Starts the next step; its result when it finished at once.
  std::optional<tool_result> start_step(uint64_t seq);
  // Records a finished step; true when the next step may start right away.
  bool step_done(uint64_t seq, tool_result r);
  // After a step (and its capture): stop, pause or go on; true: go on now.
  bool after_step(uint64_t seq);
  void end(uint64_t seq);

  call_table& calls_;
};

}  // namespace cu
