// Cancelling a computer_batch (notifications/cancelled): during a wait step,
// during a hold_key step and while it still waits for the input actor, the
// batch is never answered, runs no further step and leaves nothing pressed.
#include <catch2/catch.hpp>

#include "support/batch.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"

using namespace cu::test;

TEST_CASE("a batch cancelled during its wait step is never answered and runs no further step") {
  session t;
  t.s.send(tool_call("\"cb\"", "computer_batch",
                     batch_args({key_step("a"), act("wait", R"({"duration":2})"), key_step("b")})));
  REQUIRE(wait_pressed(t.probe, "a"));
  const int64_t cancelled_at = now_ms();
  t.s.send(cancel_note("\"cb\""));
  // Another caller's input runs at once: the batch let go of the actor
  // without waiting out its step.
  auto c = t.s.call_tool("key", R"({"text":"c"})");
  CHECK_FALSE(is_error(*c));
  CHECK(now_ms() - cancelled_at < 1000);
  // Past the time b would have been pressed: no response and no b.
  CHECK(t.s.read_response("\"cb\"", 2500) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "ac");
  check_nothing_pressed(t.probe);
  CHECK(t.s.request("ping")->root["result"].is_object());
}

TEST_CASE("a batch cancelled during a hold_key step releases the key at once") {
  session t;
  t.s.send(tool_call("\"hb\"", "computer_batch",
                     batch_args({act("hold_key", R"({"text":"shift","duration":5})"),
                                 key_step("b")})));
  REQUIRE(wait_key_down(t.probe, {kXK_Shift_L, kXK_Shift_R}, 3000));
  const int64_t cancelled_at = now_ms();
  t.s.send(cancel_note("\"hb\""));
  // An input call answered after the cancel sees the keys already up.
  auto pos = t.s.call_tool("cursor_position");
  CHECK_FALSE(is_error(*pos));
  check_nothing_pressed(t.probe);
  CHECK(now_ms() - cancelled_at < 2000);
  CHECK(t.s.read_response("\"hb\"", 1000) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  auto k = keys(events);
  REQUIRE(k.size() == 2);
  CHECK(k[0].type == XCB_KEY_PRESS);
  CHECK(k[1].type == XCB_KEY_RELEASE);
  CHECK(pressed_letters(t.probe, events) == "S");
  check_nothing_pressed(t.probe);
}

TEST_CASE("a batch cancelled while it waits for the actor is never answered and does nothing") {
  session t;
  // The first batch holds the actor for 1.5 s; the second, queued behind it,
  // is cancelled before it starts.
  t.s.send(tool_call("\"first\"", "computer_batch",
                     batch_args({key_step("a"), act("hold_key", R"({"text":"shift","duration":1.5})")})));
  REQUIRE(wait_pressed(t.probe, "a"));
  t.s.send(tool_call("\"second\"", "computer_batch", batch_args({key_step("b"), key_step("b")})));
  t.s.send(cancel_note("\"second\""));
  auto first = t.s.read_response("\"first\"", 10000);
  REQUIRE(first);
  CHECK_FALSE(is_error(*first));
  CHECK(t.s.read_response("\"second\"", 1000) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "aS");
  check_nothing_pressed(t.probe);
}
