// Tests for src/toolsets/computer/batch.h: computer_batch's checks before anything runs
// (the vision toolset's stop_on_error, capture and if among them), how a
// condition's probe answer decides it, when captures are appended, and the
// shape of its result.
#include "toolsets/computer/batch.h"

#include <simdjson.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

simdjson::dom::parser g_parser;

const cu::toolset_mask kVision = cu::kDefaultToolsets | cu::mask_of(cu::toolset::vision);

cu::result<cu::batch_plan> parse(const std::string& json,
                                 cu::toolset_mask on = cu::kDefaultToolsets) {
  return cu::parse_batch(g_parser.parse(json).get_object().value(), on);
}

std::string error_of(const std::string& json, cu::toolset_mask on = cu::kDefaultToolsets) {
  auto r = parse(json, on);
  REQUIRE_FALSE(r.ok());
  return r.err().message;
}

cu::step_outcome step(std::string name, bool ok, std::string text) {
  cu::tool_result r = cu::tool_result::text(std::move(text), !ok);
  return cu::step_outcome{std::move(name), std::move(r), std::nullopt, std::nullopt};
}

cu::batch_step plan_step(std::string name) {
  return cu::batch_step{std::move(name), "{}", std::nullopt, std::nullopt, false};
}

// A probe's answer with this structuredContent.
cu::tool_result probe_answer(std::string structured) {
  cu::tool_result r = cu::tool_result::json(std::move(structured));
  return r;
}

// {"actions":[actions]extra}, built by appending (GCC 12 at -O3 reports a
// false -Wrestrict on a + chain of literals and strings).
std::string batch_of(const std::string& actions, std::string_view extra = {}) {
  std::string s = R"({"actions":[)";
  s.append(actions).append("]").append(extra).append("}");
  return s;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a batch's steps keep their names and arguments; defaults apply") {
  auto r = parse(R"({"actions":[{"name":"left_click","arguments":{"coordinate":[1, 2]}},)"
                 R"({"name":"cursor_position"},{"name":"wait","arguments":null}]})");
  REQUIRE(r.ok());
  REQUIRE(r->steps.size() == 3);
  CHECK(r->steps[0].name == "left_click");
  CHECK(r->steps[0].arguments_json == R"({"coordinate":[1,2]})");
  CHECK(r->steps[1].arguments_json == "{}");
  CHECK(r->steps[2].arguments_json == "{}");
  CHECK(r->delay_ms == 0);
  CHECK(r->screenshot == cu::batch_screenshot::none);

  auto s = parse(R"({"actions":[{"name":"x"}],"delay_ms":250,"screenshot":"each"})");
  REQUIRE(s.ok());
  CHECK(s->delay_ms == 250);
  CHECK(s->screenshot == cu::batch_screenshot::each);
  CHECK(parse(R"({"actions":[{"name":"x"}],"screenshot":"final"})")->screenshot ==
        cu::batch_screenshot::final);
}

TEST_CASE("what concerns one step is left to that step: a nested batch, arguments that are not an object") {
  auto r = parse(R"({"actions":[{"name":"computer_batch","arguments":{"actions":[]}},)"
                 R"({"name":"wait","arguments":[1]},{"name":"no_such_tool"},{"name":"wait"}]})");
  REQUIRE(r.ok());
  REQUIRE(r->steps.size() == 4);
  REQUIRE(r->steps[0].refusal);
  CHECK(r->steps[0].refusal->find("cannot run inside a computer_batch") != std::string::npos);
  REQUIRE(r->steps[1].refusal);
  CHECK(r->steps[1].refusal->find("\"arguments\": expected an object") != std::string::npos);
  // An unknown name fails when its step runs, like the same tools/call.
  CHECK_FALSE(r->steps[2].refusal);
  CHECK_FALSE(r->steps[3].refusal);
}

