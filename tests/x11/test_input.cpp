// The input tools against a real Xvfb: every click, move, drag, scroll, key
// and typed character is checked as the events a probe window received (or
// the text an xterm's tty read), at the exact device pixel.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"

using namespace cu::test;

namespace {

constexpr uint16_t kModifierMask = kShiftMask | kControlMask | kMod1Mask;

// Ten image points of a 1366x768 screenshot, both far corners among them.
constexpr std::pair<int, int> kPoints[] = {
    {0, 0},     {1365, 767}, {1, 1},    {683, 384}, {100, 700},
    {1365, 0},  {0, 767},    {512, 256}, {977, 123}, {44, 601},
};



// The id of a response line, as JSON text ("" when it has none).
std::string id_of(const std::string& line) {
  json_ptr j = parse_json(line);
  simdjson::dom::element id;
  if (j->root["id"].get(id) != simdjson::SUCCESS) return {};
  return std::string(simdjson::minify(id));
}

std::string tool_call(std::string_view id, std::string_view name, std::string_view args) {
  return std::string(R"({"jsonrpc":"2.0","id":)") + std::string(id) +
         R"(,"method":"tools/call","params":{"name":")" + std::string(name) +
         R"(","arguments":)" + std::string(args) + "}}";
}

struct click_kind {
  const char* tool;
  uint8_t button;
  int count;
};

constexpr click_kind kClicks[] = {
    {"left_click", 1, 1},   {"right_click", 3, 1},  {"middle_click", 2, 1},
    {"double_click", 1, 2}, {"triple_click", 1, 3},
};

}  // namespace

TEST_CASE("the image-to-device mapping the tests expect hits both far corners") {
  CHECK(device_x(0) == 0);
  CHECK(device_y(0) == 0);
  CHECK(device_x(1365) == 1919);
  CHECK(device_y(767) == 1079);
  CHECK(device_x(683) == 960);
  CHECK(device_y(384) == 540);
}

TEST_CASE("each click tool presses its button the right number of times at the exact device pixel") {
  session t;
  for (const click_kind& k : kClicks) {
    for (auto [x, y] : kPoints) {
      INFO(k.tool << " at image " << x << "," << y);
      auto r = t.s.call_tool(k.tool, R"({"coordinate":)" + coord(x, y) + "}");
      REQUIRE_FALSE(is_error(*r));
      CHECK(text_of(*r) == std::string(k.tool) + " at " + at(x, y));
      auto events = t.probe.take();
      INFO(describe(events));
      CHECK(keys(events).empty());
      auto b = buttons(events);
      REQUIRE(b.size() == size_t(2 * k.count));
      for (int i = 0; i < k.count; ++i) {
        const input_event& press = b[size_t(2 * i)];
        const input_event& release = b[size_t(2 * i + 1)];
        CHECK(press.type == XCB_BUTTON_PRESS);
        CHECK(release.type == XCB_BUTTON_RELEASE);
        CHECK(press.detail == k.button);
        CHECK(release.detail == k.button);
        CHECK(press.root_x == device_x(x));
        CHECK(press.root_y == device_y(y));
        CHECK(press.x == device_x(x));  // The probe window starts at 0,0.
        CHECK(press.y == device_y(y));
        CHECK(release.root_x == device_x(x));
        CHECK(release.root_y == device_y(y));
        CHECK(press.state == 0);
      }
      if (k.count > 1) CHECK(b[b.size() - 2].time - b[0].time <= 250);
      CHECK(t.probe.pointer() == std::pair{device_x(x), device_y(y)});
      check_nothing_pressed(t.probe);
    }
  }
}

