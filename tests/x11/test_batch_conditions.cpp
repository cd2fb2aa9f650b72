// computer_batch's sequences (the vision toolset) against the real binary on
// a private Xvfb: a step's `if` taking each branch on a scene the test
// painted (image_present, image_absent) and on windows it made
// (window_exists), checked as the keys a probe window received; a probe's
// failure failing its step; stop_on_error false going past failing steps
// and the default stopping; a step's own capture; a cancel while a probe
// waits; and what is refused up front, with and without the toolset.
#include <catch2/catch.hpp>
#include <xcb/xcb.h>

#include <map>
#include <string>
#include <vector>

#include "support/batch.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kVisionOn = {{"CU_TOOLSETS", "vision"}};

// The scene: a 4 x 3 grid of blocks in distinct colours on white, at
// (400, 300) on the 1024x768 screen (image pixels are device pixels).
constexpr int kSceneX = 400, kSceneY = 300, kSceneW = 240, kSceneH = 180;
// The part of it the template is cut from, in image pixels.
constexpr int kCutX0 = 430, kCutY0 = 320, kCutX1 = 530, kCutY1 = 400;

xcb_window_t paint_scene(x_client& x) {
  xcb_window_t win = x.create_window(kSceneX, kSceneY, kSceneW, kSceneH, rgb{255, 255, 255});
  const rgb colours[] = {{200, 30, 30},  {30, 160, 40},  {20, 40, 200},  {230, 200, 20},
                         {150, 20, 170}, {20, 180, 190}, {90, 60, 20},   {250, 130, 0},
                         {0, 0, 0},      {120, 120, 120}, {250, 150, 200}, {60, 100, 60}};
  for (int i = 0; i < 12; ++i) {
    x.fill(win, 10 + (i % 4) * 57, 10 + (i / 4) * 55, 50, 48, colours[i]);
  }
  x.sync();
  return win;
}

// A window of the test's own that list_windows lists (a top-level window
// with WM_CLASS; no window manager runs), titled title.
xcb_window_t titled_window(x_client& x, const std::string& title) {
  xcb_connection_t* c = x.connection();
  xcb_window_t w = xcb_generate_id(c);
  const uint32_t values[] = {x.screen()->white_pixel};
  xcb_create_window(c, XCB_COPY_FROM_PARENT, w, x.screen()->root, 0, 700, 40, 40, 0,
                    XCB_WINDOW_CLASS_INPUT_OUTPUT, x.screen()->root_visual, XCB_CW_BACK_PIXEL,
                    values);
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                      uint32_t(title.size()), title.data());
  static constexpr char kClass[] = "cu-target\0CuTarget";
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8,
                      sizeof kClass, kClass);
  xcb_map_window(c, w);
  x.sync();
  return w;
}

// A 1024x768 Xvfb, a full-screen probe window holding the keyboard focus,
// the scene over it, and the server (env: its toolsets and settings) with
// a session from one screenshot. Keys go to the probe wherever the scene
// is, so a step's effect is the letters it saw.
struct scene_session {
  explicit scene_session(std::map<std::string, std::string> env = kVisionOn)
      : x(1024, 768), probe(x.display()), painter(x.display()), scene(paint_scene(painter)),
        s(x.display(), std::move(env)) {
    ok_call(s, "screenshot");
    probe.take();
  }
  // The scene's part as a base64 PNG (zoom's image of it).
  std::string template_png() {
    std::string region = "{\"region\":[";
    region.append(std::to_string(kCutX0)).append(",").append(std::to_string(kCutY0));
    region.append(",").append(std::to_string(kCutX1)).append(",");
    region.append(std::to_string(kCutY1)).append("]}");
    json_ptr z = ok_call(s, "zoom", region);
    std::string_view data;
    REQUIRE(z->root["result"]["content"].at(0)["data"].get(data) == simdjson::SUCCESS);
    return std::string(data);
  }
  xvfb x;
  input_probe probe;
  x_client painter;
  xcb_window_t scene;
  server_process s;
};

// A key step pressing text, run only if condition (JSON text) holds; more
// is further members (",\"capture\":true").
std::string key_if(std::string_view text, const std::string& condition,
                   std::string_view more = {}) {
  std::string s = R"({"name":"key","arguments":{"text":")";
  s.append(text).append(R"("},"if":)").append(condition).append(more).append("}");
  return s;
}

