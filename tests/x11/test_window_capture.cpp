// One window as the screen (the windows toolset's `window` for screenshot
// and zoom) against a real Xvfb, with and without a window manager
// (openbox), and without the Composite extension: what the image shows is
// read from its pixels, and where a click in the window's session lands is
// read from the ButtonPress events the window itself received.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kWindowsOn = {{"CU_TOOLSETS", "windows"}};
constexpr rgb kRed{255, 0, 0}, kGreen{0, 255, 0}, kBlue{0, 0, 255};

// A client of its own with one ordinary (managed) top-level window of one
// colour, which records the button presses it receives.
class painted_window {
 public:
  painted_window(const std::string& display, int x, int y, int w, int h, rgb colour,
                 const std::string& title) {
    int screen_number = 0;
    conn_ = xcb_connect(display.c_str(), &screen_number);
    REQUIRE(xcb_connection_has_error(conn_) == 0);
    xcb_screen_t* screen = xcb_setup_roots_iterator(xcb_get_setup(conn_)).data;
    root_ = screen->root;
    window_ = xcb_generate_id(conn_);
    const uint32_t pixel = (uint32_t(colour[0]) << 16) | (uint32_t(colour[1]) << 8) | colour[2];
    const uint32_t values[] = {pixel, XCB_EVENT_MASK_BUTTON_PRESS |
                                          XCB_EVENT_MASK_BUTTON_RELEASE |
                                          XCB_EVENT_MASK_STRUCTURE_NOTIFY};
    xcb_create_window(conn_, XCB_COPY_FROM_PARENT, window_, root_, int16_t(x), int16_t(y),
                      uint16_t(w), uint16_t(h), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      screen->root_visual, XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, values);
    xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, window_, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
                        8, uint32_t(title.size()), title.data());
    // WM_CLASS, as every application's window has: without a window
    // manager it is what makes a top-level window a client.
    const char cls[] = "cu-painted\0CuPainted";
    xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, window_, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING,
                        8, sizeof cls, cls);
    // A user-given position, so a window manager keeps it.
    // Static gravity: a position asked for is the inside's, not the frame's.
    uint32_t hints[18] = {};
    hints[0] = 1 | 2 | (1 << 9);  // USPosition | USSize | PWinGravity
    hints[1] = uint32_t(x);
    hints[2] = uint32_t(y);
    hints[3] = uint32_t(w);
    hints[4] = uint32_t(h);
    hints[17] = XCB_GRAVITY_STATIC;
    xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, window_, XCB_ATOM_WM_NORMAL_HINTS,
                        XCB_ATOM_WM_SIZE_HINTS, 32, 18, hints);
    xcb_map_window(conn_, window_);
    xcb_flush(conn_);
    // A window manager that has only just started may not have begun to
    // handle requests (openbox sets _NET_SUPPORTING_WM_CHECK before it
    // reads its first MapRequest, and one that came too early is lost): ask
    // again every half second until the window is viewable.
    int64_t asked = now_ms();
    wait_until([&] {
      if (viewable()) return true;
      if (now_ms() - asked > 500) {
        xcb_map_window(conn_, window_);
        xcb_flush(conn_);
        asked = now_ms();
      }
      return false;
    }, "the window to be viewable");
  }
  ~painted_window() { xcb_disconnect(conn_); }
  painted_window(const painted_window&) = delete;
  painted_window& operator=(const painted_window&) = delete;

  xcb_window_t id() const { return window_; }

  bool viewable() {
    auto* a = xcb_get_window_attributes_reply(conn_, xcb_get_window_attributes(conn_, window_),
                                              nullptr);
    bool v = a != nullptr && a->map_state == XCB_MAP_STATE_VIEWABLE;
    free(a);
    return v;
  }

  // Its inside top-left corner on the screen.
  std::pair<int, int> position() {
    auto* t = xcb_translate_coordinates_reply(
        conn_, xcb_translate_coordinates(conn_, window_, root_, 0, 0), nullptr);
    REQUIRE(t != nullptr);
    std::pair<int, int> p{t->dst_x, t->dst_y};
    free(t);
    return p;
  }

  // Asks to be moved (a window manager carries it out, perhaps a pixel
  // off), and waits until X shows the window within 2 pixels of there.
  void move_to(int x, int y) {
    const uint32_t values[] = {uint32_t(x), uint32_t(y)};
    xcb_configure_window(conn_, window_, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y, values);
    xcb_flush(conn_);
    wait_until([&] {
      auto [px, py] = position();
      return std::abs(px - x) <= 2 && std::abs(py - y) <= 2;
    }, "the window to move");
  }

  void raise() {
    const uint32_t values[] = {XCB_STACK_MODE_ABOVE};
    xcb_configure_window(conn_, window_, XCB_CONFIG_WINDOW_STACK_MODE, values);
    xcb_flush(conn_);
  }

  // The button presses received so far, as (button, x, y) in the window;
  // a round trip first, so everything the server sent has arrived.
  std::vector<std::array<int, 3>> presses() {
    free(xcb_get_input_focus_reply(conn_, xcb_get_input_focus(conn_), nullptr));
    while (xcb_generic_event_t* ev = xcb_poll_for_event(conn_)) {
      if ((ev->response_type & 0x7f) == XCB_BUTTON_PRESS) {
        auto* b = reinterpret_cast<xcb_button_press_event_t*>(ev);
        if (b->event == window_) presses_.push_back({b->detail, b->event_x, b->event_y});
      }
      free(ev);
    }
    return presses_;
  }

  void destroy() {
    xcb_destroy_window(conn_, window_);
    free(xcb_get_input_focus_reply(conn_, xcb_get_input_focus(conn_), nullptr));
  }

 private:
  xcb_connection_t* conn_ = nullptr;
  xcb_window_t root_ = XCB_NONE;
  xcb_window_t window_ = XCB_NONE;
  std::vector<std::array<int, 3>> presses_;
};

