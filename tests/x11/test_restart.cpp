// The X server under a running session goes away, comes back at another
// size, or resizes its screen: no coordinate from the old screen may be
// used on the new one, the first call after a restart works, errors in
// between name the display, and answers say what really happened.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "support/harness.h"
#include "support/input_probe.h"
#include "support/session_probe.h"

using namespace cu::test;

namespace {

int display_number(const std::string& display) { return std::stoi(display.substr(1)); }

// Each case restarts its X server on the same display number. That number
// comes from unused_display_number (200 and up), not from Xvfb's own
// -displayfd choice (the lowest free one): another test running beside
// this one takes the lowest free number, which is this one's while its
// server is down.

// left_click's arguments for an image point.
std::string click_at(int x, int y) { return "{\"coordinate\":" + coord(x, y) + "}"; }

// The root position of every ButtonPress the probe has seen.
std::vector<std::pair<int, int>> presses(input_probe& probe) {
  std::vector<std::pair<int, int>> out;
  for (const input_event& e : of_types(probe.take(), {XCB_BUTTON_PRESS})) {
    out.emplace_back(e.root_x, e.root_y);
  }
  return out;
}

// Polls mouse_move to a point outside any image (so that it never moves
// anything: with a session it is out of range) until the server answers
// that it has no session: the desktop thread's news of the screen reaches
// the loop asynchronously.
bool session_voided(server_process& s, int timeout_ms = 10000) {
  int64_t deadline = now_ms() + timeout_ms;
  while (now_ms() < deadline) {
    auto r = s.call_tool("mouse_move", R"({"coordinate":[99999,99999]})");
    if (is_error(*r) && text_of(*r).find("no screenshot session yet") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("after an X server restart at another size, screenshots and clicks use the new screen") {
  auto x = std::make_unique<xvfb>(1920, 1080, unused_display_number());
  const std::string display = x->display();
  server_process s(display);
  {
    input_probe probe(display);
    auto shot = s.call_tool("screenshot");
    REQUIRE(image_of(*shot).width == 1366);
    auto click = s.call_tool("left_click", click_at(1300, 700));
    REQUIRE_FALSE(is_error(*click));
    CHECK(text_of(*click) == "left_click at (1827, 985)");
    probe.sync();
  }
  x.reset();  // The X server is gone.

  // In between, errors name the display; nothing is clicked anywhere.
  auto shot = s.call_tool("screenshot");
  CHECK(is_error(*shot));
  CHECK_THAT(text_of(*shot), Catch::Contains(display));
  auto key = s.call_tool("key", R"({"text":"a"})");
  CHECK(is_error(*key));
  CHECK_THAT(text_of(*key), Catch::Contains(display));
  auto click = s.call_tool("left_click", click_at(1300, 700));
  CHECK(is_error(*click));

  x = std::make_unique<xvfb>(1280, 1024, display_number(display));
  input_probe probe(display);
  // The old session did not survive: coordinates from the 1920x1080
  // screenshot are refused, not sent to the new screen.
  auto stale = s.call_tool("left_click", click_at(1300, 700));
  CHECK(is_error(*stale));
  CHECK_THAT(text_of(*stale), Catch::Contains("no screenshot session yet"));
  CHECK(presses(probe).empty());

  // The first screenshot after the restart reconnects and succeeds.
  auto again = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*again));
  rgb_image img = image_of(*again);
  // 1280x1024 matches no model resolution: scaled, aspect kept, to
  // 1366x768's area.
  CHECK(img.width == 1145);
  CHECK(img.height == 916);
  // The old image point is outside the new screenshot; a new one lands.
  auto outside = s.call_tool("left_click", click_at(1300, 700));
  CHECK(is_error(*outside));
  CHECK_THAT(text_of(*outside), Catch::Contains("outside the 1145x916 screenshot"));
  auto inside = s.call_tool("left_click", click_at(1100, 900));
  REQUIRE_FALSE(is_error(*inside));
  CHECK(text_of(*inside) == "left_click at (1230, 1006)");
  CHECK(presses(probe) == std::vector<std::pair<int, int>>{{1230, 1006}});
  // Keys work on the new server without a failed call first.
  CHECK_FALSE(is_error(*s.call_tool("key", R"({"text":"a"})")));
  check_nothing_pressed(probe);
}

TEST_CASE("a hold cut short by the X server going away answers so at once") {
  auto x = std::make_unique<xvfb>(1920, 1080, unused_display_number());
  const std::string display = x->display();
  server_process s(display);
  {
    input_probe probe(display);
    s.send(R"({"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"hold_key",)"
           R"("arguments":{"text":"shift","duration":5}}})");
    REQUIRE(wait_key_down(probe, {kXK_Shift_L}));
  }
  int64_t killed = now_ms();
  x.reset();
  auto r = s.read_response("\"h\"", 10000);
  REQUIRE(r);
  INFO("server stderr: " << s.stderr_text());
  CHECK(now_ms() - killed < 3000);  // Not at the 5 s deadline.
  CHECK(is_error(*r));
  CHECK_THAT(text_of(*r), Catch::StartsWith("hold_key ended early after ") &&
                              Catch::Contains("lost the connection to X display " + display) &&
                              Catch::Contains("nothing is held"));

  x = std::make_unique<xvfb>(1920, 1080, display_number(display));
  input_probe probe(display);
  CHECK_FALSE(is_error(*s.call_tool("screenshot")));
  CHECK_FALSE(is_error(*s.call_tool("key", R"({"text":"a"})")));
  check_nothing_pressed(probe);
}

TEST_CASE("a batch whose X server restarts stops at the step that would use old coordinates") {
  auto x = std::make_unique<xvfb>(1920, 1080, unused_display_number());
  const std::string display = x->display();
  server_process s(display);
  {
    input_probe probe(display);
    REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
    probe.take();
    s.send(R"({"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"computer_batch",)"
           R"("_meta":{"progressToken":"p"},)"
           R"("arguments":{"actions":[{"name":"left_click","arguments":{"coordinate":[100,100]}},)"
           R"({"name":"wait","arguments":{"duration":3}},)"
           R"({"name":"left_click","arguments":{"coordinate":[200,200]}}]}}})");
    // The batch's progress says it is in its wait: the first click is done
    // (its answer, after a round trip, included).
    bool waiting = false;
    while (!waiting) {
      auto line = s.read_line(10000);
      REQUIRE(line);
      waiting = line->find("step 2 of 3: wait") != std::string::npos;
    }
    CHECK(presses(probe) == std::vector<std::pair<int, int>>{{device_x(100), device_y(100)}});
  }
  x.reset();
  x = std::make_unique<xvfb>(1280, 1024, display_number(display));
  input_probe probe(display);
  auto r = s.read_response("\"b\"", 20000);
  REQUIRE(r);
  CHECK(is_error(*r));
  int64_t stopped_at = -1;
  REQUIRE(r->root["result"]["structuredContent"]["batch"]["stopped_at"].get(stopped_at) ==
          simdjson::SUCCESS);
  CHECK(stopped_at == 2);
  CHECK_THAT(text_of(*r, 3), Catch::Contains("no screenshot session yet"));
  CHECK(presses(probe).empty());
  check_nothing_pressed(probe);
}

