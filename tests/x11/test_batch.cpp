// computer_batch against the real binary on a private Xvfb: the exact
// summary and step blocks of a batch that ran, where one stops on a failing
// step and what it then leaves undone, what is refused up front, the
// screenshot "each" and "final" images, delay_ms between steps, and a wait
// step inside a batch; checked on the pipe and as the events a probe window
// received.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "support/batch.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"

using namespace cu::test;

TEST_CASE("an all-ok batch: the exact summary, prefixed step blocks and the events in order") {
  session t;
  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("mouse_move", R"({"coordinate":[100,200]})"),
                                     act("left_click", R"({"coordinate":[300,400]})"),
                                     act("cursor_position")}));
  INFO(r->text.substr(0, 1500));
  CHECK_FALSE(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":3,"succeeded":3,"failed":0,"skipped":0,"stopped_at":null,)"
                R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
                R"({"index":1,"name":"left_click","ok":true},)"
                R"({"index":2,"name":"cursor_position","ok":true}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "mouse_move") + "moved to " + at(100, 200));
  CHECK(text_of(*r, 2) == step_prefix(1, "left_click") + "left_click at " + at(300, 400));
  const std::string pos = text_of(*r, 3);
  const std::string prefix = step_prefix(2, "cursor_position");
  REQUIRE(pos.rfind(prefix, 0) == 0);
  CHECK(int_array(pos.substr(prefix.size())) == std::vector<int64_t>{300, 400});

  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(keys(events).empty());
  // The move's motion ends at its point, before the click.
  size_t first_button = events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == XCB_BUTTON_PRESS) {
      first_button = i;
      break;
    }
  }
  REQUIRE(first_button < events.size());
  bool reached_move_point = false;
  for (size_t i = 0; i < first_button; ++i) {
    reached_move_point = reached_move_point || (events[i].type == XCB_MOTION_NOTIFY &&
                                                events[i].root_x == device_x(100) &&
                                                events[i].root_y == device_y(200));
  }
  CHECK(reached_move_point);
  auto b = buttons(events);
  REQUIRE(b.size() == 2);
  CHECK(b[0].type == XCB_BUTTON_PRESS);
  CHECK(b[0].detail == 1);
  CHECK(b[0].root_x == device_x(300));
  CHECK(b[0].root_y == device_y(400));
  CHECK(b[1].type == XCB_BUTTON_RELEASE);
  check_nothing_pressed(t.probe);
}

TEST_CASE("a batch stops at a step with out-of-range coordinates and runs nothing after it") {
  session t;
  // The same step on its own, for the exact error text.
  auto alone = t.s.call_tool("left_click", R"({"coordinate":[5000,5000]})");
  REQUIRE(is_error(*alone));
  t.probe.take();

  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("mouse_move", R"({"coordinate":[10,10]})"),
                                     act("left_click", R"({"coordinate":[5000,5000]})"),
                                     key_step("a"),
                                     act("left_click", R"({"coordinate":[50,50]})")}));
  INFO(r->text.substr(0, 1500));
  CHECK(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":4,"succeeded":1,"failed":1,"skipped":2,"stopped_at":1,)"
                R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
                R"({"index":1,"name":"left_click","ok":false}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "mouse_move") + "moved to " + at(10, 10));
  CHECK(text_of(*r, 2) == step_prefix(1, "left_click") + text_of(*alone));

  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(keys(events).empty());
  CHECK(buttons(events).empty());
  CHECK(t.probe.pointer() == std::pair{device_x(10), device_y(10)});
  check_nothing_pressed(t.probe);
}

TEST_CASE("a batch stops at an unknown tool, which is not rejected up front") {
  session t;
  auto alone = t.s.call_tool("frobnicate");
  REQUIRE(is_error(*alone));

  auto r = t.s.call_tool("computer_batch",
                         batch_args({key_step("a"), act("frobnicate", "{}"), key_step("b")}));
  INFO(r->text.substr(0, 1500));
  CHECK(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":3,"succeeded":1,"failed":1,"skipped":1,"stopped_at":1,)"
                R"("steps":[{"index":0,"name":"key","ok":true},)"
                R"({"index":1,"name":"frobnicate","ok":false}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "key") + "pressed a");
  CHECK(text_of(*r, 2) == step_prefix(1, "frobnicate") + text_of(*alone));
  CHECK(text_of(*r, 2).find("frobnicate", step_prefix(1, "frobnicate").size()) != std::string::npos);

  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "a");
  CHECK(keys(events).size() == 2);
  check_nothing_pressed(t.probe);
}