// {"NAME":ARGS}: a condition.
std::string condition(std::string_view name, const std::string& args) {
  std::string s = "{\"";
  s.append(name).append("\":").append(args).append("}");
  return s;
}

std::string template_args(const std::string& png) {
  std::string s = "{\"template\":\"";
  s.append(png).append("\"}");
  return s;
}

}  // namespace

TEST_CASE("image_present runs its step while the image is on screen; image_absent skips its "
          "step, whose key is never pressed; and the other way round once it is gone") {
  scene_session t;
  const std::string png = template_args(t.template_png());
  const std::string batch = batch_args({key_if("a", condition("image_present", png)),
                                        key_if("b", condition("image_absent", png))});

  auto r = t.s.call_tool("computer_batch", batch);
  INFO(r->text.substr(0, 1500));
  CHECK_FALSE(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":2,"succeeded":1,"failed":0,"skipped":0,)"
                R"("skipped_by_condition":1,"stopped_at":null,"steps":[)"
                R"({"index":0,"name":"key","ok":true,"condition":{"image_present":true}},)"
                R"({"index":1,"name":"key","ok":true,"skipped":"condition",)"
                R"("condition":{"image_absent":false}}]}})");
  // The probes' own answers are not in the batch's content; a skipped step
  // has no blocks.
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "key") + "pressed a");
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "a");

  // The scene goes: now the first step is skipped and the second runs.
  xcb_unmap_window(t.painter.connection(), t.scene);
  t.painter.sync();
  r = t.s.call_tool("computer_batch", batch);
  INFO(r->text.substr(0, 1500));
  CHECK_FALSE(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":2,"succeeded":1,"failed":0,"skipped":0,)"
                R"("skipped_by_condition":1,"stopped_at":null,"steps":[)"
                R"({"index":0,"name":"key","ok":true,"skipped":"condition",)"
                R"("condition":{"image_present":false}},)"
                R"({"index":1,"name":"key","ok":true,"condition":{"image_absent":true}}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(1, "key") + "pressed b");
  events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "b");
  check_nothing_pressed(t.probe);
}

TEST_CASE("window_exists runs its step when a window has the title and skips it when none has") {
  scene_session t;
  titled_window(t.painter, "cu batch target 7");
  auto r = t.s.call_tool(
      "computer_batch",
      batch_args({key_if("a", condition("window_exists", R"({"title":"batch TARGET 7"})")),
                  key_if("b", condition("window_exists", R"({"title":"no such window here"})")),
                  key_if("c", condition("window_exists", R"({"app":"CuTarget"})"))}));
  INFO(r->text.substr(0, 1500));
  CHECK_FALSE(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":3,"succeeded":2,"failed":0,"skipped":0,)"
                R"("skipped_by_condition":1,"stopped_at":null,"steps":[)"
                R"({"index":0,"name":"key","ok":true,"condition":{"window_exists":true}},)"
                R"({"index":1,"name":"key","ok":true,"skipped":"condition",)"
                R"("condition":{"window_exists":false}},)"
                R"({"index":2,"name":"key","ok":true,"condition":{"window_exists":true}}]}})");
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "ac");
  check_nothing_pressed(t.probe);
}

TEST_CASE("a probe that fails fails its step with its message prefixed by the condition") {
  scene_session t;
  // The same probe on its own, for the exact text.
  const std::string alone = error_text(t.s, "screenshot_find", "{}");
  auto r = t.s.call_tool("computer_batch",
                         batch_args({key_step("a"), key_if("b", condition("image_present", "{}")),
                                     key_step("c")}));
  INFO(r->text.substr(0, 1500));
  CHECK(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":3,"succeeded":1,"failed":1,"skipped":1,)"
                R"("skipped_by_condition":0,"stopped_at":1,"steps":[)"
                R"({"index":0,"name":"key","ok":true},{"index":1,"name":"key","ok":false}]}})");
  std::string expected = step_prefix(1, "key");
  expected.append("condition image_present: ").append(alone);
  CHECK(text_of(*r, 2) == expected);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "a");
}