std::string str(simdjson::dom::element e, const char* k) {
  std::string_view v;
  INFO(k);
  REQUIRE(e[k].get(v) == simdjson::SUCCESS);
  return std::string(v);
}

// How many pixels of img are not colour.
int pixels_not(const rgb_image& img, rgb colour) {
  int n = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) n += img.at(x, y) != colour;
  }
  return n;
}

// Where image point (x, y) of an image iw x ih of a device area dw x dh
// lands: the centre of its footprint, as the contract maps it.
int map_to_device(int v, int image, int device) { return int((v + 0.5) * device / image); }

// No button is down on the display.
bool buttons_up(x_observer& obs) {
  xcb_connection_t* c = obs.connection();
  auto* p = xcb_query_pointer_reply(c, xcb_query_pointer(c, obs.root()), nullptr);
  REQUIRE(p != nullptr);
  bool up = (p->mask & 0x1f00) == 0;
  free(p);
  return up;
}

// The top-level window the screen shows at (x, y).
xcb_window_t top_level_at(x_observer& obs, int x, int y) {
  xcb_connection_t* c = obs.connection();
  auto* t = xcb_translate_coordinates_reply(
      c, xcb_translate_coordinates(c, obs.root(), obs.root(), int16_t(x), int16_t(y)), nullptr);
  REQUIRE(t != nullptr);
  xcb_window_t w = t->child;
  free(t);
  return w;
}

}  // namespace