TEST_CASE("a click's modifiers are down for every press and released after the last one") {
  session t;
  struct modifier_case {
    const char* tool;
    const char* text;
    uint16_t mask;
    int key_count;
  };
  const modifier_case cases[] = {
      {"left_click", "ctrl", kControlMask, 1},   {"right_click", "ctrl", kControlMask, 1},
      {"middle_click", "ctrl", kControlMask, 1}, {"double_click", "ctrl", kControlMask, 1},
      {"triple_click", "ctrl", kControlMask, 1}, {"left_click", "shift+alt", kShiftMask | kMod1Mask, 2},
      {"double_click", "shift", kShiftMask, 1},   {"left_click", "alt", kMod1Mask, 1},
      {"right_click", "ctrl+alt", kControlMask | kMod1Mask, 2},
  };
  int n = 0;
  for (const modifier_case& c : cases) {
    const int x = 300 + 37 * n, y = 200 + 29 * n;
    ++n;
    INFO(c.tool << " holding " << c.text);
    auto r = t.s.call_tool(c.tool, R"({"coordinate":)" + coord(x, y) + R"(,"text":")" + c.text + "\"}");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == std::string(c.tool) + " at " + at(x, y) + " holding " + c.text);
    auto events = t.probe.take();
    INFO(describe(events));
    // Index of each event kind in the whole sequence, to check the order.
    std::vector<size_t> key_presses, key_releases, button_presses, button_releases;
    for (size_t i = 0; i < events.size(); ++i) {
      switch (events[i].type) {
        case XCB_KEY_PRESS: key_presses.push_back(i); break;
        case XCB_KEY_RELEASE: key_releases.push_back(i); break;
        case XCB_BUTTON_PRESS: button_presses.push_back(i); break;
        case XCB_BUTTON_RELEASE: button_releases.push_back(i); break;
        default: break;
      }
    }
    // Exactly the named modifiers: no helper Shift for a key at level 2.
    CHECK(key_presses.size() == size_t(c.key_count));
    CHECK(key_releases.size() == size_t(c.key_count));
    REQUIRE_FALSE(key_presses.empty());
    REQUIRE_FALSE(key_releases.empty());
    REQUIRE_FALSE(button_presses.empty());
    CHECK(key_presses.back() < button_presses.front());
    CHECK(key_releases.front() > button_releases.back());
    for (size_t i : button_presses) {
      CHECK((events[i].state & kModifierMask) == c.mask);
      CHECK(events[i].root_x == device_x(x));
      CHECK(events[i].root_y == device_y(y));
    }
    for (size_t i : key_presses) {
      CHECK(t.probe.keycode_has(events[i].detail, {kXK_Control_L, kXK_Control_R, kXK_Shift_L,
                                                   kXK_Shift_R, kXK_Alt_L, kXK_Alt_R, kXK_Meta_L}));
    }
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("cursor_position before any screenshot answers in the image space a screenshot would have") {
  // As the reference server does: [x, y] at once, with no capture and no
  // session made (a click still needs a screenshot first).
  struct screen_case {
    int width, height, device_x, device_y;
    std::vector<int64_t> image;
  };
  for (const screen_case& c : {screen_case{1920, 1080, 960, 540, {683, 384}},
                               screen_case{2560, 1600, 2000, 1000, {1000, 500}},
                               screen_case{1000, 700, 999, 0, {999, 0}}}) {
    INFO(c.width << "x" << c.height);
    xvfb x(c.width, c.height);
    input_probe probe(x.display());
    x_client warp(x.display());
    xcb_warp_pointer(warp.connection(), XCB_NONE, warp.screen()->root, 0, 0, 0, 0,
                     int16_t(c.device_x), int16_t(c.device_y));
    warp.sync();
    server_process s(x.display());
    auto pos = s.call_tool("cursor_position");
    CHECK_FALSE(is_error(*pos));
    CHECK(int_array(text_of(*pos)) == c.image);
    CHECK(probe.pointer() == std::pair{c.device_x, c.device_y});
    auto click = s.call_tool("left_click", R"({"coordinate":[10,10]})");
    CHECK(is_error(*click));
    CHECK_THAT(text_of(*click), Catch::Contains("no screenshot session yet"));
    CHECK(buttons(probe.take()).empty());
  }
}