TEST_CASE("stop_on_error false goes past failing steps and counts them; the default stops") {
  scene_session t;
  const std::vector<std::string> steps = {
      key_step("a"), act("left_click", R"({"coordinate":[5000,5000]})"), key_step("b"),
      key_if("c", condition("window_exists", R"({"app":""})")), key_step("c")};

  auto r = t.s.call_tool("computer_batch", batch_args(steps, R"(,"stop_on_error":false)"));
  INFO(r->text.substr(0, 1500));
  CHECK(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":5,"succeeded":3,"failed":2,"skipped":0,)"
                R"("skipped_by_condition":0,"stopped_at":null,"steps":[)"
                R"({"index":0,"name":"key","ok":true},{"index":1,"name":"left_click","ok":false},)"
                R"({"index":2,"name":"key","ok":true},{"index":3,"name":"key","ok":false},)"
                R"({"index":4,"name":"key","ok":true}]}})");
  CHECK(block_types(*r) == std::vector<std::string>(6, "text"));
  CHECK(text_of(*r, 2).rfind(step_prefix(1, "left_click"), 0) == 0);
  std::string failed_probe = step_prefix(3, "key");
  failed_probe.append("condition window_exists: ");
  CHECK_THAT(text_of(*r, 4), Catch::StartsWith(failed_probe));
  CHECK_THAT(text_of(*r, 4), Catch::Contains("\"app\""));
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "abc");

  for (std::string_view extra : {std::string_view(), std::string_view(R"(,"stop_on_error":true)")}) {
    INFO("extra: " << extra);
    r = t.s.call_tool("computer_batch", batch_args(steps, extra));
    INFO(r->text.substr(0, 1500));
    CHECK(is_error(*r));
    check_summary(*r,
                  R"({"batch":{"total":5,"succeeded":1,"failed":1,"skipped":3,)"
                  R"("skipped_by_condition":0,"stopped_at":1,"steps":[)"
                  R"({"index":0,"name":"key","ok":true},)"
                  R"({"index":1,"name":"left_click","ok":false}]}})");
    events = t.probe.take();
    INFO(describe(events));
    CHECK(pressed_letters(t.probe, events) == "a");
  }
  check_nothing_pressed(t.probe);
}

TEST_CASE("a step's capture brings exactly one image, right after that step's blocks") {
  scene_session t;
  auto r = t.s.call_tool("computer_batch",
                         batch_args({key_step("a"),
                                     act("mouse_move", R"({"coordinate":[10,10]},"capture":true)"),
                                     key_step("b")}));
  INFO(r->text.substr(0, 800));
  CHECK_FALSE(is_error(*r));
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "image", "text"});
  CHECK(text_of(*r, 2).rfind(step_prefix(1, "mouse_move"), 0) == 0);
  std::string_view data;
  REQUIRE(r->root["result"]["content"].at(3)["data"].get(data) == simdjson::SUCCESS);
  CHECK(decode_png_base64(data).width == 1024);
  CHECK(pressed_letters(t.probe, t.probe.take()) == "ab");

  // With screenshot "each" it is still one image after that step, and a
  // step skipped by its condition gets none of its own.
  r = t.s.call_tool(
      "computer_batch",
      batch_args({act("mouse_move", R"({"coordinate":[20,20]},"capture":true)"),
                  key_if("a", condition("window_exists", R"({"title":"no such window here"})"),
                         R"(,"capture":true)")},
                 R"(,"screenshot":"each")"));
  INFO(r->text.substr(0, 800));
  CHECK_FALSE(is_error(*r));
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image"});
  CHECK(pressed_letters(t.probe, t.probe.take()).empty());
}

TEST_CASE("text_present asks find_text: text that is not on the screen skips the step") {
  // (Its true branch, on an xterm's text, is in test_find_text.cpp.)
  scene_session t;
  auto r = t.s.call_tool(
      "computer_batch",
      batch_args({key_if("a", condition("text_present", R"({"text":"zq no such text xj"})"))},
                 R"(,"stop_on_error":false)"));
  INFO(r->text.substr(0, 1500));
  CHECK_FALSE(is_error(*r));
  CHECK(text_of(*r).find(R"("condition":{"text_present":false})") != std::string::npos);
  CHECK(pressed_letters(t.probe, t.probe.take()).empty());
}