TEST_CASE("a nested batch or a step's bad arguments fail that step, as in the reference server") {
  // Only a malformed actions list is refused as a whole; what concerns one
  // step stops the batch at that step, with the usual summary first.
  session t;
  const std::string ka = key_step("a");
  const std::string nested = act("computer_batch", "{\"actions\":[" + ka + "]}");

  auto first = t.s.call_tool("computer_batch", batch_args({nested, ka}));
  INFO(first->text.substr(0, 1500));
  CHECK(is_error(*first));
  check_summary(*first,
                R"({"batch":{"total":2,"succeeded":0,"failed":1,"skipped":1,"stopped_at":0,)"
                R"("steps":[{"index":0,"name":"computer_batch","ok":false}]}})");
  CHECK(block_types(*first) == std::vector<std::string>{"text", "text"});
  CHECK(text_of(*first, 1).rfind(step_prefix(0, "computer_batch"), 0) == 0);
  CHECK_THAT(text_of(*first, 1), Catch::Contains("cannot run inside a computer_batch"));
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(events.empty());

  struct step_case {
    std::string bad;
    const char* name;
    const char* says;
  };
  for (const step_case& c : {step_case{nested, "computer_batch", "cannot run inside"},
                             step_case{R"({"name":"key","arguments":[1]})", "key", "\"arguments\""},
                             step_case{R"({"name":"key","arguments":"a"})", "key", "\"arguments\""},
                             step_case{R"({"name":"key","arguments":{"text":5}})", "key", "\"text\""}}) {
    INFO(c.bad);
    auto r = t.s.call_tool("computer_batch", batch_args({ka, c.bad, key_step("b")}));
    INFO(r->text.substr(0, 1500));
    CHECK(is_error(*r));
    check_summary(*r, std::string(R"({"batch":{"total":3,"succeeded":1,"failed":1,"skipped":1,"stopped_at":1,)"
                                  R"("steps":[{"index":0,"name":"key","ok":true},{"index":1,"name":")") +
                          c.name + R"(","ok":false}]}})");
    CHECK(text_of(*r, 2).rfind(step_prefix(1, c.name), 0) == 0);
    CHECK_THAT(text_of(*r, 2), Catch::Contains(c.says));
    events = t.probe.take();
    INFO(describe(events));
    CHECK(pressed_letters(t.probe, events) == "a");
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("a batch rejected up front changes nothing") {
  session t;
  const std::string ka = key_step("a");
  const std::string move = act("mouse_move", R"({"coordinate":[700,500]})");
  std::vector<std::string> too_long(101, ka);
  struct bad {
    std::string args;
    const char* names;  // A word the message must contain.
  };
  const bad cases[] = {
      {R"({"actions":[]})", "actions"},
      {R"({})", "actions"},
      {R"({"actions":"key a"})", "actions"},
      {R"({"actions":{"name":"key"}})", "actions"},
      {"{\"actions\":" + json_array(too_long) + "}", "actions"},
      {batch_args({move, ka}, R"(,"delay_ms":-1)"), "delay_ms"},
      {batch_args({move, ka}, R"(,"delay_ms":10001)"), "delay_ms"},
      {batch_args({move, ka}, R"(,"delay_ms":1.5)"), "delay_ms"},
      {batch_args({move, ka}, R"(,"delay_ms":"10")"), "delay_ms"},
      {batch_args({move, ka}, R"(,"screenshot":"sometimes")"), "screenshot"},
      {batch_args({move, ka}, R"(,"screenshot":true)"), "screenshot"},
      {batch_args({move, ka}, R"(,"screenshot":"each","delay_ms":-5)"), "delay_ms"},
      {batch_args({move, ka, "42"}), "actions"},
      {batch_args({move, ka, "\"key\""}), "actions"},
      {batch_args({move, ka, "[\"key\"]"}), "actions"},
      {batch_args({move, ka, R"({"arguments":{"text":"a"}})"}), "name"},
      {batch_args({move, ka, R"({"name":5})"}), "name"},
      {batch_args({move, ka, R"({"name":null})"}), "name"},
  };
  for (const bad& b : cases) {
    INFO("computer_batch " << b.args.substr(0, 300));
    auto r = t.s.call_tool("computer_batch", b.args);
    INFO(r->text.substr(0, 600));
    CHECK(is_error(*r));
    const std::string text = text_of(*r);
    CHECK_FALSE(text.empty());
    CHECK(text.find(b.names) != std::string::npos);
    auto events = t.probe.take();
    INFO(describe(events));
    CHECK(events.empty());
    check_nothing_pressed(t.probe);
  }
  // The session is intact: the same steps in a good batch run.
  auto ok = t.s.call_tool("computer_batch", batch_args({move, ka}));
  CHECK_FALSE(is_error(*ok));
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "a");
  CHECK(t.probe.pointer() == std::pair{device_x(700), device_y(500)});
}