TEST_CASE("a window's screenshot shows its own pixels under a cover, and its session follows it") {
  for (bool with_wm : {false, true}) {
    CAPTURE(with_wm);
    xvfb x(1920, 1080);
    x_observer obs(x.display());
    std::optional<background_program> wm;
    if (with_wm) start_openbox(obs, wm, x.display());
    server_process s(x.display(), kWindowsOn);

    // A 1600x1000 red window (its image is 1280x800: the WXGA aspect), half
    // under a green override-redirect cover.
    painted_window red(x.display(), 40, 40, 1600, 1000, kRed, "cu-red");
    x_client cover(x.display());
    xcb_window_t green = cover.create_window(0, 0, 900, 700, kGreen);
    cover.sync();

    json_ptr shot = ok_call(s, "screenshot", "{\"window\":\"" + hex(red.id()) + "\"}");
    simdjson::dom::element sc = shot->root["result"]["structuredContent"];
    CHECK(str(sc, "window") == hex(red.id()));
    CHECK(str(sc, "source") == "composite");
    CHECK(num(sc["image"], "width") == 1280);
    CHECK(num(sc["image"], "height") == 800);
    auto [rx, ry] = red.position();
    CHECK(num(sc["device"], "x") == rx);
    CHECK(num(sc["device"], "y") == ry);
    CHECK(num(sc["device"], "width") == 1600);
    CHECK(num(sc["device"], "height") == 1000);
    rgb_image img = image_of(*shot);
    REQUIRE(img.width == 1280);
    REQUIRE(img.height == 800);
    // Red everywhere, the covered part too; a screenshot of the screen
    // shows the cover there.
    CHECK(pixels_not(img, kRed) == 0);
    rgb_image screen = image_of(*ok_call(s, "screenshot", "{}"));
    CHECK(screen.at(100, 100) == kGreen);

    // Back to the window's session (screenshot of the screen replaced it).
    ok_call(s, "screenshot", "{\"window\":\"" + hex(red.id()) + "\"}");
    // The window moves; the cover goes; a click at image (640, 400) lands
    // at the window's own pixel under it, wherever the window is now.
    red.move_to(200, 50);
    const auto [mx, my] = red.position();
    CHECK(mx != rx);
    xcb_unmap_window(cover.connection(), green);
    cover.sync();
    json_ptr click = ok_call(s, "left_click", R"({"coordinate":[640,400]})");
    const int dx = map_to_device(640, 1280, 1600), dy = map_to_device(400, 800, 1000);
    CHECK(contains(text_of(*click), "of window " + hex(red.id())));
    // A window manager that grabs the button to focus on click replays the
    // press to the window once it has seen it: wait for it.
    wait_until([&] { return !red.presses().empty(); }, "the press");
    std::vector<std::array<int, 3>> presses = red.presses();
    REQUIRE(presses.size() == 1);
    CHECK(presses[0] == std::array<int, 3>{1, dx, dy});
    // The pointer in the window's image.
    json_ptr where = ok_call(s, "cursor_position", "{}");
    CHECK(num(where->root["result"]["structuredContent"], "x") == 640);
    CHECK(num(where->root["result"]["structuredContent"], "y") == 400);

    // A zoom in the session is of the window: its top-left 128x80 image
    // pixels are its 160x100 device pixels, red.
    json_ptr zoom = ok_call(s, "zoom", R"({"region":[0,0,128,80]})");
    simdjson::dom::element zc = zoom->root["result"]["structuredContent"];
    CHECK(str(zc, "window") == hex(red.id()));
    rgb_image zoomed = image_of(*zoom);
    CHECK(zoomed.width == 160);
    CHECK(zoomed.height == 100);
    CHECK(pixels_not(zoomed, kRed) == 0);

    // Another window over the point: the press would not reach ours, so
    // nothing is pressed and the answer says why.
    painted_window blue(x.display(), 300, 300, 1200, 600, kBlue, "cu-blue");
    blue.raise();
    wait_until([&] {
      return top_level_at(obs, mx + dx, my + dy) == obs.top_level_of(blue.id());
    }, "the blue window on top of the point");
    ok_call(s, "screenshot", "{\"window\":\"" + hex(red.id()) + "\"}");
    std::string covered = error_text(s, "left_click", R"({"coordinate":[640,400]})");
    CHECK(contains(covered, "is covered by another window"));
    CHECK(contains(covered, "nothing was pressed"));
    CHECK(red.presses().size() == 1);
    CHECK(blue.presses().empty());

    // A window that is gone: its screenshot and its session's clicks are
    // clear errors; nothing is pressed.
    red.destroy();
    CHECK(contains(error_text(s, "left_click", R"({"coordinate":[10,10]})"), "no longer exists"));
    CHECK(contains(error_text(s, "screenshot", "{\"window\":\"" + hex(red.id()) + "\"}"),
                   "no longer exists"));
    CHECK(blue.presses().empty());
    CHECK(buttons_up(obs));
  }
}

