// Tests for src/tools/batch.h: computer_batch's checks before anything runs,
// when captures are appended, and the shape of its result.
#include "tools/batch.h"

#include <simdjson.h>

#include <catch2/catch.hpp>
#include <string>

namespace {

simdjson::dom::parser g_parser;

cu::result<cu::batch_plan> parse(const std::string& json) {
  return cu::parse_batch(g_parser.parse(json).get_object().value());
}

std::string error_of(const std::string& json) {
  auto r = parse(json);
  REQUIRE_FALSE(r.ok());
  return r.err().message;
}

cu::step_outcome step(std::string name, bool ok, std::string text) {
  cu::tool_result r = cu::tool_result::text(std::move(text), !ok);
  return cu::step_outcome{std::move(name), std::move(r), std::nullopt};
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
  auto click = step("left_click", true, "clicked");
  auto shot = step("screenshot", true, "");
  auto failed_shot = step("screenshot", false, "no X");
  plan.screenshot = cu::batch_screenshot::none;
  CHECK_FALSE(cu::capture_after_step(plan, click, true));
  plan.screenshot = cu::batch_screenshot::each;
  CHECK(cu::capture_after_step(plan, click, false));
  CHECK(cu::capture_after_step(plan, click, true));
  CHECK_FALSE(cu::capture_after_step(plan, shot, false));
  plan.screenshot = cu::batch_screenshot::final;
  CHECK_FALSE(cu::capture_after_step(plan, click, false));
  CHECK(cu::capture_after_step(plan, click, true));
  CHECK_FALSE(cu::capture_after_step(plan, shot, true));
  CHECK(cu::capture_after_step(plan, failed_shot, true));
}

TEST_CASE("a batch that ran to the end: summary first, then tagged step blocks") {
  cu::batch_plan plan;
  plan.steps = {{"mouse_move", "{}", {}}, {"cursor_position", "{}", {}}};
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
  plan.steps = {{"key", "{}", {}}, {"left_click", "{}", {}}, {"key", "{}", {}}, {"key", "{}", {}}};
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
