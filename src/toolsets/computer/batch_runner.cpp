#include "toolsets/computer/batch_runner.h"

#include "toolsets/registry.h"
#include "util/str_cat.h"

namespace cu {

void batch_runner::resume(uint64_t seq) {
  for (;;) {
    auto r = start_step(seq);
    if (!r) return;  // Under way; its result comes back through on_result().
    if (!step_done(seq, std::move(*r))) return;
  }
}

std::optional<tool_result> batch_runner::start_step(uint64_t seq) {
  batch_run& b = calls_.batch(seq);
  const batch_step& step = b.plan.steps[b.next++];
  b.condition.reset();
  if (calls_.stopping()) {
    // stdin is closed (or the server is stopping): start nothing new.
    return tool_result::failure("not started: stdin closed, the server is stopping");
  }
  if (step.refusal) return tool_result::failure(*step.refusal);
  if (!step.condition) return run_current(seq);
  // The probe runs through the same dispatch as a step, whatever toolsets
  // are on: the condition's tool need not be offered for it to be asked.
  const batch_condition& cond = *step.condition;
  const tool_def* probe = find_tool(condition_tool(cond.kind), every_toolset());
  if (probe == nullptr) {
    return tool_result::failure(str_cat("condition ", condition_name(cond.kind), " needs the ",
                                        condition_tool(cond.kind),
                                        " tool, which this server does not have"));
  }
  b.probing = true;
  auto r = calls_.run_step(seq, *probe, cond.arguments);
  if (!r) return std::nullopt;  // Under way; its result comes back through on_result().
  b.probing = false;
  return after_probe(seq, std::move(*r));
}

std::optional<tool_result> batch_runner::after_probe(uint64_t seq, tool_result r) {
  batch_run& b = calls_.batch(seq);
  const batch_step& step = b.plan.steps[b.next - 1];
  auto held = condition_holds(step.condition->kind, r);
  if (!held) return tool_result::failure(held.err().message);
  b.condition = *held;
  if (!*held) return tool_result{};  // Skipped; step_done() records it so.
  if (calls_.stopping()) {
    return tool_result::failure("not started: stdin closed, the server is stopping");
  }
  return run_current(seq);
}

std::optional<tool_result> batch_runner::run_current(uint64_t seq) {
  batch_run& b = calls_.batch(seq);
  const batch_step& step = b.plan.steps[b.next - 1];
  const tool_def* def = find_tool(step.name, calls_.toolsets());
  if (def == nullptr) return tool_result::failure(unknown_tool_message(step.name));
  return calls_.run_step(seq, *def, step.arguments);
}

bool batch_runner::step_done(uint64_t seq, tool_result r) {
  batch_run& b = calls_.batch(seq);
  const size_t i = b.next - 1;
  bool last = (r.is_error && b.plan.stop_on_error) || b.next == b.plan.steps.size();
  b.done.push_back(step_outcome{b.plan.steps[i].name, std::move(r), std::nullopt, b.condition});
  b.condition.reset();
  if (calls_.cancelled(seq)) {
    end(seq);
    return false;
  }
  if (capture_after_step(b.plan, i, b.done.back(), last)) {
    b.capturing = true;
    calls_.capture_for_batch(seq);
    return false;
  }
  return after_step(seq);
}

bool batch_runner::after_step(uint64_t seq) {
  batch_run& b = calls_.batch(seq);
  const step_outcome& done = b.done.back();
  if ((done.result.is_error && b.plan.stop_on_error) || b.next == b.plan.steps.size()) {
    end(seq);
    return false;
  }
  // The pause follows a step that ran: one its condition skipped did nothing
  // to wait for.
  if (b.plan.delay_ms > 0 && !done.skipped()) {
    calls_.pause_batch(seq, b.plan.delay_ms);
    return false;
  }
  return true;
}

void batch_runner::on_result(uint64_t seq, std::optional<tool_result> r) {
  batch_run& b = calls_.batch(seq);
  if (!r || calls_.cancelled(seq)) return end(seq);
  if (b.capturing) {
    b.capturing = false;
    b.done.back().capture = std::move(*r);
    if (after_step(seq)) resume(seq);
    return;
  }
  if (b.probing) {
    b.probing = false;
    auto step = after_probe(seq, std::move(*r));
    if (!step) return;  // The step itself is under way now.
    if (step_done(seq, std::move(*step))) resume(seq);
    return;
  }
  if (step_done(seq, std::move(*r))) resume(seq);
}

void batch_runner::end(uint64_t seq) {
  if (calls_.cancelled(seq)) return calls_.finish_batch(seq, std::nullopt);
  batch_run& b = calls_.batch(seq);
  calls_.finish_batch(seq, batch_result(b.plan, std::move(b.done)));
}

std::string batch_runner::progress_message(const batch_run& b) {
  size_t step = b.next == 0 ? 0 : b.next - 1;
  std::string text = str_cat("step ", std::to_string(step + 1), " of ",
                             std::to_string(b.plan.steps.size()), ": ", b.plan.steps[step].name);
  if (b.probing && b.plan.steps[step].condition) {
    text += str_cat(" (checking condition ", condition_name(b.plan.steps[step].condition->kind),
                    ")");
  }
  return text;
}

}  // namespace cu