TEST_CASE("a malformed batch is refused before anything runs, naming what is wrong") {
  CHECK(error_of(R"({})").find("\"actions\"") != std::string::npos);
  CHECK(error_of(R"({"actions":{}})").find("\"actions\"") != std::string::npos);
  CHECK(error_of(R"({"actions":[]})").find("empty") != std::string::npos);
  CHECK(error_of(R"({"actions":[1]})").find("action 0 is not an object") != std::string::npos);
  CHECK(error_of(R"({"actions":[{"arguments":{}}]})").find("action 0 needs a string") !=
        std::string::npos);
  CHECK(error_of(R"({"actions":[{"name":"x"}],"delay_ms":-1})").find("delay_ms") !=
        std::string::npos);
  CHECK(error_of(R"({"actions":[{"name":"x"}],"delay_ms":10001})").find("delay_ms") !=
        std::string::npos);
  CHECK(error_of(R"({"actions":[{"name":"x"}],"screenshot":"all"})").find("screenshot") !=
        std::string::npos);
  std::string many = R"({"actions":[)";
  for (size_t i = 0; i <= cu::kMaxBatchSteps; ++i) many += std::string(i ? "," : "") + R"({"name":"x"})";
  many += "]}";
  CHECK(error_of(many).find("at most 100") != std::string::npos);
}

TEST_CASE("captures follow steps as the screenshot mode says") {
  cu::batch_plan plan;
  plan.steps = {plan_step("left_click"), plan_step("screenshot")};
  auto click = step("left_click", true, "clicked");
  auto shot = step("screenshot", true, "");
  auto failed_shot = step("screenshot", false, "no X");
  plan.screenshot = cu::batch_screenshot::none;
  CHECK_FALSE(cu::capture_after_step(plan, 0, click, true));
  plan.screenshot = cu::batch_screenshot::each;
  CHECK(cu::capture_after_step(plan, 0, click, false));
  CHECK(cu::capture_after_step(plan, 0, click, true));
  CHECK_FALSE(cu::capture_after_step(plan, 1, shot, false));
  plan.screenshot = cu::batch_screenshot::final;
  CHECK_FALSE(cu::capture_after_step(plan, 0, click, false));
  CHECK(cu::capture_after_step(plan, 0, click, true));
  CHECK_FALSE(cu::capture_after_step(plan, 1, shot, true));
  CHECK(cu::capture_after_step(plan, 1, failed_shot, true));
}

TEST_CASE("a step's own capture asks for one whatever the mode; a skipped step gets none of its own") {
  cu::batch_plan plan;
  plan.steps = {plan_step("left_click"), plan_step("screenshot")};
  plan.steps[0].capture = true;
  plan.steps[1].capture = true;
  auto click = step("left_click", true, "clicked");
  auto shot = step("screenshot", true, "");
  auto skipped = step("left_click", true, "");
  skipped.result = cu::tool_result{};
  skipped.condition = false;
  for (auto mode : {cu::batch_screenshot::none, cu::batch_screenshot::final,
                    cu::batch_screenshot::each}) {
    plan.screenshot = mode;
    CHECK(cu::capture_after_step(plan, 0, click, false));
    CHECK(cu::capture_after_step(plan, 1, shot, false));
    CHECK_FALSE(cu::capture_after_step(plan, 0, skipped, false));
    // Only "final" brings one after a last step that was skipped: the
    // screen as the batch leaves it.
    CHECK(cu::capture_after_step(plan, 0, skipped, true) ==
          (mode == cu::batch_screenshot::final));
  }
}

TEST_CASE("a batch that ran to the end: summary first, then tagged step blocks") {
  cu::batch_plan plan;
  plan.steps = {plan_step("mouse_move"), plan_step("cursor_position")};
  std::vector<cu::step_outcome> steps;
  steps.push_back(step("mouse_move", true, "moved to (1, 2)"));
  steps.push_back(step("cursor_position", true, "[1, 2]"));
  steps.back().capture = cu::tool_result{};
  steps.back().capture->add_png(cu::byte_buffer{});
  cu::tool_result r = cu::batch_result(plan, std::move(steps));
  CHECK_FALSE(r.is_error);
  std::string summary =
      R"({"batch":{"total":2,"succeeded":2,"failed":0,"skipped":0,"stopped_at":null,)"
      R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
      R"({"index":1,"name":"cursor_position","ok":true}]}})";
  CHECK(r.structured == summary);
  REQUIRE(r.content.size() == 4);
  CHECK(r.content[0].text == summary);
  CHECK(r.content[1].text == "[step 0 \u00b7 mouse_move] moved to (1, 2)");
  CHECK(r.content[2].text == "[step 1 \u00b7 cursor_position] [1, 2]");
  CHECK(r.content[3].type == cu::content_block::kind::image);
}

