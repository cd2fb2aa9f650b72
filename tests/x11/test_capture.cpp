// Screenshots and zooms of a real Xvfb showing known pixels.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "support/harness.h"
#include "util/base64.h"

using namespace cu::test;

namespace {

constexpr rgb kBackground{20, 20, 20};

struct painted_rect {
  int x, y, w, h;
  rgb colour;
};

constexpr painted_rect kRects[] = {
    {0, 0, 60, 60, {250, 220, 0}},          // Top-left corner.
    {100, 100, 300, 200, {200, 30, 40}},
    {900, 500, 240, 160, {30, 190, 60}},
    {1600, 850, 250, 180, {40, 60, 210}},
    {1860, 1020, 60, 60, {255, 255, 255}},  // Bottom-right corner.
};

// Covers the whole 1920x1080 screen with the background and the rectangles.
void paint_scene(x_client& x) {
  xcb_window_t w = x.create_window(0, 0, 1920, 1080, kBackground);
  for (const painted_rect& r : kRects) x.fill(w, r.x, r.y, r.w, r.h, r.colour);
  x.sync();
}

// The image pixel whose footprint holds device pixel (dx, dy) on 1920x1080.
int to_image_x(double dx) { return int(dx * 1366 / 1920); }
int to_image_y(double dy) { return int(dy * 768 / 1080); }

void check_scene(const rgb_image& img) {
  REQUIRE(img.width == 1366);
  REQUIRE(img.height == 768);
  for (const painted_rect& r : kRects) {
    INFO("rect at " << r.x << "," << r.y);
    int cx = to_image_x(r.x + r.w / 2.0), cy = to_image_y(r.y + r.h / 2.0);
    CHECK(img.at(cx, cy) == r.colour);
    // Two image pixels inside each edge are still pure colour...
    int x0 = to_image_x(r.x) + 2, x1 = to_image_x(r.x + r.w) - 3;
    int y0 = to_image_y(r.y) + 2, y1 = to_image_y(r.y + r.h) - 3;
    CHECK(img.at(x0, y0) == r.colour);
    CHECK(img.at(x1, y1) == r.colour);
    // ...and two outside are pure background, where there is an outside.
    if (r.x > 0) CHECK(img.at(to_image_x(r.x) - 2, cy) == kBackground);
    if (r.x + r.w < 1920) CHECK(img.at(to_image_x(r.x + r.w) + 2, cy) == kBackground);
  }
  CHECK(img.at(0, 0) == kRects[0].colour);
  CHECK(img.at(1365, 767) == kRects[4].colour);
}

}  // namespace

TEST_CASE("a screenshot of a 1920x1080 screen is a 1366x768 PNG with each colour at its scaled place") {
  xvfb x;
  x_client painter(x.display());
  paint_scene(painter);
  server_process s(x.display());
  auto r = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*r));
  std::string_view mime;
  REQUIRE(r->root["result"]["content"].at(0)["mimeType"].get(mime) == simdjson::SUCCESS);
  CHECK(mime == "image/png");
  check_scene(image_of(*r));
}

TEST_CASE("without MIT-SHM the screenshot falls back to GetImage and is still exact") {
  // "-extension MIT-SHM" switches the extension off in Xvfb.
  xvfb x(1920, 1080, -1, {"-extension", "MIT-SHM"});
  x_client painter(x.display());
  paint_scene(painter);
  server_process s(x.display());
  auto r = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*r));
  check_scene(image_of(*r));
}

TEST_CASE("a screen with no model resolution of its aspect ratio is captured unscaled") {
  xvfb x(1000, 1000);
  server_process s(x.display());
  auto img = image_of(*s.call_tool("screenshot"));
  CHECK(img.width == 1000);
  CHECK(img.height == 1000);
}

TEST_CASE("two screenshots in flight at once are both correct") {
  xvfb x;
  x_client painter(x.display());
  paint_scene(painter);
  server_process s(x.display());
  s.write_raw(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"screenshot"}})" "\n"
              R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"screenshot"}})" "\n");
  auto a = s.read_response("1");
  auto b = s.read_response("2");
  REQUIRE(a);
  REQUIRE(b);
  check_scene(image_of(*a));
  check_scene(image_of(*b));
}