TEST_CASE("without the Composite extension a window's screenshot is what the screen shows there") {
  xvfb x(1280, 800, -1, {"-extension", "Composite"});
  server_process s(x.display(), kWindowsOn);
  painted_window red(x.display(), 100, 100, 400, 300, kRed, "cu-red");
  x_client cover(x.display());
  cover.create_window(0, 0, 300, 250, kGreen);
  cover.sync();
  json_ptr shot = ok_call(s, "screenshot", "{\"window\":\"" + hex(red.id()) + "\"}");
  simdjson::dom::element sc = shot->root["result"]["structuredContent"];
  CHECK(str(sc, "source") == "screen");
  rgb_image img = image_of(*shot);
  REQUIRE(img.width == 400);
  REQUIRE(img.height == 300);
  CHECK(img.at(10, 10) == kGreen);    // Under the cover: the cover.
  CHECK(img.at(300, 200) == kRed);    // The rest: the window.
  // Clicks in the session still land on the window's pixel.
  json_ptr click = ok_call(s, "left_click", R"({"coordinate":[350,250]})");
  std::vector<std::array<int, 3>> presses = red.presses();
  REQUIRE(presses.size() == 1);
  CHECK(presses[0] == std::array<int, 3>{1, 350, 250});
  // Moved partly off the screen: only the part on screen is read.
  red.move_to(1080, 600);
  json_ptr part = ok_call(s, "screenshot", "{\"window\":\"" + hex(red.id()) + "\"}");
  rgb_image partial = image_of(*part);
  CHECK(partial.width == 200);
  CHECK(partial.height == 200);
  CHECK(pixels_not(partial, kRed) == 0);
}

TEST_CASE("window screenshots refuse what is not a window on screen, and need the windows toolset") {
  xvfb x(640, 480);
  {
    server_process s(x.display());
    CHECK(contains(error_text(s, "screenshot", R"({"window":"0x200001"})"),
                   "needs the windows toolset"));
    CHECK(contains(error_text(s, "zoom", R"({"region":[0,0,10,10],"window":"0x200001"})"),
                   "needs the windows toolset"));
  }
  server_process s(x.display(), kWindowsOn);
  x_observer obs(x.display());
  for (const char* bad : {R"("")", R"("0x")", R"("0")", R"(12)", R"("0x20000000")", R"("zz")"}) {
    CAPTURE(bad);
    CHECK(contains(error_text(s, "screenshot", std::string("{\"window\":") + bad + "}"),
                   "Invalid argument \"window\""));
  }
  CHECK(contains(error_text(s, "screenshot", "{\"window\":\"" + hex(obs.root()) + "\"}"),
                 "the root window is the screen"));
  // Unmapped: not on screen.
  painted_window w(x.display(), 10, 10, 100, 100, kRed, "cu-unmapped");
  xcb_unmap_window(obs.connection(), w.id());
  obs.sync();
  CHECK(contains(error_text(s, "screenshot", "{\"window\":\"" + hex(w.id()) + "\"}"),
                 "is not on screen"));
  // A region beyond the window's image.
  xcb_map_window(obs.connection(), w.id());
  obs.sync();
  ok_call(s, "screenshot", "{\"window\":\"" + hex(w.id()) + "\"}");
  CHECK(contains(error_text(s, "zoom", R"({"region":[0,0,101,50]})"), "Invalid argument \"region\""));
  // A window far larger than the screen (6000x4000 > 4096x4096 pixels) is
  // read where it is on screen.
  painted_window huge(x.display(), -100, -100, 6000, 4000, kRed, "cu-huge");
  json_ptr shot = ok_call(s, "screenshot", "{\"window\":\"" + hex(huge.id()) + "\"}");
  simdjson::dom::element device = shot->root["result"]["structuredContent"]["device"];
  CHECK(num(device, "x") == 0);
  CHECK(num(device, "y") == 0);
  CHECK(num(device, "width") == 640);
  CHECK(num(device, "height") == 480);
  CHECK(pixels_not(image_of(*shot), kRed) == 0);
}
