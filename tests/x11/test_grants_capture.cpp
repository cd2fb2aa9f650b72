// Screenshot filtering (docs/grants.md) against a real Xvfb: two xterms
// side by side, "granted" and "other", each with a background of its own
// and a line of text, a server with CU_GRANTS=enforce and request_access
// apps ["granted"]. Every capture path (screenshot, zoom, a window's
// capture, find_text, screenshot_find, screenshot_marks, since crops and
// the trace's frames) shows the other window's pixels black and the
// granted one's as X has them; a window moved over the granted one is
// black where it is; granting "other" shows it at once although nothing
// was drawn (the cache's epoch); CU_DENY_APPS keeps it black whatever is
// granted. Each case runs without a window manager and under openbox.
// Pixel checks compare the server's images (1280x800 is sent as is, so
// image pixels are root pixels) with what X has, read on a connection of
// the test's own.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/marks_map.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

constexpr int kWidth = 1280, kHeight = 800;

// A top-level window's box on the root, border included (what a capture
// hides of a window the grants keep out).
area box_of(x_observer& obs, xcb_window_t top) {
  xcb_get_geometry_reply_t* g =
      xcb_get_geometry_reply(obs.connection(), xcb_get_geometry(obs.connection(), top), nullptr);
  REQUIRE(g != nullptr);
  area a{g->x, g->y, g->width + 2 * g->border_width, g->height + 2 * g->border_width};
  free(g);
  return a;
}

area clip(area a) {
  const int x0 = std::max(a.x, 0), y0 = std::max(a.y, 0);
  const int x1 = std::min(a.x + a.w, kWidth), y1 = std::min(a.y + a.h, kHeight);
  return area{x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
}

bool inside(const area& a, int x, int y) {
  return x >= a.x && y >= a.y && x < a.x + a.w && y < a.y + a.h;
}

// The whole screen as X has it now, as RGB (Xvfb's 24-bit TrueColor:
// blue, green, red, pad in each 4-byte pixel).
rgb_image x_screen(x_observer& obs) {
  xcb_connection_t* c = obs.connection();
  xcb_get_image_reply_t* r = xcb_get_image_reply(
      c, xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, obs.root(), 0, 0, kWidth, kHeight, ~0u),
      nullptr);
  REQUIRE(r != nullptr);
  const uint8_t* d = xcb_get_image_data(r);
  rgb_image img;
  img.width = kWidth;
  img.height = kHeight;
  img.pixels.resize(size_t(kWidth) * kHeight * 3);
  for (size_t i = 0; i < size_t(kWidth) * kHeight; ++i) {
    img.pixels[i * 3] = d[i * 4 + 2];
    img.pixels[i * 3 + 1] = d[i * 4 + 1];
    img.pixels[i * 3 + 2] = d[i * 4];
  }
  free(r);
  return img;
}

// Pixels of part (in image pixels, placed at image (ox, oy)) inside box
// that are not black.
int lit_in(const rgb_image& part, int ox, int oy, const area& box) {
  int n = 0;
  for (int y = 0; y < part.height; ++y) {
    for (int x = 0; x < part.width; ++x) {
      if (!inside(box, ox + x, oy + y)) continue;
      if (part.at(x, y) != rgb{0, 0, 0}) ++n;
    }
  }
  return n;
}

// Pixels of box, outside not_in, where the image differs from X.
int differing_in(const rgb_image& img, const rgb_image& x, const area& box,
                 const area& not_in = {}) {
  int n = 0;
  const area b = clip(box);
  for (int y = b.y; y < b.y + b.h; ++y) {
    for (int xx = b.x; xx < b.x + b.w; ++xx) {
      if (inside(not_in, xx, y)) continue;
      if (img.at(xx, y) != x.at(xx, y)) ++n;
    }
  }
  return n;
}

// Pixels of box that X shows black: a hidden box must have plenty that are
// not, or a black image proves nothing.
int lit_on_x(const rgb_image& x, const area& box) { return lit_in(x, 0, 0, clip(box)); }

// How many matches a find answered.
size_t matches(const json_line& r) {
  simdjson::dom::array a;
  INFO(r.text.substr(0, 600));
  REQUIRE(r.root["result"]["structuredContent"]["matches"].get(a) == simdjson::SUCCESS);
  return a.size();
}