TEST_CASE("mouse_move puts the pointer on the device pixel and cursor_position maps it back") {
  session t;
  for (auto [x, y] : kPoints) {
    INFO("image " << x << "," << y);
    auto r = t.s.call_tool("mouse_move", R"({"coordinate":)" + coord(x, y) + "}");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "moved to " + at(x, y));
    CHECK(t.probe.pointer() == std::pair{device_x(x), device_y(y)});
    auto events = t.probe.take();
    INFO(describe(events));
    CHECK(buttons(events).empty());
    CHECK(keys(events).empty());
    auto motion = of_types(events, {XCB_MOTION_NOTIFY});
    REQUIRE_FALSE(motion.empty());
    CHECK(motion.back().root_x == device_x(x));
    CHECK(motion.back().root_y == device_y(y));

    auto pos = t.s.call_tool("cursor_position");
    REQUIRE_FALSE(is_error(*pos));
    CHECK(int_array(text_of(*pos)) == std::vector<int64_t>{x, y});
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("left_click_drag presses at the start, moves through the middle and releases at the end") {
  session t;
  auto check_drag = [&](int sx, int sy, int ex, int ey, const std::vector<input_event>& events) {
    INFO(describe(events));
    CHECK(keys(events).empty());
    size_t press = events.size(), release = events.size();
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].type == XCB_BUTTON_PRESS && press == events.size()) press = i;
      if (events[i].type == XCB_BUTTON_RELEASE) release = i;
    }
    REQUIRE(buttons(events).size() == 2);
    REQUIRE(press < release);
    REQUIRE(release < events.size());
    CHECK(events[press].detail == 1);
    CHECK(events[release].detail == 1);
    CHECK(events[press].root_x == device_x(sx));
    CHECK(events[press].root_y == device_y(sy));
    CHECK(events[release].root_x == device_x(ex));
    CHECK(events[release].root_y == device_y(ey));
    const int lo_x = std::min(device_x(sx), device_x(ex)), hi_x = std::max(device_x(sx), device_x(ex));
    const int lo_y = std::min(device_y(sy), device_y(ey)), hi_y = std::max(device_y(sy), device_y(ey));
    int motions = 0;
    for (size_t i = press + 1; i < release; ++i) {
      const input_event& m = events[i];
      REQUIRE(m.type == XCB_MOTION_NOTIFY);
      ++motions;
      CHECK((m.state & kButton1Mask) != 0);
      CHECK(m.root_x >= lo_x);
      CHECK(m.root_x <= hi_x);
      CHECK(m.root_y >= lo_y);
      CHECK(m.root_y <= hi_y);
    }
    CHECK(motions >= 2);
    // Nothing moves the pointer once the button is up.
    CHECK(release == events.size() - 1);
    CHECK(t.probe.pointer() == std::pair{device_x(ex), device_y(ey)});
    check_nothing_pressed(t.probe);
  };

  SECTION("from a start_coordinate") {
    auto r = t.s.call_tool("left_click_drag", R"({"start_coordinate":[100,100],"coordinate":[600,400]})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "dragged from " + at(100, 100) + " to " + at(600, 400));
    check_drag(100, 100, 600, 400, t.probe.take());
  }
  SECTION("backwards across the whole screen, corner to corner") {
    auto r = t.s.call_tool("left_click_drag", R"({"start_coordinate":[1365,767],"coordinate":[0,0]})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "dragged from " + at(1365, 767) + " to " + at(0, 0));
    check_drag(1365, 767, 0, 0, t.probe.take());
  }
  SECTION("from the current pointer position") {
    REQUIRE_FALSE(is_error(*t.s.call_tool("mouse_move", R"({"coordinate":[50,60]})")));
    t.probe.take();
    auto r = t.s.call_tool("left_click_drag", R"({"coordinate":[70,700]})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "dragged from " + at(50, 60) + " to " + at(70, 700));
    check_drag(50, 60, 70, 700, t.probe.take());
  }
}

TEST_CASE("scroll clicks its wheel button amount times at the point, in all four directions") {
  session t;
  const std::pair<const char*, uint8_t> directions[] = {
      {"up", 4}, {"down", 5}, {"left", 6}, {"right", 7}};
  for (auto [x, y] : {std::pair{683, 384}, std::pair{0, 0}, std::pair{1365, 767}}) {
    for (auto [dir, button] : directions) {
      INFO(dir << " at image " << x << "," << y);
      auto r = t.s.call_tool("scroll", R"({"coordinate":)" + coord(x, y) +
                                           R"(,"scroll_direction":")" + dir +
                                           R"(","scroll_amount":3})");
      REQUIRE_FALSE(is_error(*r));
      CHECK(text_of(*r).rfind(std::string("scrolled ") + dir + " 3 at " + at(x, y), 0) == 0);
      auto events = t.probe.take();
      INFO(describe(events));
      auto b = buttons(events);
      REQUIRE(b.size() == 6);
      for (size_t i = 0; i < b.size(); ++i) {
        CHECK(b[i].type == (i % 2 == 0 ? XCB_BUTTON_PRESS : XCB_BUTTON_RELEASE));
        CHECK(b[i].detail == button);
        CHECK(b[i].root_x == device_x(x));
        CHECK(b[i].root_y == device_y(y));
        if (b[i].type == XCB_BUTTON_PRESS) CHECK(b[i].state == 0);
      }
      CHECK(keys(events).empty());
      check_nothing_pressed(t.probe);
    }
  }
  SECTION("with a modifier held") {
    auto r = t.s.call_tool(
        "scroll", R"({"coordinate":[400,300],"scroll_direction":"down","scroll_amount":1,"text":"ctrl"})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r).rfind("scrolled down 1 at " + at(400, 300), 0) == 0);
    auto events = t.probe.take();
    INFO(describe(events));
    auto b = buttons(events);
    REQUIRE(b.size() == 2);
    CHECK(b[0].detail == 5);
    CHECK((b[0].state & kModifierMask) == kControlMask);
    CHECK(keys(events).size() == 2);
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("left_mouse_down holds button 1 until left_mouse_up, and refuses a second down") {
  session t;
  auto r = t.s.call_tool("left_mouse_down", R"({"coordinate":[200,300]})");
  REQUIRE_FALSE(is_error(*r));
  CHECK(text_of(*r) == "left button down at " + at(200, 300));
  auto events = t.probe.take();
  INFO(describe(events));
  auto b = buttons(events);
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == XCB_BUTTON_PRESS);
  CHECK(b[0].detail == 1);
  CHECK(b[0].root_x == device_x(200));
  CHECK(b[0].root_y == device_y(300));
  CHECK(t.probe.buttons_mask() == kButton1Mask);

  auto again = t.s.call_tool("left_mouse_down", R"({"coordinate":[250,300]})");
  CHECK(is_error(*again));
  CHECK_THAT(text_of(*again), Catch::Contains("already held"));
  CHECK(buttons(t.probe.take()).empty());
  CHECK(t.probe.buttons_mask() == kButton1Mask);

  // A move while held drags: motion carries Button1Mask.
  REQUIRE_FALSE(is_error(*t.s.call_tool("mouse_move", R"({"coordinate":[400,500]})")));
  auto motion = of_types(t.probe.take(), {XCB_MOTION_NOTIFY});
  REQUIRE_FALSE(motion.empty());
  CHECK((motion.back().state & kButton1Mask) != 0);

  auto up = t.s.call_tool("left_mouse_up", R"({"coordinate":[410,510]})");
  REQUIRE_FALSE(is_error(*up));
  CHECK(text_of(*up) == "left button up at " + at(410, 510));
  events = t.probe.take();
  b = buttons(events);
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == XCB_BUTTON_RELEASE);
  CHECK(b[0].detail == 1);
  CHECK(b[0].root_x == device_x(410));
  CHECK(b[0].root_y == device_y(510));
  check_nothing_pressed(t.probe);

  auto up_again = t.s.call_tool("left_mouse_up");
  CHECK_FALSE(is_error(*up_again));
  CHECK(text_of(*up_again).find("not held") != std::string::npos);
  CHECK(buttons(t.probe.take()).empty());

  SECTION("without a coordinate both act where the pointer is") {
    auto down = t.s.call_tool("left_mouse_down");
    REQUIRE_FALSE(is_error(*down));
    CHECK(text_of(*down) == "left button down at " + at(410, 510));
    auto up2 = t.s.call_tool("left_mouse_up", "{}");
    REQUIRE_FALSE(is_error(*up2));
    CHECK(text_of(*up2) == "left button up at " + at(410, 510));
    events = t.probe.take();
    INFO(describe(events));
    b = buttons(events);
    REQUIRE(b.size() == 2);
    CHECK(b[0].type == XCB_BUTTON_PRESS);
    CHECK(b[1].type == XCB_BUTTON_RELEASE);
    for (const input_event& e : b) {
      CHECK(e.root_x == device_x(410));
      CHECK(e.root_y == device_y(510));
    }
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("key presses chords with their modifiers and repeats them") {
  session t;
  SECTION("ctrl+shift+a: the a press carries Control and Shift") {
    auto r = t.s.call_tool("key", R"({"text":"ctrl+shift+a"})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "pressed ctrl+shift+a");
    auto k = keys(t.probe.take());
    INFO(describe(k));
    REQUIRE(k.size() == 6);
    for (int i = 0; i < 3; ++i) CHECK(k[size_t(i)].type == XCB_KEY_PRESS);
    for (int i = 3; i < 6; ++i) CHECK(k[size_t(i)].type == XCB_KEY_RELEASE);
    CHECK(t.probe.keycode_has(k[2].detail, {kXK_a}));
    CHECK((k[2].state & kModifierMask) == (kControlMask | kShiftMask));
    CHECK(t.probe.keycode_has(k[0].detail, {kXK_Control_L, kXK_Control_R}));
    CHECK(t.probe.keycode_has(k[1].detail, {kXK_Shift_L, kXK_Shift_R}));
    // The main key goes up first, inside the chord.
    CHECK(k[3].detail == k[2].detail);
    check_nothing_pressed(t.probe);
  }
  SECTION("alt+Tab: the Tab press carries Mod1") {
    auto r = t.s.call_tool("key", R"({"text":"alt+Tab"})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "pressed alt+Tab");
    auto k = keys(t.probe.take());
    INFO(describe(k));
    REQUIRE(k.size() == 4);
    CHECK(t.probe.keycode_has(k[1].detail, {kXK_Tab}));
    CHECK(k[1].type == XCB_KEY_PRESS);
    CHECK((k[1].state & kModifierMask) == kMod1Mask);
    check_nothing_pressed(t.probe);
  }
  SECTION("Return with repeat 5 gives five presses, and repeat 1 no suffix") {
    auto r = t.s.call_tool("key", R"({"text":"Return","repeat":5})");
    REQUIRE_FALSE(is_error(*r));
    CHECK(text_of(*r) == "pressed Return x5");
    auto k = keys(t.probe.take());
    INFO(describe(k));
    REQUIRE(k.size() == 10);
    for (size_t i = 0; i < k.size(); ++i) {
      CHECK(k[i].type == (i % 2 == 0 ? XCB_KEY_PRESS : XCB_KEY_RELEASE));
      CHECK(t.probe.keycode_has(k[i].detail, {kXK_Return}));
    }
    check_nothing_pressed(t.probe);

    auto once = t.s.call_tool("key", R"({"text":"Return","repeat":1})");
    REQUIRE_FALSE(is_error(*once));
    CHECK(text_of(*once) == "pressed Return");
    CHECK(keys(t.probe.take()).size() == 2);
  }
  SECTION("aliases name the keys they stand for") {
    struct alias_case {
      const char* text;
      std::initializer_list<uint32_t> keysyms;
    };
    const alias_case aliases[] = {
        {"enter", {kXK_Return}},
        {"esc", {kXK_Escape}},
        {"pgup", {kXK_Prior}},
        {"pgdn", {kXK_Next}},
        {"del", {kXK_Delete}},
        {"ctrl", {kXK_Control_L, kXK_Control_R}},
        {"control", {kXK_Control_L, kXK_Control_R}},
        {"alt", {kXK_Alt_L, kXK_Alt_R}},
        {"option", {kXK_Alt_L, kXK_Alt_R}},
        {"super", {kXK_Super_L, kXK_Super_R}},
        {"cmd", {kXK_Super_L, kXK_Super_R}},
        {"win", {kXK_Super_L, kXK_Super_R}},
        // The contract only says meta is an alias; Super and Meta both fit.
        {"meta", {kXK_Super_L, kXK_Super_R, kXK_Meta_L, kXK_Meta_R}},
    };
    for (const alias_case& a : aliases) {
      INFO("key " << a.text);
      auto r = t.s.call_tool("key", std::string(R"({"text":")") + a.text + "\"}");
      REQUIRE_FALSE(is_error(*r));
      CHECK(text_of(*r) == std::string("pressed ") + a.text);
      auto k = keys(t.probe.take());
      INFO(describe(k));
      REQUIRE(k.size() == 2);
      CHECK(k[0].type == XCB_KEY_PRESS);
      CHECK(k[1].type == XCB_KEY_RELEASE);
      CHECK(t.probe.keycode_has(k[0].detail, a.keysyms));
      check_nothing_pressed(t.probe);
    }
  }
}

TEST_CASE("hold_key holds its keys for the duration while other requests are answered") {
  session t;
  const int64_t start = now_ms();
  t.s.send(tool_call("\"hold\"", "hold_key", R"({"text":"shift","duration":3})"));
  t.s.send(tool_call("\"shot\"", "screenshot", "{}"));
  t.s.send(R"({"jsonrpc":"2.0","id":"ping","method":"ping"})");
  t.s.send(tool_call("\"where\"", "cursor_position", "{}"));
  // Read the lines in the order they come: the three later requests are
  // answered before the hold.
  std::vector<std::string> order;
  std::map<std::string, json_ptr> by_id;
  while (order.size() < 3) {
    auto line = t.s.read_line(10000);
    REQUIRE(line);
    std::string id = id_of(*line);
    order.push_back(id);
    by_id[id] = parse_json(*line);
    if (id == "\"ping\"") {
      CHECK(wait_key_down(t.probe, {kXK_Shift_L, kXK_Shift_R}));
    }
  }
  CHECK(now_ms() - start < 2500);
  std::sort(order.begin(), order.end());
  CHECK(order == std::vector<std::string>{"\"ping\"", "\"shot\"", "\"where\""});
  REQUIRE(by_id.count("\"shot\""));
  CHECK(image_of(*by_id["\"shot\""]).width == 1366);
  REQUIRE(by_id.count("\"where\""));
  CHECK_FALSE(is_error(*by_id["\"where\""]));
  CHECK(int_array(text_of(*by_id["\"where\""])).size() == 2);
  CHECK(wait_key_down(t.probe, {kXK_Shift_L, kXK_Shift_R}));

  auto hold = t.s.read_response("\"hold\"", 20000);
  REQUIRE(hold);
  CHECK_FALSE(is_error(*hold));
  CHECK(text_of(*hold) == "held shift for 3s");
  CHECK(now_ms() - start >= 2900);
  check_nothing_pressed(t.probe);
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 2);
  CHECK(k[0].type == XCB_KEY_PRESS);
  CHECK(k[1].type == XCB_KEY_RELEASE);
  CHECK(t.probe.keycode_has(k[0].detail, {kXK_Shift_L, kXK_Shift_R}));
  CHECK(k[1].time - k[0].time >= 2900);
}

TEST_CASE("notifications/cancelled ends a hold_key at once and it is never answered") {
  session t;
  const int64_t start = now_ms();
  t.s.send(tool_call("77", "hold_key", R"({"text":"shift","duration":30})"));
  CHECK(t.s.request("ping")->root["result"].is_object());
  REQUIRE(wait_key_down(t.probe, {kXK_Shift_L, kXK_Shift_R}));
  t.s.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"test"}})");
  CHECK(t.s.request("ping")->root["result"].is_object());
  // An input call answered after the cancel sees the keys already up.
  auto pos = t.s.call_tool("cursor_position");
  CHECK_FALSE(is_error(*pos));
  check_nothing_pressed(t.probe);
  CHECK(now_ms() - start < 10000);
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 2);
  CHECK(k[1].type == XCB_KEY_RELEASE);
  // No response for the cancelled request, neither kept nor arriving late.
  CHECK(t.s.read_response("77", 1000) == nullptr);
  CHECK(t.s.request("ping")->root["result"].is_object());
}

