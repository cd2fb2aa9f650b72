// The settle before a screenshot that follows input (X DAMAGE quiet, at
// most CU_SCREENSHOT_DELAY), and the cache that answers an unchanged area
// with the image already encoded.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/harness.h"
#include "support/input_probe.h"

using namespace cu::test;

namespace {

bool unchanged(const json_line& r) {
  bool u = false;
  if (r.root["result"]["structuredContent"]["unchanged"].get(u) != simdjson::SUCCESS) {
    throw std::runtime_error("no structuredContent.unchanged: " + r.text.substr(0, 300));
  }
  return u;
}

std::string_view image_data(const json_line& r) {
  std::string_view data;
  if (r.root["result"]["content"].at(0)["data"].get(data) != simdjson::SUCCESS) {
    throw std::runtime_error("not an image result: " + r.text.substr(0, 300));
  }
  return data;
}

// Repaints a square of its own window with alternating colours every
// period_ms, on a connection and thread of its own, until destroyed.
class animation {
 public:
  animation(const std::string& display, int period_ms) : client_(display) {
    window_ = client_.create_window(900, 600, 60, 60, {10, 10, 200});
    client_.sync();
    thread_ = std::thread([this, period_ms] {
      for (int i = 0; !stop_.load(); ++i) {
        client_.fill(window_, 0, 0, 60, 60, i % 2 ? rgb{200, 10, 10} : rgb{10, 200, 10});
        client_.sync();
        std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
      }
    });
  }
  ~animation() {
    stop_ = true;
    thread_.join();
  }

 private:
  x_client client_;
  xcb_window_t window_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A 1024x768 screen (no downscale) covered by one window of noise: every
// strip of its image is busy.
struct noise_screen {
  explicit noise_screen(uint32_t seed) {
    window = painter.create_window(0, 0, 1024, 768, {0, 0, 0});
    painter.paint_noise(window, 1024, 768, seed);
    painter.sync();
  }
  xvfb x{1024, 768};
  x_client painter{x.display()};
  xcb_window_t window = 0;
};

// Milliseconds from sending a mouse_move to the screenshot after it.
int64_t move_then_screenshot(server_process& s, int x) {
  const int64_t t0 = now_ms();
  REQUIRE_FALSE(is_error(*s.call_tool("mouse_move", "{\"coordinate\":[" + std::to_string(x) +
                                                        ",100]}")));
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  return now_ms() - t0;
}

}  // namespace

TEST_CASE("a screenshot after typing into xterm shows the echo, long before the bound") {
  xvfb x;
  xterm_typist xterm(x.display());
  // The default bound: 2 s.
  server_process s(x.display(), {{"CU_SCREENSHOT_DELAY", "2"}});
  auto previous = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*previous));
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    const int64_t t0 = now_ms();
    auto typed = s.call_tool("type", "{\"text\":\"settle-" + std::to_string(round) + "\\n\"}");
    REQUIRE_FALSE(is_error(*typed));
    auto shot = s.call_tool("screenshot");
    const int64_t elapsed = now_ms() - t0;
    REQUIRE_FALSE(is_error(*shot));
    CHECK(elapsed < 1000);
    // The echo was drawn before the grab...
    CHECK_FALSE(unchanged(*shot));
    CHECK(image_data(*shot) != image_data(*previous));
    // ... and all of it: nothing more is drawn after (the record of every
    // rectangle drawn says the area is untouched a while later).
    REQUIRE_FALSE(is_error(*s.call_tool("wait", R"({"duration":0.3})")));
    auto later = s.call_tool("screenshot");
    REQUIRE_FALSE(is_error(*later));
    CHECK(unchanged(*later));
    CHECK(image_data(*later) == image_data(*shot));
    previous = std::move(shot);
  }
}

TEST_CASE("a screen that keeps changing gets its screenshot at the bound") {
  xvfb x;
  // A quiet window of 300 ms: only a painter stalled that long (on a
  // machine far busier than any test run) would let the screen look quiet.
  server_process s(x.display(), {{"CU_SCREENSHOT_DELAY", "1.2"}, {"CU_SETTLE_QUIET_MS", "300"}});
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  {
    animation busy(x.display(), 20);
    const int64_t ms = move_then_screenshot(s, 100);
    CHECK(ms >= 1200);
    CHECK(ms < 2500);
  }
  // Quiet again: the quiet window, not the bound.
  CHECK(move_then_screenshot(s, 200) < 1100);
}

TEST_CASE("a blink every half second does not hold the screenshot to the bound") {
  xvfb x;
  server_process s(x.display(), {{"CU_SCREENSHOT_DELAY", "3"}});
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  animation blink(x.display(), 500);
  for (int i = 0; i < 3; ++i) CHECK(move_then_screenshot(s, 100 + i) < 1500);
}