// Every text block of a response, joined.
std::string all_text(const json_line& r) {
  std::string out;
  for (size_t i = 0; i < 4; ++i) out += text_of(r, i) + "\n";
  return out;
}

std::string find_args(const std::string& text) { return "{\"text\":\"" + text + "\"}"; }

// An xterm of instance name (WM_CLASS) and title name, with a background
// of its own, showing one line of text; the constructor returns once the
// text is on the screen. (xterm_window in support/ takes no name or
// colours, and its shell prints nothing.)
struct named_xterm {
  named_xterm(x_observer& obs, const std::string& display, const std::string& name,
              const char* bg, int x, int y, const std::string& text) {
    // A blank line and an indent keep the text off the window's corner,
    // which OCR reads badly next to black (see test_find_text.cpp).
    const std::string script = "printf '\\n   %s\\n' '" + text + "'; exec cat > /dev/null";
    program.emplace(std::vector<std::string>{"xterm", "-name", name, "-T", name, "-bg", bg, "-fg",
                                             "black", "-geometry",
                                             "50x12+" + std::to_string(x) + "+" +
                                                 std::to_string(y),
                                             "-e", "sh", "-c", script},
                    display);
    wait_until([&] { return (client = obs.client_named(name)) != XCB_NONE; },
               "the xterm's window");
    // The text is drawn when X shows black (the foreground) in the window.
    wait_until(
        [&] {
          const area a = clip(box_of(obs, obs.top_level_of(client)));
          const rgb_image s = x_screen(obs);
          for (int yy = a.y; yy < a.y + a.h; ++yy) {
            for (int xx = a.x; xx < a.x + a.w; ++xx) {
              if (s.at(xx, yy) == rgb{0, 0, 0}) return true;
            }
          }
          return false;
        },
        "the xterm's text");
  }
  std::optional<background_program> program;
  xcb_window_t client = XCB_NONE;
};

// The two xterms, with or without openbox.
struct scene {
  explicit scene(bool wm) : x(kWidth, kHeight), obs(x.display()) {
    if (wm) start_openbox(obs, manager, x.display());
    granted.emplace(obs, x.display(), "granted", "#c0e0ff", 40, 80, "granted words here");
    other.emplace(obs, x.display(), "other", "#ffe0b0", 680, 80, "secret plans here");
    if (wm) {
      wait_until(
          [&] {
            return obs.cardinals(granted->client, "_NET_FRAME_EXTENTS").size() == 4 &&
                   obs.cardinals(other->client, "_NET_FRAME_EXTENTS").size() == 4;
          },
          "openbox to frame both xterms");
    }
    // The xterms draw their text and cursor in their own time after the
    // first black pixel: wait until X's screen holds still for 100 ms, so
    // the pixels the checks compare with are the ones the server reads.
    rgb_image last = x_screen(obs);
    int64_t still_since = now_ms();
    wait_until(
        [&] {
          rgb_image now = x_screen(obs);
          if (now.pixels != last.pixels) {
            last = std::move(now);
            still_since = now_ms();
          }
          return now_ms() - still_since >= 100;
        },
        "the xterms to finish drawing");
  }
  area granted_box() { return box_of(obs, obs.top_level_of(granted->client)); }
  area other_box() { return box_of(obs, obs.top_level_of(other->client)); }

  // Moves other's top-left to about (x, y) and waits for X to show it
  // there. It was mapped last, so it is above the granted one (checked).
  void move_other(int to_x, int to_y) {
    const uint32_t values[] = {uint32_t(to_x), uint32_t(to_y)};
    xcb_configure_window(obs.connection(), other->client,
                         XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y, values);
    obs.sync();
    wait_until(
        [&] {
          const area b = other_box();
          UNSCOPED_INFO("other is at " << b);
          return std::abs(b.x - to_x) < 20 && std::abs(b.y - to_y) < 40;
        },
        "the other xterm to move over the granted one");
    const std::vector<xcb_window_t> tops = obs.top_levels();
    const auto low = std::find(tops.begin(), tops.end(), obs.top_level_of(granted->client));
    const auto high = std::find(tops.begin(), tops.end(), obs.top_level_of(other->client));
    REQUIRE(low < high);
  }

  xvfb x;
  x_observer obs;
  std::optional<background_program> manager;
  std::optional<named_xterm> granted, other;
};