TEST_CASE("a coordinate tool before any screenshot fails and does nothing") {
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display());
  const std::pair<const char*, const char*> calls[] = {
      {"left_click", R"({"coordinate":[10,10]})"},
      {"right_click", R"({"coordinate":[10,10]})"},
      {"middle_click", R"({"coordinate":[10,10]})"},
      {"double_click", R"({"coordinate":[10,10]})"},
      {"triple_click", R"({"coordinate":[10,10]})"},
      {"mouse_move", R"({"coordinate":[10,10]})"},
      {"left_click_drag", R"({"coordinate":[10,10]})"},
      {"left_click_drag", R"({"start_coordinate":[1,1],"coordinate":[10,10]})"},
      {"scroll", R"({"coordinate":[10,10],"scroll_direction":"up","scroll_amount":1})"},
      {"left_mouse_down", R"({"coordinate":[10,10]})"},
      {"left_mouse_up", R"({"coordinate":[10,10]})"},
  };
  for (auto [tool, args] : calls) {
    INFO(tool << " " << args);
    auto r = s.call_tool(tool, args);
    CHECK(is_error(*r));
    CHECK(text_of(*r).find("no screenshot session yet") != std::string::npos);
    auto events = probe.take();
    INFO(describe(events));
    CHECK(events.empty());
    check_nothing_pressed(probe);
  }
}

