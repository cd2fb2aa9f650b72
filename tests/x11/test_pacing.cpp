// Input paced by what the application has taken (docs/input.md, "Pacing"):
// input that follows input waits until the screen has been quiet for the
// pacing window since it, a longer one after typed text, at most the bound;
// a scroll's wheel clicks go a window apart; a cancellation meanwhile sends
// nothing; CU_PACE_QUIET_MS=0 turns it off. Gaps are read from the X server's own event timestamps
// (milliseconds, one clock), never from the test's clock.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "support/batch.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"

using namespace cu::test;

namespace {

// A window of its own connection that changes on screen every 10 ms until
// stopped: an application still drawing its answer.
class drawing {
 public:
  explicit drawing(const std::string& display) : client_(display) {
    window_ = client_.create_window(1700, 900, 100, 100, {0, 0, 0});
    client_.sync();
    thread_ = std::thread([this] {
      for (uint8_t n = 0; !stop_.load(); ++n) {
        client_.fill(window_, 0, 0, 100, 100, {n, uint8_t(255 - n), 0});
        client_.sync();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  ~drawing() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  x_client client_;
  xcb_window_t window_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The gap, in server milliseconds, from event `from` to event `to`.
int64_t gap(const input_event& from, const input_event& to) {
  return int64_t(to.time) - int64_t(from.time);
}

// The gap, in server milliseconds, from the last key of a typed "ab" to the
// Return after it, sent as one batch.
int64_t gap_after_text(session& t) {
  t.probe.clear();
  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("type", R"({"text":"ab"})"), key_step("Return")}));
  REQUIRE_FALSE(is_error(*r));
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 6);  // a, b and Return, each down and up.
  return gap(k[3], k[4]);
}

}  // namespace

TEST_CASE("a key that follows a key waits the pacing window after it on a quiet screen") {
  session t(std::map<std::string, std::string>{{"CU_PACE_QUIET_MS", "300"}});
  t.probe.clear();
  auto r = t.s.call_tool("computer_batch", batch_args({key_step("a"), key_step("b")}));
  REQUIRE_FALSE(is_error(*r));
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 4);  // a down, a up, b down, b up.
  CHECK(gap(k[1], k[2]) >= 299);
  check_nothing_pressed(t.probe);
}

TEST_CASE("input that follows typed text waits the longer text window") {
  session t({{"CU_PACE_QUIET_MS", "20"}, {"CU_PACE_TEXT_MS", "400"}});
  CHECK(gap_after_text(t) >= 399);
}

TEST_CASE("input waits while the screen keeps changing, but no longer than CU_PACE_MAX_MS") {
  session t({{"CU_PACE_QUIET_MS", "400"}, {"CU_PACE_MAX_MS", "900"}});
  drawing busy(t.x.display());
  t.probe.clear();
  auto r = t.s.call_tool("computer_batch", batch_args({key_step("a"), key_step("b")}));
  REQUIRE_FALSE(is_error(*r));
  busy.stop();
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 4);
  // Never 400 ms of quiet while it drew every 10 ms: the bound let b go.
  CHECK(gap(k[1], k[2]) >= 899);
}

TEST_CASE("a scroll's wheel clicks wait for the motion, then go a pacing window apart") {
  session t(std::map<std::string, std::string>{{"CU_PACE_QUIET_MS", "100"}});
  t.probe.clear();
  auto r = t.s.call_tool("scroll", R"({"coordinate":[300,300],"scroll_direction":"down",)"
                                   R"("scroll_amount":4})");
  REQUIRE_FALSE(is_error(*r));
  auto events = t.probe.take();
  INFO(describe(events));
  auto presses = of_types(events, {XCB_BUTTON_PRESS});
  auto moves = of_types(events, {XCB_MOTION_NOTIFY});
  REQUIRE(presses.size() == 4);
  REQUIRE_FALSE(moves.empty());
  CHECK(gap(moves.back(), presses[0]) >= 99);
  for (size_t i = 1; i < presses.size(); ++i) CHECK(gap(presses[i - 1], presses[i]) >= 99);
  check_nothing_pressed(t.probe);
}

TEST_CASE("input cancelled while it waits for the screen to be quiet sends nothing") {
  session t({{"CU_PACE_QUIET_MS", "400"}, {"CU_PACE_MAX_MS", "60000"}});
  drawing busy(t.x.display());
  t.probe.clear();
  t.s.send(tool_call("\"pb\"", "computer_batch", batch_args({key_step("a"), key_step("b")})));
  REQUIRE(wait_pressed(t.probe, "a"));
  // b waits for a quiet that never comes while the window draws.
  t.s.send(cancel_note("\"pb\""));
  CHECK(t.s.request("ping")->root["result"].is_object());
  busy.stop();
  // The next caller's key goes once the screen is quiet; had b been sent,
  // it would have been before it, and its batch answered before c's.
  auto c = t.s.call_tool("key", R"({"text":"c"})");
  CHECK_FALSE(is_error(*c));
  CHECK(t.s.read_response("\"pb\"", 0) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "ac");
  check_nothing_pressed(t.probe);
}

TEST_CASE("CU_PACE_QUIET_MS=0 turns pacing off, after typed text too") {
  // A text window of five seconds that must not apply: the gap is far
  // below it however slow the machine.
  session t({{"CU_PACE_QUIET_MS", "0"}, {"CU_PACE_TEXT_MS", "5000"}, {"CU_PACE_MAX_MS", "60000"}});
  CHECK(gap_after_text(t) < 4000);
}
