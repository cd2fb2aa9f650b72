// Owns: the shape of one job on the a11y thread, and the factories of the
// a11y toolset's jobs. A job runs to its end in one go: libatspi's calls
// block, and each is bounded by the job's deadline and per-call timeout
// (a11y_control), and the job checks for cancellation between calls.
// Thread affinity: made on the loop thread with validated arguments, then
// run only on the a11y thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "a11y/element.h"
#include "a11y/walk.h"
#include "core/tool_result.h"

namespace cu {

class a11y_op {
 public:
  virtual ~a11y_op() = default;

  // Does the work on the a11y thread, connected to the bus. Nothing: the
  // job was cancelled (c.cancelled() said so), and nobody is answered.
  virtual std::optional<tool_result> run(const a11y_control& c) = 0;

  // The whole job's time from when it was posted (queueing included); its
  // deadline.
  std::chrono::milliseconds budget{10000};
  // The longest any one bus call may wait.
  int call_timeout_ms = 2000;
  // The application the job acts on, as the caller named it (empty: none).
  // One that did not answer a moment ago is refused before any bus call
  // (app_ops.h, refuse_hung).
  std::string app;
};

// A job made of a function (tests, and tools whose work is one call).
std::unique_ptr<a11y_op> make_a11y_function(
    std::function<std::optional<tool_result>(const a11y_control&)> f);

}  // namespace cu