TEST_CASE("bad arguments are isError results and no event reaches the screen") {
  session t;
  const std::pair<const char*, const char*> calls[] = {
      {"left_click", R"({})"},
      {"left_click", R"({"coordinate":"10,10"})"},
      {"left_click", R"({"coordinate":[10]})"},
      {"left_click", R"({"coordinate":[10,10,10]})"},
      {"left_click", R"({"coordinate":["10","10"]})"},
      {"left_click", R"({"coordinate":[1366,0]})"},
      {"left_click", R"({"coordinate":[0,768]})"},
      {"left_click", R"({"coordinate":[-1,0]})"},
      {"left_click", R"({"coordinate":[0,-1]})"},
      {"left_click", R"({"coordinate":[10,10],"text":7})"},
      {"right_click", R"({"coordinate":[5000,5000]})"},
      {"double_click", R"({"coordinate":[1366,767]})"},
      {"triple_click", R"({"coordinate":null})"},
      {"middle_click", R"({"coordinate":[10,768]})"},
      {"mouse_move", R"({"coordinate":[1366,10]})"},
      {"mouse_move", R"({})"},
      {"left_click_drag", R"({"coordinate":[1366,10]})"},
      {"left_click_drag", R"({"start_coordinate":[-5,0],"coordinate":[10,10]})"},
      {"left_click_drag", R"({"start_coordinate":[10,10]})"},
      {"scroll", R"({"coordinate":[10,10],"scroll_direction":"up","scroll_amount":0})"},
      {"scroll", R"({"coordinate":[10,10],"scroll_direction":"up","scroll_amount":-3})"},
      {"scroll", R"({"coordinate":[10,10],"scroll_direction":"sideways","scroll_amount":1})"},
      {"scroll", R"({"coordinate":[10,10],"scroll_amount":1})"},
      {"scroll", R"({"coordinate":[10,10],"scroll_direction":"up","scroll_amount":"3"})"},
      {"scroll", R"({"coordinate":[1366,10],"scroll_direction":"up","scroll_amount":1})"},
      {"left_mouse_down", R"({"coordinate":[10,768]})"},
      {"left_mouse_down", R"({"coordinate":"here"})"},
      {"left_mouse_up", R"({"coordinate":[-1,10]})"},
      {"type", R"({})"},
      {"type", R"({"text":42})"},
      {"key", R"({})"},
      {"key", R"({"text":5})"},
      {"key", R"({"text":"nosuchkey"})"},
      {"key", R"({"text":"ctrl+nosuchkey"})"},
      {"key", R"({"text":"Return","repeat":0})"},
      {"key", R"({"text":"Return","repeat":1001})"},
      {"key", R"({"text":"Return","repeat":"2"})"},
      {"hold_key", R"({"text":"shift","duration":0})"},
      {"hold_key", R"({"text":"shift","duration":101})"},
      {"hold_key", R"({"text":"shift","duration":-1})"},
      {"hold_key", R"({"text":"shift"})"},
      {"hold_key", R"({"duration":1})"},
      {"hold_key", R"({"text":"nosuchkey","duration":1})"},
  };
  for (auto [tool, args] : calls) {
    INFO(tool << " " << args);
    auto r = t.s.call_tool(tool, args);
    CHECK(is_error(*r));
    CHECK_FALSE(text_of(*r).empty());
    if (std::string(args).find("nosuchkey") != std::string::npos) {
      CHECK(text_of(*r).find("nosuchkey") != std::string::npos);
    }
    auto events = t.probe.take();
    INFO(describe(events));
    CHECK(events.empty());
    check_nothing_pressed(t.probe);
  }
  // The session and the pointer are unchanged: a good call still works.
  auto r = t.s.call_tool("left_click", R"({"coordinate":[10,10]})");
  CHECK_FALSE(is_error(*r));
  CHECK(buttons(t.probe.take()).size() == 2);
}