TEST_CASE("a batch stopped by a failing step reports where, and what was skipped") {
  cu::batch_plan plan;
  plan.steps = {plan_step("key"), plan_step("left_click"), plan_step("key"), plan_step("key")};
  std::vector<cu::step_outcome> steps;
  steps.push_back(step("key", true, "pressed a"));
  steps.push_back(step("left_click", false, "Invalid argument \"coordinate\""));
  cu::tool_result r = cu::batch_result(plan, std::move(steps));
  CHECK(r.is_error);
  CHECK(r.structured ==
        R"({"batch":{"total":4,"succeeded":1,"failed":1,"skipped":2,"stopped_at":1,)"
        R"("steps":[{"index":0,"name":"key","ok":true},)"
        R"({"index":1,"name":"left_click","ok":false}]}})");
  REQUIRE(r.content.size() == 3);
  CHECK(r.content[2].text == "[step 1 \u00b7 left_click] Invalid argument \"coordinate\"");
}

// stop_on_error without the vision toolset is refused with the call's
// other arguments computer_batch does not take (test_known_args.cpp).
TEST_CASE("an action's capture and if are refused without the vision toolset, naming it") {
  const std::string a = R"({"name":"key","arguments":{"text":"a"}})";
  const std::vector<std::string> cases = {
      batch_of(a + R"(,{"name":"key","capture":true})"),
      batch_of(R"({"name":"key","if":{"window_exists":{"title":"x"}}})"),
  };
  for (const std::string& json : cases) {
    CAPTURE(json);
    const std::string e = error_of(json);
    CHECK(contains(e, "needs the vision toolset"));
    CHECK(contains(e, "CU_TOOLSETS=vision"));
    CHECK(parse(json, kVision).ok());
  }
  // null is absent, as for every argument.
  CHECK(parse(R"({"actions":[{"name":"key","if":null,"capture":null}],"stop_on_error":null})").ok());
  auto r = parse(R"({"actions":[{"name":"key"}]})");
  REQUIRE(r.ok());
  CHECK(r->stop_on_error);
  CHECK_FALSE(r->conditions_on);
}

TEST_CASE("with the vision toolset, a step keeps its condition, its capture and the batch its stop_on_error") {
  auto r = parse(R"({"actions":[{"name":"key","arguments":{"text":"a"},)"
                 R"("if":{"image_present":{"template_region":[1, 2, 30, 40]}},"capture":true},)"
                 R"({"name":"key","if":{"window_exists":{}}},{"name":"wait"}],"stop_on_error":false})",
                 kVision);
  REQUIRE(r.ok());
  CHECK_FALSE(r->stop_on_error);
  CHECK(r->conditions_on);
  REQUIRE(r->steps.size() == 3);
  REQUIRE(r->steps[0].condition);
  CHECK(r->steps[0].condition->kind == cu::condition_kind::image_present);
  CHECK(r->steps[0].condition->arguments_json == R"({"template_region":[1,2,30,40]})");
  CHECK(r->steps[0].capture);
  REQUIRE(r->steps[1].condition);
  CHECK(r->steps[1].condition->kind == cu::condition_kind::window_exists);
  CHECK(r->steps[1].condition->arguments_json == "{}");
  CHECK_FALSE(r->steps[1].capture);
  CHECK_FALSE(r->steps[2].condition);
  for (auto k : {cu::condition_kind::image_present, cu::condition_kind::image_absent,
                 cu::condition_kind::window_exists, cu::condition_kind::text_present}) {
    std::string action = R"({"name":"key","if":{")";
    action.append(cu::condition_name(k)).append(R"(":{}}})");
    const std::string json = batch_of(action);
    auto p = parse(json, kVision);
    REQUIRE(p.ok());
    CHECK(p->steps[0].condition->kind == k);
  }
  CHECK(cu::condition_tool(cu::condition_kind::image_absent) == "screenshot_find");
  CHECK(cu::condition_tool(cu::condition_kind::window_exists) == "list_windows");
  CHECK(cu::condition_tool(cu::condition_kind::text_present) == "find_text");
}