const std::map<std::string, std::string> kEnforce = {{"CU_GRANTS", "enforce"},
                                                     {"CU_TOOLSETS", "windows,vision,marks"}};

void grant(server_process& s, const std::string& apps) {
  ok_call(s, "request_access", "{\"apps\":" + apps + ",\"reason\":\"test\"}");
}

// A zoom's PNG (base64) of the image region, from a server that hides
// nothing: a template of what X shows there.
std::string template_of(const std::string& display, int x0, int y0, int x1, int y1) {
  server_process open(display);
  json_ptr z = ok_call(open, "zoom", "{\"region\":" + region(x0, y0, x1, y1) + "}");
  std::string_view data;
  REQUIRE(z->root["result"]["content"].at(0)["data"].get(data) == simdjson::SUCCESS);
  return std::string(data);
}

// The image blocks of a since answer, each with its place ("changed").
std::vector<std::pair<area, rgb_image>> crops_of(const json_line& r) {
  std::vector<std::pair<area, rgb_image>> out;
  simdjson::dom::array changed;
  REQUIRE(r.root["result"]["structuredContent"]["changed"].get(changed) == simdjson::SUCCESS);
  std::vector<area> boxes;
  for (simdjson::dom::element c : changed) {
    std::vector<int64_t> b = int_array(simdjson::minify(c["box"]));
    REQUIRE(b.size() == 4);
    boxes.push_back(area{int(b[0]), int(b[1]), int(b[2]), int(b[3])});
  }
  simdjson::dom::array content;
  REQUIRE(r.root["result"]["content"].get(content) == simdjson::SUCCESS);
  size_t i = 0;
  for (simdjson::dom::element b : content) {
    std::string_view type, data;
    if (b["type"].get(type) != simdjson::SUCCESS || type != "image") continue;
    REQUIRE(b["data"].get(data) == simdjson::SUCCESS);
    REQUIRE(i < boxes.size());
    out.emplace_back(boxes[i++], decode_png_base64(data));
  }
  return out;
}

int64_t look_of(const json_line& r) { return num(r.root["result"]["structuredContent"], "look"); }

}  // namespace