TEST_CASE("left_mouse_up after the X server went away says the button went with it") {
  auto x = std::make_unique<xvfb>(1920, 1080, unused_display_number());
  const std::string display = x->display();
  server_process s(display);
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  REQUIRE_FALSE(is_error(*s.call_tool("left_mouse_down", R"({"coordinate":[10,10]})")));
  x.reset();
  x = std::make_unique<xvfb>(1920, 1080, display_number(display));
  input_probe probe(display);
  auto up = s.call_tool("left_mouse_up");
  CHECK_FALSE(is_error(*up));
  CHECK_THAT(text_of(*up), Catch::Contains("not held") &&
                               Catch::Contains("the X server went away while it was down"));
  CHECK(probe.buttons_mask() == 0);
}

TEST_CASE("a resized screen voids the session; the next screenshot is of the new size") {
  xvfb host(1920, 1080);
  xephyr nested(host.display(), 1280, 800);
  server_process s(nested.display());
  auto shot = s.call_tool("screenshot");
  REQUIRE(image_of(*shot).width == 1280);
  REQUIRE_FALSE(is_error(*s.call_tool("cursor_position")));

  run_result r = run_program({"xrandr", "-s", "1024x768"}, nested.display());
  INFO("xrandr: " << r.err);
  REQUIRE(r.status == 0);
  REQUIRE(session_voided(s));
  auto stale = s.call_tool("left_click", click_at(1200, 700));
  CHECK(is_error(*stale));
  CHECK_THAT(text_of(*stale), Catch::Contains("no screenshot session yet"));

  input_probe probe(nested.display());
  auto again = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*again));
  CHECK(image_of(*again).width == 1024);
  CHECK(image_of(*again).height == 768);
  auto click = s.call_tool("left_click", click_at(1000, 700));
  REQUIRE_FALSE(is_error(*click));
  CHECK(text_of(*click) == "left_click at (1000, 700)");
  CHECK(presses(probe) == std::vector<std::pair<int, int>>{{1000, 700}});
}
