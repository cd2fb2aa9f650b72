#include "tools/batch.h"

#include "core/json_writer.h"
#include "tools/args.h"
#include "util/str_cat.h"

namespace cu {

using simdjson::dom::element;
using simdjson::dom::object;

namespace {

error bad_action(size_t i, std::string_view what) {
  return error{errc::invalid_argument,
               str_cat("Invalid argument \"actions\": action ", std::to_string(i), " ", what)};
}

}  // namespace

result<batch_plan> parse_batch(object args) {
  element actions;
  if (args.at_key("actions").get(actions) != simdjson::SUCCESS || !actions.is_array()) {
    return invalid_argument("actions", "an array of {name, arguments} objects");
  }
  simdjson::dom::array list = actions;
  if (list.size() == 0) {
    return error{errc::invalid_argument,
                 "Invalid argument \"actions\": the batch is empty; give at least one action"};
  }
  if (list.size() > kMaxBatchSteps) {
    return error{errc::invalid_argument,
                 str_cat("Invalid argument \"actions\": ", std::to_string(list.size()),
                         " actions; a batch takes at most ", std::to_string(kMaxBatchSteps))};
  }
  batch_plan plan;
  size_t i = 0;
  for (element a : list) {
    if (!a.is_object()) return bad_action(i, "is not an object {name, arguments}");
    object o = a;
    std::string_view name;
    if (o.at_key("name").get(name) != simdjson::SUCCESS) {
      return bad_action(i, "needs a string \"name\"");
    }
    batch_step step{std::string(name), "{}", {}};
    element arguments;
    if (o.at_key("arguments").get(arguments) == simdjson::SUCCESS && !arguments.is_null()) {
      if (arguments.is_object()) {
        step.arguments_json = simdjson::minify(arguments);
      } else {
        step.refusal = "Invalid argument \"arguments\": expected an object of the tool's arguments";
      }
    }
    if (name == "computer_batch") {
      step.refusal = "computer_batch cannot run inside a computer_batch; list its actions in this batch";
    }
    plan.steps.push_back(std::move(step));
    ++i;
  }
  auto delay = arg_integer(args, "delay_ms", 0, 10000, 0);
  if (!delay) return delay.err();
  plan.delay_ms = uint32_t(*delay);
  element mode;
  if (args.at_key("screenshot").get(mode) == simdjson::SUCCESS && !mode.is_null()) {
    auto choice = arg_choice(args, "screenshot", {"none", "final", "each"});
    if (!choice) return choice.err();
    plan.screenshot = *choice == "each"    ? batch_screenshot::each
                      : *choice == "final" ? batch_screenshot::final
                                           : batch_screenshot::none;
  }
  return plan;
}

bool capture_after_step(const batch_plan& plan, const step_outcome& step, bool last) {
  switch (plan.screenshot) {
    case batch_screenshot::none: return false;
    case batch_screenshot::each: return step.name != "screenshot";
    case batch_screenshot::final:
      return last && !(step.name == "screenshot" && !step.result.is_error);
  }
  return false;
}

tool_result batch_result(const batch_plan& plan, std::vector<step_outcome> steps) {
  size_t succeeded = 0;
  std::optional<size_t> stopped_at;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].result.is_error) {
      stopped_at = i;
      break;
    }
    ++succeeded;
  }
  tool_result r;
  r.is_error = stopped_at.has_value();
  std::string summary;
  json_writer j(summary);
  j.begin_object().key("batch").begin_object();
  j.key("total").number(int64_t(plan.steps.size()));
  j.key("succeeded").number(int64_t(succeeded));
  j.key("failed").number(int64_t(stopped_at ? 1 : 0));
  j.key("skipped").number(int64_t(plan.steps.size() - steps.size()));
  j.key("stopped_at");
  if (stopped_at) {
    j.number(int64_t(*stopped_at));
  } else {
    j.null();
  }
  j.key("steps").begin_array();
  for (size_t i = 0; i < steps.size(); ++i) {
    j.begin_object().key("index").number(int64_t(i)).key("name").string(steps[i].name);
    j.key("ok").boolean(!steps[i].result.is_error).end_object();
  }
  j.end_array().end_object().end_object();
  r.structured = summary;
  r.add_text(std::move(summary));
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string tag = str_cat("[step ", std::to_string(i), " \u00b7 ", steps[i].name, "] ");
    auto append = [&](tool_result& from) {
      for (content_block& b : from.content) {
        if (b.type == content_block::kind::text) b.text.insert(0, tag);
        r.content.push_back(std::move(b));
      }
    };
    append(steps[i].result);
    if (steps[i].capture) append(*steps[i].capture);
  }
  return r;
}

}  // namespace cu
