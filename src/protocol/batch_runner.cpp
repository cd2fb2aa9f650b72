#include "protocol/batch_runner.h"

#include "protocol/call_table.h"
#include "tools/registry.h"
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
  if (calls_.stopping()) {
    // stdin is closed (or the server is stopping): start nothing new.
    return tool_result::failure("not started: stdin closed, the server is stopping");
  }
  if (step.refusal) return tool_result::failure(*step.refusal);
  const tool_def* def = find_tool(step.name, calls_.toolsets());
  if (def == nullptr) return tool_result::failure(unknown_tool_message(step.name));
  simdjson::dom::element args;
  if (b.parser.parse(step.arguments_json).get(args) != simdjson::SUCCESS || !args.is_object()) {
    return tool_result::failure("internal error: the step's arguments did not parse");
  }
  return calls_.run_step(seq, *def, args.get_object().value());
}

bool batch_runner::step_done(uint64_t seq, tool_result r) {
  batch_run& b = calls_.batch(seq);
  bool last = r.is_error || b.next == b.plan.steps.size();
  b.done.push_back(step_outcome{b.plan.steps[b.next - 1].name, std::move(r), std::nullopt});
  if (calls_.cancelled(seq)) {
    end(seq);
    return false;
  }
  if (capture_after_step(b.plan, b.done.back(), last)) {
    b.capturing = true;
    calls_.capture_for_batch(seq);
    return false;
  }
  return after_step(seq);
}

bool batch_runner::after_step(uint64_t seq) {
  batch_run& b = calls_.batch(seq);
  if (b.done.back().result.is_error || b.next == b.plan.steps.size()) {
    end(seq);
    return false;
  }
  if (b.plan.delay_ms > 0) {
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
  if (step_done(seq, std::move(*r))) resume(seq);
}

void batch_runner::end(uint64_t seq) {
  if (calls_.cancelled(seq)) return calls_.finish_batch(seq, std::nullopt);
  batch_run& b = calls_.batch(seq);
  calls_.finish_batch(seq, batch_result(b.plan, std::move(b.done)));
}

std::string batch_runner::progress_message(const batch_run& b) {
  size_t step = b.next == 0 ? 0 : b.next - 1;
  return str_cat("step ", std::to_string(step + 1), " of ", std::to_string(b.plan.steps.size()),
                 ": ", b.plan.steps[step].name);
}

}  // namespace cu