TEST_CASE("zoom returns its region at device resolution with the exact pixels") {
  xvfb x;
  x_client painter(x.display());
  xcb_window_t w = painter.create_window(0, 0, 1920, 1080, kBackground);
  // One-pixel stripes that no downscale could preserve: column x is red when
  // x is even, and its green encodes x, so every pixel is identifiable.
  auto stripe = [](int dx, int dy) {
    return rgb{uint8_t(dx % 2 ? 0 : 255), uint8_t(dx & 0xff), uint8_t(dy & 0xff)};
  };
  for (int dy = 290; dy < 360; ++dy) {
    for (int dx = 400; dx < 500; ++dx) painter.fill(w, dx, dy, 1, 1, stripe(dx, dy));
  }
  painter.sync();
  server_process s(x.display());
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));

  auto r = s.call_tool("zoom", R"({"region":[300,220,330,240]})");
  REQUIRE_FALSE(is_error(*r));
  rgb_image img = image_of(*r);
  // The region maps outward: x from floor(300*1920/1366) to ceil(330*1920/1366).
  int x0 = int(std::floor(300 * 1920.0 / 1366)), x1 = int(std::ceil(330 * 1920.0 / 1366));
  int y0 = int(std::floor(220 * 1080.0 / 768)), y1 = int(std::ceil(240 * 1080.0 / 768));
  REQUIRE(img.width == x1 - x0);
  REQUIRE(img.height == y1 - y0);
  for (int y = 0; y < img.height; ++y) {
    for (int xx = 0; xx < img.width; ++xx) {
      INFO("zoom pixel " << xx << "," << y);
      REQUIRE(img.at(xx, y) == stripe(x0 + xx, y0 + y));
    }
  }
}

TEST_CASE("zoom before any screenshot establishes the session itself") {
  xvfb x;
  x_client painter(x.display());
  paint_scene(painter);
  server_process s(x.display());
  auto r = s.call_tool("zoom", R"({"region":[0,0,1366,768]})");
  REQUIRE_FALSE(is_error(*r));
  // The whole 1920x1080 screen, at the size caps allow: 1366x768.
  rgb_image img = image_of(*r);
  CHECK(img.width == 1366);
  CHECK(img.height == 768);
  CHECK(img.at(150, 150) == kRects[1].colour);
}

TEST_CASE("a zoom region outside the image is an isError result") {
  xvfb x;
  server_process s(x.display());
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  for (const char* region : {"[1300,700,1400,800]", "[10,10,5,20]", "[-1,0,10,10]",
                             "[0,0,0,10]"}) {
    INFO(region);
    auto r = s.call_tool("zoom", std::string(R"({"region":)") + region + "}");
    CHECK(is_error(*r));
    CHECK(text_of(*r).find("region") != std::string::npos);
  }
}