TEST_CASE("screenshot \"each\" adds one image after every non-screenshot step") {
  session t;
  SECTION("three input steps give three images, each after its step's text") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       key_step("a"), act("cursor_position")},
                                      R"(,"screenshot":"each")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image", "text", "image",
                                                      "text", "image"});
    CHECK(text_of(*r, 1).rfind(step_prefix(0, "mouse_move"), 0) == 0);
    CHECK(text_of(*r, 3).rfind(step_prefix(1, "key"), 0) == 0);
    CHECK(text_of(*r, 5).rfind(step_prefix(2, "cursor_position"), 0) == 0);
    CHECK(image_count(*r) == 3);
    for (size_t i : {size_t(2), size_t(4), size_t(6)}) {
      std::string_view data;
      REQUIRE(r->root["result"]["content"].at(i)["data"].get(data) == simdjson::SUCCESS);
      CHECK(decode_png_base64(data).width == 1366);
    }
    check_summary(*r,
                  R"({"batch":{"total":3,"succeeded":3,"failed":0,"skipped":0,"stopped_at":null,)"
                  R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
                  R"({"index":1,"name":"key","ok":true},)"
                  R"({"index":2,"name":"cursor_position","ok":true}]}})");
  }
  SECTION("a screenshot step brings its own image and gets no second one") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("screenshot"), act("mouse_move", R"({"coordinate":[5,5]})")},
                                      R"(,"screenshot":"each")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "image", "text", "image"});
  }
}

TEST_CASE("screenshot \"final\" adds exactly one image, after the last executed step") {
  session t;
  SECTION("after three input steps") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       key_step("a"), act("cursor_position")},
                                      R"(,"screenshot":"final")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "text", "image"});
    CHECK(image_count(*r) == 1);
  }
  SECTION("none more when the last step is a successful screenshot") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       act("screenshot")},
                                      R"(,"screenshot":"final")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image"});
  }
  SECTION("after the failing step when the batch stops early") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       act("left_click", R"({"coordinate":[1366,0]})"),
                                       key_step("a")},
                                      R"(,"screenshot":"final")"));
    INFO(r->text.substr(0, 800));
    CHECK(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "image"});
    CHECK(keys(t.probe.take()).empty());
  }
  SECTION("none with the default \"none\"") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})")},
                                      R"(,"screenshot":"none")"));
    CHECK_FALSE(is_error(*r));
    CHECK(image_count(*r) == 0);
  }
}

TEST_CASE("delay_ms pauses at least that long between steps and not after the last") {
  session t;
  const int64_t start = now_ms();
  auto r = t.s.call_tool("computer_batch",
                         batch_args({key_step("a"), key_step("b"), key_step("c")},
                                    R"(,"delay_ms":300)"));
  const int64_t elapsed = now_ms() - start;
  CHECK_FALSE(is_error(*r));
  CHECK(elapsed >= 600);
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 6);
  CHECK(pressed_letters(t.probe, k) == "abc");
  // X server time: each press at least the delay after the previous step's
  // release (milliseconds truncated, hence 299).
  CHECK(k[2].time - k[1].time >= 299);
  CHECK(k[4].time - k[3].time >= 299);

  const int64_t single = now_ms();
  auto one = t.s.call_tool("computer_batch", batch_args({key_step("a")}, R"(,"delay_ms":2000)"));
  CHECK_FALSE(is_error(*one));
  CHECK(now_ms() - single < 1500);

  auto zero = t.s.call_tool("computer_batch", batch_args({key_step("a")}, R"(,"delay_ms":0)"));
  CHECK_FALSE(is_error(*zero));
  auto limit = t.s.call_tool("computer_batch", batch_args({key_step("a")}, R"(,"delay_ms":10000)"));
  CHECK_FALSE(is_error(*limit));
  CHECK(pressed_letters(t.probe, t.probe.take()) == "aaa");
}

TEST_CASE("a wait step runs inside a batch and a batch sees the session its steps leave") {
  session t;
  const int64_t start = now_ms();
  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("wait", R"({"duration":0.3})"),
                                     act("screenshot"),
                                     act("mouse_move", R"({"coordinate":[1365,767]})")}));
  INFO(r->text.substr(0, 600));
  CHECK_FALSE(is_error(*r));
  CHECK(now_ms() - start >= 290);
  CHECK(text_of(*r, 1) == step_prefix(0, "wait") + "waited 0.3s");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image", "text"});
  CHECK(text_of(*r, 3) == step_prefix(2, "mouse_move") + "moved to " + at(1365, 767));
  CHECK(t.probe.pointer() == std::pair{device_x(1365), device_y(767)});
}