TEST_CASE("with enforced grants every capture path shows a window not granted black and the "
          "granted one as X has it") {
  const bool wm = GENERATE(false, true);
  INFO("window manager: " << (wm ? "openbox" : "none"));
  scene sc(wm);
  const area g = sc.granted_box(), o = sc.other_box();
  INFO("granted " << g << " other " << o);
  // Templates from X's own pixels, read before any server hides anything.
  const std::string granted_template = template_of(sc.x.display(), g.x + 10, g.y + 10,
                                                   g.x + 130, g.y + 60);
  const std::string other_template = template_of(sc.x.display(), o.x + 10, o.y + 10,
                                                 o.x + 130, o.y + 60);
  server_process s(sc.x.display(), kEnforce);
  grant(s, "[\"granted\"]");
  const rgb_image on_x = x_screen(sc.obs);
  REQUIRE(lit_on_x(on_x, o) > o.w * o.h / 2);

  SECTION("screenshot") {
    rgb_image img = image_of(*ok_call(s, "screenshot"));
    REQUIRE(img.width == kWidth);
    CHECK(lit_in(img, 0, 0, o) == 0);
    CHECK(differing_in(img, on_x, g) == 0);
  }
  SECTION("zoom") {
    rgb_image img = image_of(*ok_call(s, "zoom", "{\"region\":[0,0,1280,800]}"));
    REQUIRE(img.width == kWidth);
    CHECK(lit_in(img, 0, 0, o) == 0);
    CHECK(differing_in(img, on_x, g) == 0);
  }
  SECTION("a window's capture: refused for the other, whole for the granted one") {
    const std::string why =
        error_text(s, "screenshot", "{\"window\":\"" + hex(sc.other->client) + "\"}");
    CHECK(contains(why, "a capture of window " + hex(sc.other->client) + " was refused: window " +
                            hex(sc.other->client) + " is a window of \"other\", which is not granted"));
    CHECK(contains(why, "request_access"));
    CHECK(contains(error_text(s, "zoom", "{\"window\":\"" + hex(sc.other->client) +
                                             "\",\"region\":[0,0,10,10]}"),
                   "not granted"));
    CHECK(contains(error_text(s, "find_text", "{\"text\":\"secret\",\"window\":\"" +
                                                  hex(sc.other->client) + "\"}"),
                   "not granted"));
    json_ptr r = ok_call(s, "screenshot", "{\"window\":\"" + hex(sc.granted->client) + "\"}");
    rgb_image img = image_of(*r);
    const area inner = x_area(sc.obs, sc.granted->client);
    REQUIRE(img.width == inner.w);
    int differing = 0;
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) {
        if (img.at(x, y) != on_x.at(inner.x + x, inner.y + y)) ++differing;
      }
    }
    CHECK(differing == 0);
  }
  SECTION("find_text reads the granted window's text and not the other's") {
    CHECK(matches(*ok_call(s, "find_text", find_args("granted words"))) == 1);
    CHECK(matches(*ok_call(s, "find_text", find_args("secret plans"))) == 0);
    CHECK(matches(*ok_call(s, "find_text", find_args("plans here"))) == 0);
  }
  SECTION("screenshot_find finds a template from the granted window and not one from the other") {
    CHECK(matches(*ok_call(s, "screenshot_find",
                           "{\"template\":\"" + granted_template + "\"}")) == 1);
    CHECK(matches(*ok_call(s, "screenshot_find",
                           "{\"template\":\"" + other_template + "\"}")) == 0);
  }
  SECTION("screenshot_marks' image and OCR") {
    json_ptr r = ok_call(s, "screenshot_marks", R"({"sources":["ocr"]})");
    rgb_image img = image_of(*r);
    REQUIRE(img.width == kWidth);
    CHECK(lit_in(img, 0, 0, o) == 0);
    bool granted_read = false;
    std::string names;
    for (const map_mark& m : marks_of(*r)) names += m.name + "|";
    INFO("marks " << names);
    for (const map_mark& m : marks_of(*r)) {
      CHECK_FALSE(contains(m.name, "secret"));
      CHECK_FALSE(contains(m.name, "plans"));
      granted_read = granted_read || contains(m.name, "granted");
    }
    CHECK(granted_read);
  }
  SECTION("a window moved over the granted one is black where it is, in screenshots and since "
          "crops") {
    const int64_t look = look_of(*ok_call(s, "screenshot"));
    sc.move_other(g.x + 100, g.y + 40);
    const area moved = sc.other_box();
    INFO("moved to " << moved);
    const rgb_image now_x = x_screen(sc.obs);
    REQUIRE(lit_on_x(now_x, moved) > moved.w * moved.h / 2);
    json_ptr since = ok_call(s, "screenshot", "{\"since\":" + std::to_string(look) + "}");
    int crops = 0;
    for (const auto& [place, part] : crops_of(*since)) {
      ++crops;
      CHECK(lit_in(part, place.x, place.y, moved) == 0);
    }
    CHECK(crops > 0);
    rgb_image img = image_of(*ok_call(s, "screenshot"));
    CHECK(lit_in(img, 0, 0, moved) == 0);
    CHECK(differing_in(img, now_x, g, moved) == 0);
  }
  SECTION("granting the other application shows it at once, though nothing was drawn") {
    const json_ptr before = ok_call(s, "screenshot");
    CHECK(lit_in(image_of(*before), 0, 0, o) == 0);
    const int64_t look = look_of(*before);
    grant(s, "[\"granted\",\"other\"]");
    json_ptr since = ok_call(s, "screenshot", "{\"since\":" + std::to_string(look) + "}");
    CHECK(contains(all_text(*since), "the grants changed"));
    rgb_image img = image_of(*ok_call(s, "screenshot"));
    CHECK(differing_in(img, on_x, o) == 0);
    CHECK(differing_in(img, on_x, g) == 0);
    ok_call(s, "screenshot", "{\"window\":\"" + hex(sc.other->client) + "\"}");
  }
}

TEST_CASE("CU_DENY_APPS keeps a window black and its capture refused even when it is granted") {
  const bool wm = GENERATE(false, true);
  INFO("window manager: " << (wm ? "openbox" : "none"));
  scene sc(wm);
  const area g = sc.granted_box(), o = sc.other_box();
  std::map<std::string, std::string> env = kEnforce;
  env["CU_DENY_APPS"] = "other";
  server_process s(sc.x.display(), env);
  grant(s, "[\"granted\",\"other\"]");
  const rgb_image on_x = x_screen(sc.obs);
  rgb_image img = image_of(*ok_call(s, "screenshot"));
  CHECK(lit_in(img, 0, 0, o) == 0);
  CHECK(differing_in(img, on_x, g) == 0);
  const std::string why =
      error_text(s, "screenshot", "{\"window\":\"" + hex(sc.other->client) + "\"}");
  CHECK(contains(why, "CU_DENY_APPS"));
}