namespace {

// 1000 code points mixing ASCII, punctuation, Latin-1, CJK, Hangul and emoji,
// with a newline after every 79 characters so no tty line comes near the
// canonical-mode limit of 4095 bytes.
std::string mixed_text() {
  const char* pieces[] = {
      "The quick brown fox jumps over the lazy dog 0123456789 ",
      "~`!@#$%^&*()-_=+[]{};:'\",.<>/?|\\ ",
      "é ß ü ñ Ä Ö Ü à ç ",
      "日本語 中文 한국어 ",
      "😀 ✓ 🚀 € ",
      // Symbols whose legacy keysym xterm reads as another character
      // (ballotcross, U+2717, came out as U+2612): typed as Unicode keysyms.
      "✗ ☐ ♀ ",
      "\t",
  };
  std::vector<std::string> cps;
  for (const char* p : pieces) {
    std::string_view s = p;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xc0) == 0x80) ++j;
      cps.emplace_back(s.substr(i, j - i));
      i = j;
    }
  }
  std::string out;
  size_t count = 0, column = 0, k = 0;
  while (count < 1000) {
    if (column == 79) {
      out += "\n";
      column = 0;
    } else {
      out += cps[k % cps.size()];
      ++k;
      ++column;
    }
    ++count;
  }
  return out;
}

}  // namespace