TEST_CASE("a batch cancelled while a condition's probe waits is never answered and releases the "
          "actor") {
  // After input a capture waits for the screen to be quiet; with a quiet
  // period longer than the test it waits the whole CU_SCREENSHOT_DELAY, so
  // the probe after the first step is surely out when the cancel comes.
  std::map<std::string, std::string> env = kVisionOn;
  env["CU_SCREENSHOT_DELAY"] = "30";
  env["CU_SETTLE_QUIET_MS"] = "60000";
  scene_session t(env);
  const std::string png = template_args(t.template_png());
  t.s.send(tool_call_with_token(
      "\"cb\"", "computer_batch",
      batch_args({key_step("a"), key_if("b", condition("image_present", png))}), "\"pt\""));
  // Progress (once a second) says when the condition is being checked.
  const int64_t deadline = now_ms() + 10000;
  bool checking = false;
  while (!checking && now_ms() < deadline) {
    auto line = t.s.read_line(10000);
    REQUIRE(line);
    json_ptr j = parse_json(std::move(*line));
    INFO(j->text);
    REQUIRE(method_of(*j) == "notifications/progress");
    std::string_view message;
    REQUIRE(j->root["params"]["message"].get(message) == simdjson::SUCCESS);
    checking = message == "step 2 of 2: key (checking condition image_present)";
  }
  REQUIRE(checking);
  REQUIRE(wait_pressed(t.probe, "a"));
  const int64_t cancelled_at = now_ms();
  t.s.send(cancel_note("\"cb\""));
  // Another caller's input runs at once: the batch let go of the actor.
  auto c = t.s.call_tool("key", R"({"text":"c"})");
  CHECK_FALSE(is_error(*c));
  CHECK(now_ms() - cancelled_at < 2000);
  CHECK(t.s.read_response("\"cb\"", 1500) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "ac");
  check_nothing_pressed(t.probe);
  CHECK(t.s.request("ping")->root["result"].is_object());
}

TEST_CASE("if, capture and stop_on_error are refused without the vision toolset; malformed "
          "conditions are refused with it; neither runs anything") {
  const std::string a = key_step("a");
  const std::string exists = condition("window_exists", "{}");
  struct bad {
    std::string args;
    const char* says;
  };
  const bad without[] = {
      {batch_args({a}, R"(,"stop_on_error":false)"), "\"stop_on_error\" needs the vision toolset"},
      {batch_args({a, key_if("b", exists)}), "\"if\" needs the vision toolset"},
      {batch_args({a, act("key", R"({"text":"b"},"capture":true)")}),
       "\"capture\" needs the vision toolset"},
  };
  {
    scene_session t(std::map<std::string, std::string>{{"CU_TOOLSETS", "windows"}});
    for (const bad& b : without) {
      INFO(b.args);
      const std::string text = error_text(t.s, "computer_batch", b.args);
      CHECK_THAT(text, Catch::Contains(b.says));
      CHECK_THAT(text, Catch::Contains("CU_TOOLSETS=vision"));
    }
    auto events = t.probe.take();
    INFO(describe(events));
    CHECK(events.empty());
  }
  const bad with[] = {
      {batch_args({a, key_if("b", "5")}), "action 1 \"if\" takes an object with exactly one"},
      {batch_args({a, key_if("b", "{}")}), "got 0 conditions"},
      {batch_args({a, key_if("b", R"({"window_exists":{},"image_present":{}})")}),
       "got 2 conditions"},
      {batch_args({a, key_if("b", R"({"image_here":{}})")}), "unknown condition \"image_here\""},
      {batch_args({a, key_if("b", R"({"image_absent":"x.png"})")}),
       "\"image_absent\" takes an object of screenshot_find's arguments"},
      {batch_args({a, act("key", R"({"text":"b"},"capture":1)")}), "\"capture\": expected a boolean"},
      {batch_args({a}, R"(,"stop_on_error":"no")"), "\"stop_on_error\""},
  };
  scene_session t;
  for (const bad& b : with) {
    INFO(b.args);
    CHECK_THAT(error_text(t.s, "computer_batch", b.args), Catch::Contains(b.says));
  }
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(events.empty());
}