TEST_CASE("a malformed if or capture is refused before anything runs, naming the action") {
  struct bad {
    const char* action;
    const char* says;
  };
  for (const bad& b : {bad{R"({"name":"key","if":5})", "exactly one condition"},
                       bad{R"({"name":"key","if":[]})", "exactly one condition"},
                       bad{R"({"name":"key","if":{}})", "got 0 conditions"},
                       bad{R"({"name":"key","if":{"image_present":{},"window_exists":{}}})",
                           "got 2 conditions"},
                       bad{R"({"name":"key","if":{"image_here":{}}})",
                           "unknown condition \"image_here\""},
                       bad{R"({"name":"key","if":{"window_exists":"xterm"}})",
                           "\"window_exists\" takes an object of list_windows's arguments"},
                       bad{R"({"name":"key","if":{"image_absent":null}})",
                           "\"image_absent\" takes an object"},
                       bad{R"({"name":"key","capture":"yes"})", "\"capture\": expected a boolean"}}) {
    std::string actions = R"({"name":"wait"},)";
    actions += b.action;
    const std::string json = batch_of(actions);
    CAPTURE(json);
    const std::string e = error_of(json, kVision);
    CHECK(contains(e, "action 1"));
    CHECK(contains(e, b.says));
  }
  CHECK(contains(error_of(R"({"actions":[{"name":"wait"}],"stop_on_error":"no"})", kVision),
                 "\"stop_on_error\""));
}

TEST_CASE("an action with a key it does not take refuses the batch before anything runs") {
  // "args" for "arguments" would run the step without its arguments, and
  // "iff" for "if" would run it unconditionally.
  CHECK(error_of(batch_of(R"({"name":"wait"},{"name":"key","args":{"text":"a"}})")) ==
        "Invalid argument \"actions\": action 1 has \"args\"; an action takes name, arguments");
  CHECK(error_of(batch_of(R"({"name":"key","arguments":{"text":"a"},"iff":{}})"), kVision) ==
        "Invalid argument \"actions\": action 0 has \"iff\"; an action takes name, arguments,"
        " capture, if");
  CHECK(parse(batch_of(R"({"name":"key","arguments":{"text":"a"}})")).ok());
}

TEST_CASE("a condition holds as its probe's structuredContent says; a failed probe fails it") {
  using cu::condition_kind;
  const cu::tool_result found = probe_answer(R"({"matches":[{"x":1}],"threshold":0.9})");
  const cu::tool_result none = probe_answer(R"({"matches":[],"threshold":0.9})");
  CHECK(*cu::condition_holds(condition_kind::image_present, found));
  CHECK_FALSE(*cu::condition_holds(condition_kind::image_present, none));
  CHECK_FALSE(*cu::condition_holds(condition_kind::image_absent, found));
  CHECK(*cu::condition_holds(condition_kind::image_absent, none));
  CHECK(*cu::condition_holds(condition_kind::text_present, found));
  CHECK_FALSE(*cu::condition_holds(condition_kind::text_present, none));
  CHECK(*cu::condition_holds(condition_kind::window_exists,
                             probe_answer(R"({"windows":[{"id":"0x1"}],"active":null})")));
  CHECK_FALSE(*cu::condition_holds(condition_kind::window_exists,
                                   probe_answer(R"({"windows":[],"active":null})")));

  auto failed = cu::condition_holds(condition_kind::image_present,
                                    cu::tool_result::failure("screenshot_find needs exactly one of"));
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.err().message == "condition image_present: screenshot_find needs exactly one of");
  auto odd = cu::condition_holds(condition_kind::window_exists, found);
  REQUIRE_FALSE(odd.ok());
  CHECK(contains(odd.err().message, "condition window_exists: "));
  CHECK(contains(odd.err().message, "\"windows\""));
}