TEST_CASE("type delivers 1000 code points of mixed scripts and emoji to an xterm exactly") {
  xvfb x;
  server_process s(x.display());
  const std::string text = mixed_text();
  REQUIRE(code_points(text) == 1000);
  for (const char* c : {"é", "ß", "ü", "ñ", "日", "語", "한", "😀", "✓", "✗", "🚀", "€", "\t", "~",
                        "\\"}) {
    INFO(c);
    CHECK(text.find(c) != std::string::npos);
  }
  // A one-pixel probe in a corner only reads the keyboard state back; the
  // typist takes the focus after it.
  input_probe probe(x.display(), 1919, 1079, 1, 1);
  xterm_typist term(x.display());
  std::string got = term.type_and_collect(s, text);
  check_nothing_pressed(probe);
  CHECK(got == text + "\n");
  if (got != text + "\n") {
    // Name the first difference, which a 4 KB comparison hides.
    size_t i = 0;
    while (i < got.size() && i < text.size() && got[i] == text[i]) ++i;
    FAIL_CHECK("first difference at byte " << i << ": expected \""
               << text.substr(i, 40) << "\" got \"" << got.substr(i, 40) << "\"");
  }
}

TEST_CASE("on a US layout yz@€ arrives exactly") {
  xvfb x;
  server_process s(x.display());
  xterm_typist term(x.display());
  CHECK(term.type_and_collect(s, "yz@€") == "yz@€\n");
}

TEST_CASE("on a German layout yz@€ arrives exactly") {
  xvfb x;
  std::string cmd = "setxkbmap -display " + x.display() + " de";
  int status = system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  server_process s(x.display());
  input_probe probe(x.display(), 1919, 1079, 1, 1);
  xterm_typist term(x.display());
  CHECK(term.type_and_collect(s, "yz@€ Zürich") == "yz@€ Zürich\n");
  check_nothing_pressed(probe);
}

TEST_CASE("type with Return and Tab keeps the line structure") {
  xvfb x;
  server_process s(x.display(), {{"CU_TYPE_DELAY_MS", "0"}});
  xterm_typist term(x.display());
  const std::string text = "one\ttwo\nthree\n\nfour";
  CHECK(term.type_and_collect(s, text) == text + "\n");
}

TEST_CASE("with CU_TYPE_DELAY_MS=0 characters on borrowed keycodes still arrive exactly") {
  xvfb x;
  server_process s(x.display(), {{"CU_TYPE_DELAY_MS", "0"}});
  xterm_typist term(x.display());
  // Each of these needs a spare keycode bound in turn on a US layout.
  const std::string text = "日本語 中文 한국어 😀 ✓ 🚀 é ß ü ñ 日本語 中文 한국어 😀 ✓ 🚀";
  CHECK(term.type_and_collect(s, text) == text + "\n");
}

TEST_CASE("at the default pace 200 characters arrive exactly, paced by round trips, not sleeps") {
  xvfb x;
  // The default, whatever the environment the tests run in says.
  unsetenv("CU_TYPE_DELAY_MS");
  server_process s(x.display());
  xterm_typist term(x.display());
  std::string text;
  const std::string ascii = "The quick brown fox jumps over the lazy dog 0123456789 ~!@#$%^&*()";
  while (text.size() < 200) text += ascii[text.size() % ascii.size()];
  const int64_t start = now_ms();
  json_ptr typed = s.call_tool("type", R"({"text":)" + json_string(text) + "}");
  const int64_t took = now_ms() - start;
  REQUIRE(typed);
  CHECK_FALSE(is_error(*typed));
  CHECK(text_of(*typed) == "typed 200 character(s)");
  // The reference's 12 ms per character took 2.4 s; a round trip per
  // character takes a few milliseconds in all. The bound is far from both:
  // anything near it means a sleep per character came back.
  INFO("type took " << took << " ms");
  CHECK(took < 1000);
  // type_and_collect adds the newline and ctrl+d, and waits for cat's end.
  CHECK(term.type_and_collect(s, "") == text + "\n");
}