TEST_CASE("without enforcement nothing is hidden") {
  scene sc(false);
  server_process s(sc.x.display(), {{"CU_TOOLSETS", "windows"}});
  const rgb_image on_x = x_screen(sc.obs);
  rgb_image img = image_of(*ok_call(s, "screenshot"));
  CHECK(differing_in(img, on_x, area{0, 0, kWidth, kHeight}) == 0);
  ok_call(s, "screenshot", "{\"window\":\"" + hex(sc.other->client) + "\"}");
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The trace's frames in the files of dir, each as the viewer paints it
// (a key frame whole, a later frame's crops over the one before).
std::vector<rgb_image> painted_frames(const std::string& dir) {
  constexpr std::string_view kOpen = R"(<script type="application/json" class="cu">)";
  constexpr std::string_view kClose = "</script>";
  std::vector<rgb_image> out;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::istringstream in(slurp(f));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(kOpen, 0) != 0 || !line.ends_with(kClose)) continue;
      json_ptr r = parse_json(line.substr(kOpen.size(), line.size() - kOpen.size() - kClose.size()));
      std::string_view kind;
      if (!r || r->root["kind"].get(kind) != simdjson::SUCCESS || kind != "frame") continue;
      bool key = false;
      REQUIRE(r->root["key"].get(key) == simdjson::SUCCESS);
      REQUIRE((key || !out.empty()));
      rgb_image img = key ? rgb_image{} : out.back();
      simdjson::dom::array crops;
      REQUIRE(r->root["crops"].get(crops) == simdjson::SUCCESS);
      for (simdjson::dom::element c : crops) {
        std::string_view png;
        REQUIRE(c["png"].get(png) == simdjson::SUCCESS);
        rgb_image part = decode_png_base64(png);
        if (key) {
          img = std::move(part);
          continue;
        }
        std::vector<int64_t> b = int_array(simdjson::minify(c["box"]));
        REQUIRE(b.size() == 4);
        for (int y = 0; y < part.height; ++y) {
          std::copy_n(&part.pixels[size_t(y) * size_t(part.width) * 3], size_t(part.width) * 3,
                      &img.pixels[(size_t(b[1] + y) * size_t(img.width) + size_t(b[0])) * 3]);
        }
      }
      out.push_back(std::move(img));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the trace's frames hide what captures hide, and a change of grants is a key frame") {
  const bool wm = GENERATE(false, true);
  INFO("window manager: " << (wm ? "openbox" : "none"));
  scene sc(wm);
  const area g = sc.granted_box(), o = sc.other_box();
  char tmpl[] = "/tmp/cu-grants-trace-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const rgb_image on_x = x_screen(sc.obs);
  {
    std::map<std::string, std::string> env = kEnforce;
    env["CU_TRACE_DIR"] = dir;
    server_process s(sc.x.display(), env);
    // The writer's first frame, with nothing granted yet.
    wait_until([&] { return painted_frames(dir).size() == 1; }, "the trace's first frame");
    ok_call(s, "screenshot");
    grant(s, "[\"granted\"]");
    // Input wants a frame after it; it draws nothing, so only the change
    // of grants makes that frame differ.
    ok_call(s, "mouse_move", R"({"coordinate":[100,300]})");
    wait_until([&] { return painted_frames(dir).size() >= 2; }, "the frame after the grant");
    s.close_stdin();
    REQUIRE(s.wait_exit() == 0);
  }
  const std::vector<rgb_image> frames = painted_frames(dir);
  REQUIRE(frames.size() >= 2);
  // The first frame comes before request_access: nothing is granted, and
  // both xterms are black.
  REQUIRE(frames.front().width == kWidth);
  CHECK(lit_in(frames.front(), 0, 0, g) == 0);
  CHECK(lit_in(frames.front(), 0, 0, o) == 0);
  // The last shows the granted one, though granting it drew nothing.
  CHECK(lit_in(frames.back(), 0, 0, o) == 0);
  CHECK(differing_in(frames.back(), on_x, g) == 0);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}
