// Owns: computer_batch's plan (its steps, checked before anything runs),
// what a step's condition (`if`) asks and how its probe's answer decides
// it, and the assembly of its result from the steps' results: the summary
// block, the tagged step blocks and the appended captures.
// Thread affinity: the loop thread (the plan is read from its parser).
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tool_result.h"
#include "toolsets/registry.h"
#include "util/result.h"

namespace cu {

enum class batch_screenshot { none, final, each };

// The most steps one batch may have.
inline constexpr size_t kMaxBatchSteps = 100;

// What a step's `if` may ask (the vision toolset). Each is decided by one
// probe: a call of another tool, whose structuredContent says.
enum class condition_kind {
  image_present,  // screenshot_find's matches are not empty.
  image_absent,   // screenshot_find's matches are empty.
  window_exists,  // list_windows' windows are not empty.
  text_present,   // find_text's matches are not empty.
};

// Every condition, in the order the schema and messages list them.
std::span<const condition_kind> all_conditions();
// The condition's name as the `if` object spells it ("image_present").
std::string_view condition_name(condition_kind k);
// The tool whose call decides it ("screenshot_find").
std::string_view condition_tool(condition_kind k);

struct batch_condition {
  condition_kind kind;
  std::string arguments_json;  // The probe's arguments, a JSON object.
  // The same, parsed once with the plan (batch_plan::arguments_doc).
  simdjson::dom::object arguments{};
};

struct batch_step {
  std::string name;
  std::string arguments_json;  // A JSON object; "{}" when none was given.
  // Set when the step cannot run (a nested computer_batch, arguments that
  // are not an object): the step fails with this message when its turn
  // comes, like an unknown tool name, and the batch stops there.
  std::optional<std::string> refusal;
  // The step's `if`: it runs only when this holds.
  std::optional<batch_condition> condition;
  // The step's `capture`: a screenshot follows it, whatever the plan's
  // screenshot mode says.
  bool capture = false;
  // arguments_json, parsed once when the plan was checked; valid while the
  // plan lives (batch_plan::arguments_doc).
  simdjson::dom::object arguments{};
};

struct batch_plan {
  std::vector<batch_step> steps;
  uint32_t delay_ms = 0;
  batch_screenshot screenshot = batch_screenshot::none;
  // false: a failed step does not end the batch (stop_on_error).
  bool stop_on_error = true;
  // The vision toolset's batch arguments are on: the summary counts
  // skipped_by_condition (its outputSchema says so then).
  bool conditions_on = false;
  // Holds the steps' parsed arguments; on the heap, so they stay where
  // they are when the plan moves.
  std::unique_ptr<simdjson::dom::parser> arguments_doc;
};

// Reads and checks computer_batch's arguments: 1 to kMaxBatchSteps actions,
// each an object with a string name and optional arguments and nothing
// else its schema lacks; delay_ms 0..10000; screenshot none|final|each.
// With the vision toolset in `on`, also stop_on_error (a boolean) and, on
// each action, capture (a boolean) and if (an object naming exactly one
// condition, whose value is an object of its probe's arguments); without
// it an action's capture and if are refused, naming the toolset (a
// stop_on_error was refused before, with the call's other arguments the
// tool does not take: known_args.h). Only a malformed list is an error
// here. What concerns one step (an unknown tool name, a nested
// computer_batch, arguments that are not an object or are wrong for the
// tool, a condition's arguments wrong for its probe) fails that step when
// it runs, as the reference server does.
result<batch_plan> parse_batch(simdjson::dom::object args, toolset_mask on = kDefaultToolsets);

// Whether the condition holds, from its probe's result: an error (the
// message starting "condition <name>: ") when the probe failed or its
// structuredContent lacks what decides it.
result<bool> condition_holds(condition_kind k, const tool_result& probe);

// What one step that was reached gave.
struct step_outcome {
  std::string name;
  tool_result result;
  // The screenshot appended after it (screenshot each/final), if any.
  std::optional<tool_result> capture;
  // What its condition found, when it had one and the probe answered.
  std::optional<bool> condition;
  // Its condition did not hold: it did not run (result is empty).
  bool skipped() const { return condition && !*condition; }
};

// Whether a capture follows step i (the batch's last when last), given
// what it returned: after every step that ran with screenshot "each" (a
// screenshot step brings its own), after the last one with "final" (unless
// it was a successful screenshot), and after a step that ran and asked for
// it with capture. A step skipped by its condition gets one only as the
// last with "final".
bool capture_after_step(const batch_plan& plan, size_t i, const step_outcome& step, bool last);

// The batch's result: the summary JSON block (also its structuredContent),
// then every executed step's blocks, text prefixed "[step i · name] ",
// images as they are, each step followed by its capture's image. isError
// exactly when a step failed.
tool_result batch_result(const batch_plan& plan, std::vector<step_outcome> steps);

}  // namespace cu