TEST_CASE("with stop_on_error false every step is reached; failures are counted, none stops it") {
  cu::batch_plan plan;
  plan.stop_on_error = false;
  plan.conditions_on = true;
  plan.steps = {plan_step("key"), plan_step("left_click"), plan_step("key"), plan_step("key")};
  plan.steps[2].condition = cu::batch_condition{cu::condition_kind::image_present, "{}"};
  plan.steps[3].condition = cu::batch_condition{cu::condition_kind::window_exists, "{}"};
  std::vector<cu::step_outcome> steps;
  steps.push_back(step("key", true, "pressed a"));
  steps.push_back(step("left_click", false, "Invalid argument \"coordinate\""));
  steps.push_back(step("key", true, ""));
  steps.back().result = cu::tool_result{};
  steps.back().condition = false;
  steps.push_back(step("key", true, "pressed b"));
  steps.back().condition = true;
  cu::tool_result r = cu::batch_result(plan, std::move(steps));
  CHECK(r.is_error);
  CHECK(r.structured ==
        R"({"batch":{"total":4,"succeeded":2,"failed":1,"skipped":0,"skipped_by_condition":1,)"
        R"("stopped_at":null,"steps":[{"index":0,"name":"key","ok":true},)"
        R"({"index":1,"name":"left_click","ok":false},)"
        R"({"index":2,"name":"key","ok":true,"skipped":"condition","condition":{"image_present":false}},)"
        R"({"index":3,"name":"key","ok":true,"condition":{"window_exists":true}}]}})");
  // The skipped step has no blocks.
  REQUIRE(r.content.size() == 4);
  CHECK(r.content[1].text == "[step 0 \u00b7 key] pressed a");
  CHECK(r.content[2].text == "[step 1 \u00b7 left_click] Invalid argument \"coordinate\"");
  CHECK(r.content[3].text == "[step 3 \u00b7 key] pressed b");
}

TEST_CASE("a batch whose steps all ran or were skipped is no error; a failed probe stops it by default") {
  cu::batch_plan plan;
  plan.conditions_on = true;
  plan.steps = {plan_step("key"), plan_step("key"), plan_step("key")};
  plan.steps[0].condition = cu::batch_condition{cu::condition_kind::image_absent, "{}"};
  plan.steps[1].condition = cu::batch_condition{cu::condition_kind::image_present, "{}"};
  std::vector<cu::step_outcome> steps;
  steps.push_back(step("key", true, ""));
  steps.back().result = cu::tool_result{};
  steps.back().condition = false;
  steps.push_back(step("key", false, "condition image_present: screenshot_find needs"));
  cu::tool_result r = cu::batch_result(plan, std::move(steps));
  CHECK(r.is_error);
  CHECK(r.structured ==
        R"({"batch":{"total":3,"succeeded":0,"failed":1,"skipped":1,"skipped_by_condition":1,)"
        R"("stopped_at":1,"steps":[{"index":0,"name":"key","ok":true,"skipped":"condition",)"
        R"("condition":{"image_absent":false}},{"index":1,"name":"key","ok":false}]}})");

  std::vector<cu::step_outcome> all_skipped;
  for (int i = 0; i < 3; ++i) {
    all_skipped.push_back(step("key", true, ""));
    all_skipped.back().result = cu::tool_result{};
    all_skipped.back().condition = false;
  }
  plan.steps[2].condition = cu::batch_condition{cu::condition_kind::text_present, "{}"};
  cu::tool_result s = cu::batch_result(plan, std::move(all_skipped));
  CHECK_FALSE(s.is_error);
  CHECK(s.content.size() == 1);
}
