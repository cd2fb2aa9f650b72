// Owns: computer_batch's plan (its steps, checked before anything runs) and
// the assembly of its result from the steps' results: the summary block,
// the tagged step blocks and the appended captures.
// Thread affinity: the loop thread (the plan is read from its parser).
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tool_result.h"
#include "util/result.h"

namespace cu {

enum class batch_screenshot { none, final, each };

// The most steps one batch may have.
inline constexpr size_t kMaxBatchSteps = 100;

struct batch_step {
  std::string name;
  std::string arguments_json;  // A JSON object; "{}" when none was given.
  // Set when the step cannot run (a nested computer_batch, arguments that
  // are not an object): the step fails with this message when its turn
  // comes, like an unknown tool name, and the batch stops there.
  std::optional<std::string> refusal;
};

struct batch_plan {
  std::vector<batch_step> steps;
  uint32_t delay_ms = 0;
  batch_screenshot screenshot = batch_screenshot::none;
};

// Reads and checks computer_batch's arguments: 1 to kMaxBatchSteps actions,
// each an object with a string name and optional arguments; delay_ms
// 0..10000; screenshot none|final|each. Only a malformed list is an error
// here. What concerns one step (an unknown tool name, a nested
// computer_batch, arguments that are not an object or are wrong for the
// tool) fails that step when it runs, as the reference server does.
result<batch_plan> parse_batch(simdjson::dom::object args);

// What one executed step gave.
struct step_outcome {
  std::string name;
  tool_result result;
  // The screenshot appended after it (screenshot each/final), if any.
  std::optional<tool_result> capture;
};

// Whether a capture follows the step at index i (the last executed one
// when last), given what it returned.
bool capture_after_step(const batch_plan& plan, const step_outcome& step, bool last);

// The batch's result: the summary JSON block (also its structuredContent),
// then every executed step's blocks, text prefixed "[step i · name] ",
// images as they are, each step followed by its capture's image. isError
// exactly when a step failed.
tool_result batch_result(const batch_plan& plan, std::vector<step_outcome> steps);

}  // namespace cu
