#include "toolsets/computer/batch.h"

#include <iterator>

#include "core/json_writer.h"
#include "toolsets/args.h"
#include "toolsets/known_args.h"
#include "util/str_cat.h"

namespace cu {

using simdjson::dom::element;
using simdjson::dom::object;

namespace {

error bad_action(size_t i, std::string_view what) {
  return error{errc::invalid_argument,
               str_cat("Invalid argument \"actions\": action ", std::to_string(i), " ", what)};
}

constexpr condition_kind kConditions[] = {condition_kind::image_present,
                                          condition_kind::image_absent,
                                          condition_kind::window_exists,
                                          condition_kind::text_present};

constexpr std::string_view kNeedsVision =
    " needs the vision toolset (CU_TOOLSETS=vision or --toolsets vision)";

bool present(object o, std::string_view key) {
  element e;
  return o.at_key(key).get(e) == simdjson::SUCCESS && !e.is_null();
}

std::string condition_names() {
  std::string out;
  for (size_t k = 0; k < std::size(kConditions); ++k) {
    if (k > 0) out += k + 1 == std::size(kConditions) ? " or " : ", ";
    out += condition_name(kConditions[k]);
  }
  return out;
}

// An action's `if`: an object with exactly one known condition whose value
// is an object (the probe's arguments, checked by the probe itself).
result<batch_condition> parse_condition(size_t i, element e) {
  const std::string shape =
      str_cat("\"if\" takes an object with exactly one condition (", condition_names(),
              ") whose value is an object of its tool's arguments");
  if (!e.is_object()) return bad_action(i, str_cat(shape, "; got something else"));
  object o = e;
  if (o.size() != 1) {
    return bad_action(i, str_cat(shape, "; got ", std::to_string(o.size()), " conditions"));
  }
  auto field = *o.begin();
  std::optional<condition_kind> kind;
  for (condition_kind k : kConditions) {
    if (condition_name(k) == field.key) kind = k;
  }
  if (!kind) {
    std::string shown;
    append_json_string(shown, field.key);
    return bad_action(i, str_cat("\"if\": unknown condition ", shown, "; the conditions are ",
                                 condition_names()));
  }
  if (!field.value.is_object()) {
    return bad_action(i, str_cat("\"if\": \"", condition_name(*kind),
                                 "\" takes an object of ", condition_tool(*kind),
                                 "'s arguments"));
  }
  return batch_condition{*kind, simdjson::minify(field.value)};
}

// What an action holds beyond the keys its schema gives, as "has "x"; an
// action takes name, arguments": the batch is refused before anything
// runs, since a misspelt key ("iff", "args") would otherwise run the step
// unconditionally or without its arguments.
std::optional<std::string> unknown_action_key(object action, toolset_mask on) {
  const std::span<const std::string> keys = batch_action_keys(on);
  for (auto field : action) {
    if (field.value.is_null()) continue;  // Absent, as for every argument.
    bool known = false;
    for (const std::string& k : keys) known = known || k == field.key;
    if (known) continue;
    std::string shown;
    append_json_string(shown, field.key.substr(0, 64));
    std::string list;
    for (const std::string& k : keys) list += str_cat(list.empty() ? "" : ", ", k);
    return str_cat("has ", shown, "; an action takes ", list);
  }
  return std::nullopt;
}

// Parses every step's and condition's arguments into the plan's own
// parser, once, as one array: the steps then read them as objects however
// many there are, with no parse per step. false: they did not parse (they
// were minified from a parsed document, so they always do).
bool parse_arguments_once(batch_plan& plan) {
  std::string all = "[";
  for (const batch_step& step : plan.steps) {
    if (all.size() > 1) all += ',';
    all += step.arguments_json;
    all += ',';
    all += step.condition ? std::string_view(step.condition->arguments_json) : "null";
  }
  all += ']';
  plan.arguments_doc = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::array parsed;
  if (plan.arguments_doc->parse(all).get(parsed) != simdjson::SUCCESS) return false;
  auto it = parsed.begin();
  for (batch_step& step : plan.steps) {
    step.arguments = (*it).get_object().value_unsafe();
    ++it;
    if (step.condition) step.condition->arguments = (*it).get_object().value_unsafe();
    ++it;
  }
  return true;
}

}  // namespace

std::span<const condition_kind> all_conditions() { return kConditions; }

std::string_view condition_name(condition_kind k) {
  switch (k) {
    case condition_kind::image_present: return "image_present";
    case condition_kind::image_absent: return "image_absent";
    case condition_kind::window_exists: return "window_exists";
    case condition_kind::text_present: return "text_present";
  }
  return "?";
}

std::string_view condition_tool(condition_kind k) {
  switch (k) {
    case condition_kind::image_present:
    case condition_kind::image_absent: return "screenshot_find";
    case condition_kind::window_exists: return "list_windows";
    case condition_kind::text_present: return "find_text";
  }
  return "?";
}

result<bool> condition_holds(condition_kind k, const tool_result& probe) {
  const std::string prefix = str_cat("condition ", condition_name(k), ": ");
  if (probe.is_error) {
    std::string said;
    for (const content_block& b : probe.content) {
      if (b.type == content_block::kind::text) {
        said = b.text;
        break;
      }
    }
    return error{errc::invalid_argument,
                 str_cat(prefix, said.empty() ? std::string_view("the probe failed") : said)};
  }
  // A find carries its matches as values: nothing to parse.
  if (k != condition_kind::window_exists && probe.matches) {
    const bool any = !probe.matches->empty();
    return k == condition_kind::image_absent ? !any : any;
  }
  const std::string_view list =
      k == condition_kind::window_exists ? std::string_view("windows") : std::string_view("matches");
  simdjson::dom::parser parser;
  simdjson::dom::array found;
  if (probe.structured.empty() ||
      parser.parse(probe.structured).at_key(list).get(found) != simdjson::SUCCESS) {
    return error{errc::invalid_argument,
                 str_cat(prefix, "internal error: ", condition_tool(k), " answered no \"", list,
                         "\" array")};
  }
  const bool any = found.size() > 0;
  return k == condition_kind::image_absent ? !any : any;
}

result<batch_plan> parse_batch(object args, toolset_mask on) {
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
  plan.conditions_on = has(on, toolset::vision);
  size_t i = 0;
  for (element a : list) {
    if (!a.is_object()) return bad_action(i, "is not an object {name, arguments}");
    object o = a;
    std::string_view name;
    if (o.at_key("name").get(name) != simdjson::SUCCESS) {
      return bad_action(i, "needs a string \"name\"");
    }
    batch_step step{std::string(name), "{}", {}, {}, false};
    for (std::string_view key : {"if", "capture"}) {
      if (!plan.conditions_on && present(o, key)) {
        return bad_action(i, str_cat("\"", key, "\"", kNeedsVision));
      }
    }
    if (auto unknown = unknown_action_key(o, on)) return bad_action(i, *unknown);
    element cond;
    if (o.at_key("if").get(cond) == simdjson::SUCCESS && !cond.is_null()) {
      auto c = parse_condition(i, cond);
      if (!c) return c.take_error();
      step.condition = std::move(*c);
    }
    element capture;
    if (o.at_key("capture").get(capture) == simdjson::SUCCESS && !capture.is_null()) {
      if (!capture.is_bool()) return bad_action(i, "\"capture\": expected a boolean");
      step.capture = bool(capture);
    }
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
  if (!parse_arguments_once(plan)) {
    return error{errc::invalid_argument, "internal error: the actions' arguments did not parse"};
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
  // Without the vision toolset stop_on_error never gets here: the call was
  // refused as one with an argument computer_batch does not take
  // (known_args.h), naming the toolset.
  auto stop = arg_bool(args, "stop_on_error", true);
  if (!stop) return stop.err();
  plan.stop_on_error = *stop;
  return plan;
}

bool capture_after_step(const batch_plan& plan, size_t i, const step_outcome& step, bool last) {
  if (step.skipped()) return last && plan.screenshot == batch_screenshot::final;
  if (plan.steps[i].capture) return true;
  switch (plan.screenshot) {
    case batch_screenshot::none: return false;
    case batch_screenshot::each: return step.name != "screenshot";
    case batch_screenshot::final:
      return last && !(step.name == "screenshot" && !step.result.is_error);
  }
  return false;
}

tool_result batch_result(const batch_plan& plan, std::vector<step_outcome> steps) {
  size_t succeeded = 0, failed = 0, by_condition = 0;
  std::optional<size_t> stopped_at;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].result.is_error) {
      ++failed;
      // Only a batch that stops on errors stops at one (its last step).
      if (plan.stop_on_error && !stopped_at) stopped_at = i;
    } else if (steps[i].skipped()) {
      ++by_condition;
    } else {
      ++succeeded;
    }
  }
  tool_result r;
  r.is_error = failed > 0;
  std::string summary;
  json_writer j(summary);
  j.begin_object().key("batch").begin_object();
  j.key("total").number(int64_t(plan.steps.size()));
  j.key("succeeded").number(int64_t(succeeded));
  j.key("failed").number(int64_t(failed));
  j.key("skipped").number(int64_t(plan.steps.size() - steps.size()));
  if (plan.conditions_on) j.key("skipped_by_condition").number(int64_t(by_condition));
  j.key("stopped_at");
  if (stopped_at) {
    j.number(int64_t(*stopped_at));
  } else {
    j.null();
  }
  j.key("steps").begin_array();
  for (size_t i = 0; i < steps.size(); ++i) {
    j.begin_object().key("index").number(int64_t(i)).key("name").string(steps[i].name);
    j.key("ok").boolean(!steps[i].result.is_error);
    if (steps[i].skipped()) j.key("skipped").string("condition");
    if (steps[i].condition && i < plan.steps.size() && plan.steps[i].condition) {
      j.key("condition").begin_object();
      j.key(condition_name(plan.steps[i].condition->kind)).boolean(*steps[i].condition);
      j.end_object();
    }
    j.end_object();
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