TEST_CASE("keycodes rebound from one type call to the next type what each call meant") {
  xvfb x;
  server_process s(x.display());
  xterm_typist term(x.display());
  // 20 characters each, none on a US key: more than the 19 spare keycodes
  // of Xvfb's keymap, so every call after the first rebinds keycodes the
  // call before it typed with a moment ago.
  const std::string latin = "éßüñÄÖÜàçèêëôöûùøåæœ";
  const std::string other = "日本語中文한국어漢字東京αβγδжщыэ";
  REQUIRE(code_points(latin) == 20);
  REQUIRE(code_points(other) == 20);
  std::string sent;
  for (int round = 0; round < 4; ++round) {
    const std::string& text = round % 2 == 0 ? latin : other;
    json_ptr typed = s.call_tool("type", R"({"text":)" + json_string(text + text) + "}");
    REQUIRE(typed);
    INFO(text_of(*typed));
    REQUIRE_FALSE(is_error(*typed));
    sent += text + text;
  }
  CHECK(term.type_and_collect(s, "") == sent + "\n");
}

TEST_CASE("CU_TYPE_DELAY_MS still pauses after each character") {
  xvfb x;
  server_process s(x.display(), {{"CU_TYPE_DELAY_MS", "30"}});
  xterm_typist term(x.display());
  const int64_t start = now_ms();
  json_ptr typed = s.call_tool("type", R"({"text":"abcdefghij"})");
  const int64_t took = now_ms() - start;
  REQUIRE(typed);
  CHECK_FALSE(is_error(*typed));
  CHECK(took >= 10 * 30);
  CHECK(term.type_and_collect(s, "") == "abcdefghij\n");
}

TEST_CASE("a layout switched to German while the server runs is followed") {
  xvfb x;
  server_process s(x.display());
  {
    // Type once on the US layout so the server has loaded its keymap.
    xterm_typist term(x.display());
    CHECK(term.type_and_collect(s, "yz") == "yz\n");
  }
  std::string cmd = "setxkbmap -display " + x.display() + " de";
  int status = system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  xterm_typist term(x.display());
  CHECK(term.type_and_collect(s, "yz@€ Zürich") == "yz@€ Zürich\n");
}

TEST_CASE("a click sent behind a screenshot on one pipe waits for it and maps through it; a "
          "cancelled waiting click is never answered, and the input behind it goes out in order") {
  // docs/protocol.md's "Order". A key before the screenshot makes it settle
  // for three quiet seconds, so everything after it arrives while it is in
  // flight: one write, as a pipeline sends it.
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display(), {{"CU_SETTLE_QUIET_MS", "3000"}, {"CU_SCREENSHOT_DELAY", "5"}});
  s.write_raw(tool_call("\"k\"", "key", R"({"text":"shift"})") + "\n" +
              tool_call("\"s\"", "screenshot", "{}") + "\n" +
              tool_call("\"c1\"", "left_click", R"({"coordinate":[100,100]})") + "\n" +
              R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}})" +
              "\n" +
              tool_call("\"c2\"", "left_click", R"({"coordinate":[683,384]})") + "\n" +
              tool_call("\"t\"", "key", R"({"text":"a"})") + "\n");
  std::vector<std::string> order;
  while (order.size() < 4) {
    auto line = s.read_line(30000);
    REQUIRE(line);
    const std::string id = id_of(*line);
    if (id.empty()) continue;
    INFO(line->substr(0, 300));
    CHECK_FALSE(is_error(*parse_json(*line)));
    order.push_back(id);
  }
  s.close_stdin();
  while (auto line = s.read_line(10000)) {
    if (!id_of(*line).empty()) order.push_back(id_of(*line));
  }
  std::string said;
  for (const std::string& id : order) said += id + " ";
  INFO("answered in the order " << said);
  auto at = [&](const char* id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
  CHECK(order.size() == 4);
  CHECK(at("\"c1\"") == std::ptrdiff_t(order.size()));  // Never answered.
  CHECK(at("\"s\"") < at("\"c2\""));
  CHECK(at("\"c2\"") < at("\"t\""));
  // One press, at the device point the screenshot's session maps [683, 384]
  // to, and the key after the click.
  std::vector<input_event> events = probe.take();
  INFO(describe(events));
  size_t press = events.size(), key = events.size(), presses = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == XCB_BUTTON_PRESS) {
      ++presses;
      press = i;
      CHECK(events[i].root_x == device_x(683));
      CHECK(events[i].root_y == device_y(384));
    }
    if (events[i].type == XCB_KEY_PRESS && probe.keysym_of(events[i].detail) == 'a') key = i;
  }
  CHECK(presses == 1);
  CHECK(press < key);
  CHECK(key < events.size());
}