TEST_CASE("save_to_disk writes a private PNG file and names it") {
  xvfb x;
  server_process s(x.display());
  auto r = s.call_tool("screenshot", R"({"save_to_disk":true})");
  REQUIRE_FALSE(is_error(*r));
  std::string text = text_of(*r, 1);
  const std::string prefix = "Saved to disk: ";
  REQUIRE(text.rfind(prefix, 0) == 0);
  std::string path = text.substr(prefix.size());
  CHECK(path.rfind(s.save_dir(), 0) == 0);
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(stat(s.save_dir().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  auto again = s.call_tool("zoom", R"({"region":[0,0,10,10],"save_to_disk":true})");
  CHECK(text_of(*again, 1) != text);
}

TEST_CASE("save_to_disk writes the very file the answer carries, new or unchanged, PNG or JPEG") {
  xvfb x(1024, 768);
  for (const char* format : {"png", "jpeg"}) {
    INFO(format);
    server_process s(x.display(), {{"CU_IMAGE_FORMAT", format}});
    // The second screenshot of a screen nothing drew on is answered from
    // the cache: its file comes from the cached image.
    for (int i = 0; i < 2; ++i) {
      auto r = s.call_tool("screenshot", R"({"save_to_disk":true})");
      REQUIRE_FALSE(is_error(*r));
      std::string_view data;
      REQUIRE(r->root["result"]["content"].at(0)["data"].get(data) == simdjson::SUCCESS);
      std::vector<uint8_t> sent;
      REQUIRE(cu::base64_decode(data, sent));
      std::string_view path;
      REQUIRE(r->root["result"]["structuredContent"]["saved_to"].get(path) == simdjson::SUCCESS);
      std::ifstream in{std::string(path), std::ios::binary};
      std::vector<uint8_t> saved{std::istreambuf_iterator<char>(in),
                                 std::istreambuf_iterator<char>()};
      CHECK(saved.size() == sent.size());
      CHECK(saved == sent);
      bool unchanged = false;
      REQUIRE(r->root["result"]["structuredContent"]["unchanged"].get(unchanged) ==
              simdjson::SUCCESS);
      CHECK(unchanged == (i == 1));
    }
  }
}

TEST_CASE("a save_to_disk that fails still answers the image, with an error block about the save") {
  xvfb x;
  // A directory cannot be made under a regular file.
  server_process s(x.display(), {{"CU_SAVE_DIR", "/dev/null/screens"}});
  auto r = s.call_tool("screenshot", R"({"save_to_disk":true})");
  CHECK(is_error(*r));
  CHECK(image_of(*r).width == 1366);
  CHECK_THAT(text_of(*r, 1), Catch::StartsWith("save_to_disk failed") &&
                                 Catch::Contains("/dev/null/screens"));
  CHECK_FALSE(r->root["result"]["structuredContent"]["saved_to"].is_string());
  // The model saw the image, so coordinates refer to it.
  CHECK_FALSE(is_error(*s.call_tool("cursor_position")));
}

TEST_CASE("save_to_disk refuses a symlink planted at the save directory") {
  xvfb x;
  char target[] = "/tmp/cu-target-XXXXXX";
  REQUIRE(mkdtemp(target) != nullptr);
  std::string link = std::string(target) + "-link";
  REQUIRE(symlink(target, link.c_str()) == 0);
  server_process s(x.display(), {{"CU_SAVE_DIR", link}});
  auto r = s.call_tool("screenshot", R"({"save_to_disk":true})");
  CHECK(is_error(*r));
  unlink(link.c_str());
  rmdir(target);
}

TEST_CASE("with no X server a capture names the display and the next call tries again") {
  int n = unused_display_number();
  std::string display = ":";
  display += std::to_string(n);
  server_process s(display);
  CHECK(s.request("initialize", R"({"protocolVersion":"2025-06-18"})")->root["result"].is_object());
  CHECK(s.request("tools/list")->root["result"]["tools"].is_array());
  auto r = s.call_tool("screenshot");
  CHECK(is_error(*r));
  std::string quoted = "\"";
  quoted.append(display).append("\"");
  CHECK(text_of(*r).find(quoted) != std::string::npos);

  xvfb x(1920, 1080, n);
  auto again = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*again));
  CHECK(image_of(*again).width == 1366);
}

TEST_CASE("when the X server goes away captures fail cleanly and recover when it returns") {
  int n = unused_display_number();
  auto x = std::make_unique<xvfb>(1920, 1080, n);
  server_process s(x->display());
  REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
  x.reset();  // Xvfb exits; the server's connections break.
  // Both workers' connections are gone: every capture fails until X is back.
  for (int i = 0; i < 3; ++i) {
    auto r = s.call_tool("screenshot");
    CHECK(is_error(*r));
  }
  CHECK(s.request("ping")->root["result"].is_object());
  x = std::make_unique<xvfb>(1920, 1080, n);
  for (int i = 0; i < 3; ++i) {
    auto again = s.call_tool("screenshot");
    REQUIRE_FALSE(is_error(*again));
    CHECK(image_of(*again).width == 1366);
  }
}