TEST_CASE("a click on a still screen is followed by its screenshot after the quiet window") {
  xvfb x;
  server_process s(x.display(), {{"CU_SCREENSHOT_DELAY", "2"}});
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  for (int i = 0; i < 5; ++i) {
    const int64_t ms = move_then_screenshot(s, 300 + i);
    CHECK(ms >= 100);  // CU_SETTLE_QUIET_MS after the input.
    CHECK(ms < 1000);
  }
}

TEST_CASE("an unchanged screen is answered from the cache, and a one-pixel change is not") {
  xvfb x(1024, 768);  // No downscale: every device pixel is an image pixel.
  x_client painter(x.display());
  xcb_window_t w = painter.create_window(0, 0, 1024, 768, {40, 40, 40});
  painter.sync();
  server_process s(x.display());
  auto first = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*first));
  auto second = s.call_tool("screenshot");
  CHECK(unchanged(*second));
  CHECK(image_data(*second) == image_data(*first));

  painter.fill(w, 500, 300, 1, 1, {255, 0, 0});
  painter.sync();
  auto third = s.call_tool("screenshot");
  CHECK_FALSE(unchanged(*third));
  rgb_image img = image_of(*third);
  CHECK(img.at(500, 300) == rgb{255, 0, 0});
  CHECK(img.at(501, 300) == rgb{40, 40, 40});
  CHECK(unchanged(*s.call_tool("screenshot")));

  // A zoom is cached by its own area: a change elsewhere leaves it alone.
  const char* region = R"({"region":[0,0,200,100]})";
  auto z1 = s.call_tool("zoom", region);
  REQUIRE_FALSE(is_error(*z1));
  painter.fill(w, 700, 700, 4, 4, {0, 255, 0});
  painter.sync();
  auto z2 = s.call_tool("zoom", region);
  CHECK(unchanged(*z2));
  CHECK(image_data(*z2) == image_data(*z1));
  painter.fill(w, 199, 99, 1, 1, {0, 0, 255});
  painter.sync();
  auto z3 = s.call_tool("zoom", region);
  CHECK_FALSE(unchanged(*z3));
  CHECK(image_of(*z3).at(199, 99) == rgb{0, 0, 255});
  // The screenshot saw the change outside the zoom too.
  auto full = s.call_tool("screenshot");
  CHECK_FALSE(unchanged(*full));
  CHECK(image_of(*full).at(701, 701) == rgb{0, 255, 0});
}

TEST_CASE("a small change re-encodes to exactly the new pixels") {
  noise_screen screen(3);
  x_client& painter = screen.painter;
  const xcb_window_t w = screen.window;
  server_process s(screen.x.display(), {{"CU_IMAGE_FORMAT", "png"}});
  rgb_image before = image_of(*s.call_tool("screenshot"));
  // 40x40 in the middle, then a strip boundary row and the last row.
  painter.fill(w, 480, 360, 40, 40, {255, 255, 0});
  painter.fill(w, 0, 32, 1024, 1, {0, 255, 255});
  painter.fill(w, 1000, 767, 24, 1, {255, 0, 255});
  painter.sync();
  auto r = s.call_tool("screenshot");
  CHECK_FALSE(unchanged(*r));
  rgb_image after = image_of(*r);
  REQUIRE(after.width == 1024);
  size_t differing = 0;
  for (int y = 0; y < 768; ++y) {
    for (int xx = 0; xx < 1024; ++xx) {
      const bool square = xx >= 480 && xx < 520 && y >= 360 && y < 400;
      const bool line = y == 32;
      const bool tail = y == 767 && xx >= 1000;
      if (square) {
        CHECK(after.at(xx, y) == rgb{255, 255, 0});
      } else if (line) {
        CHECK(after.at(xx, y) == rgb{0, 255, 255});
      } else if (tail) {
        CHECK(after.at(xx, y) == rgb{255, 0, 255});
      } else {
        differing += after.at(xx, y) != before.at(xx, y);
      }
    }
  }
  CHECK(differing == 0);
}

TEST_CASE("a small change re-encodes JPEG strips to the pixels of a whole new encode") {
  noise_screen screen(5);
  x_client& painter = screen.painter;
  const xcb_window_t w = screen.window;
  const std::string& display = screen.x.display();
  const std::map<std::string, std::string> jpeg{{"CU_IMAGE_FORMAT", "jpeg"}};
  server_process s(display, jpeg);
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  painter.fill(w, 480, 360, 40, 40, {255, 255, 0});
  painter.sync();
  auto changed = s.call_tool("screenshot");
  CHECK_FALSE(unchanged(*changed));
  // A server that never saw the screen before encodes it whole.
  server_process fresh(display, jpeg);
  auto whole = fresh.call_tool("screenshot");
  rgb_image a = image_of(*changed), b = image_of(*whole);
  REQUIRE(a.width == b.width);
  CHECK(a.pixels == b.pixels);
}
