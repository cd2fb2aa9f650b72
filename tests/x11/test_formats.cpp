// Images that fit every client: screens of no model aspect scaled within
// the caps (with clicks landing on the right device pixels), and `auto`
// switching to JPEG exactly when the PNG result line would pass
// CU_MAX_RESULT_BYTES.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "support/harness.h"
#include "support/input_probe.h"

using namespace cu::test;

namespace {

std::string_view field(const json_line& r, const char* name) {
  std::string_view v;
  if (r.root["result"]["structuredContent"][name].get(v) != simdjson::SUCCESS) {
    throw std::runtime_error(std::string("no structuredContent.") + name);
  }
  return v;
}

std::string_view mime_of(const json_line& r) {
  std::string_view v;
  if (r.root["result"]["content"].at(0)["mimeType"].get(v) != simdjson::SUCCESS) {
    throw std::runtime_error("no mimeType: " + r.text.substr(0, 200));
  }
  return v;
}

// The device pixel an image point maps to, as the contract defines it.
int to_device(int image, int image_len, int device_len) {
  return int(std::floor((image + 0.5) * device_len / image_len));
}

// A screen of this size: its screenshot has the expected size, a painted
// mark shows at its scaled place, and clicks at image points land on the
// device pixels the session maps them to.
void check_scaled_screen(int dw, int dh, int iw, int ih) {
  CAPTURE(dw, dh);
  xvfb x(dw, dh);
  x_client painter(x.display());
  xcb_window_t w = painter.create_window(0, 0, dw, dh, {30, 30, 30});
  const int mx = dw / 2, my = dh / 3, mw = dw / 10, mh = dh / 10;
  painter.fill(w, mx, my, mw, mh, {230, 120, 10});
  painter.sync();
  server_process s(x.display());
  auto shot = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*shot));
  rgb_image img = image_of(*shot);
  CHECK(img.width == iw);
  CHECK(img.height == ih);
  CHECK(int64_t(img.width) * img.height <= 1366 * 768);
  CHECK(std::max(img.width, img.height) <= 1568);
  const int cx = (mx + mw / 2) * iw / dw, cy = (my + mh / 2) * ih / dh;
  CHECK(img.at(cx, cy) == rgb{230, 120, 10});
  CHECK(img.at(2, 2) == rgb{30, 30, 30});

  // A zoom of the whole screen is capped the same way.
  auto zoom = s.call_tool("zoom", "{\"region\":[0,0," + std::to_string(iw) + "," +
                                      std::to_string(ih) + "]}");
  REQUIRE_FALSE(is_error(*zoom));
  rgb_image z = image_of(*zoom);
  CHECK(int64_t(z.width) * z.height <= 1366 * 768);
  CHECK(std::max(z.width, z.height) <= 1568);

  input_probe probe(x.display());
  for (auto [px, py] : {std::pair{0, 0}, std::pair{iw - 1, ih - 1}, std::pair{iw / 3, ih / 2},
                        std::pair{cx, cy}}) {
    CAPTURE(px, py);
    probe.clear();
    auto r = s.call_tool("left_click", "{\"coordinate\":" + coord(px, py) + "}");
    REQUIRE_FALSE(is_error(*r));
    const int ex = to_device(px, iw, dw), ey = to_device(py, ih, dh);
    CHECK(text_of(*r) == "left_click at (" + std::to_string(ex) + ", " + std::to_string(ey) + ")");
    auto presses = of_types(probe.take(), {XCB_BUTTON_PRESS});
    REQUIRE(presses.size() == 1);
    CHECK(presses[0].root_x == ex);
    CHECK(presses[0].root_y == ey);
  }
}

// A 1024x768 screen (no downscale) with a noise square whose PNG is large,
// and flat blocks JPEG keeps within a few levels.
struct busy_screen {
  xvfb x{1024, 768};
  x_client painter{x.display()};
  busy_screen() {
    xcb_window_t w = painter.create_window(0, 0, 1024, 768, {200, 200, 200});
    painter.paint_noise(w, 256, 256, 11);
    painter.fill(w, 400, 100, 200, 200, {20, 90, 160});
    painter.fill(w, 700, 400, 200, 200, {240, 200, 40});
    painter.sync();
  }
};

}  // namespace

TEST_CASE("a 3440x1440 screen is scaled within the caps, and clicks land right") {
  check_scaled_screen(3440, 1440, 1568, 656);
}

TEST_CASE("a 3840x2160 screen is scaled to 1366x768, and clicks land right") {
  check_scaled_screen(3840, 2160, 1366, 768);
}

TEST_CASE("auto sends JPEG exactly when the PNG line would pass the budget") {
  busy_screen screen;
  // The PNG result line of this screen, as the first call of a server.
  size_t png_line = 0;
  rgb_image png;
  {
    server_process s(screen.x.display(), {{"CU_IMAGE_FORMAT", "png"}});
    auto r = s.call_tool("screenshot");
    REQUIRE(mime_of(*r) == "image/png");
    png_line = r->text.size() + 1;  // The newline ends the line.
    png = image_of(*r);
  }
  INFO("PNG line " << png_line << " bytes");
  REQUIRE(png_line > 65536);  // Above the smallest budget allowed.
  {
    // A budget the line fits exactly: PNG, byte for byte the same line.
    server_process s(screen.x.display(), {{"CU_MAX_RESULT_BYTES", std::to_string(png_line)}});
    auto r = s.call_tool("screenshot");
    CHECK(mime_of(*r) == "image/png");
    CHECK(field(*r, "format") == "png");
    CHECK(r->text.size() + 1 == png_line);
  }
  {
    // One byte less: JPEG, within the budget, and the right pixels.
    server_process s(screen.x.display(),
                     {{"CU_MAX_RESULT_BYTES", std::to_string(png_line - 1)}});
    auto r = s.call_tool("screenshot");
    CHECK(mime_of(*r) == "image/jpeg");
    CHECK(field(*r, "format") == "jpeg");
    CHECK(r->text.size() + 1 <= png_line - 1);
    rgb_image jpeg = image_of(*r);
    REQUIRE(jpeg.width == png.width);
    REQUIRE(jpeg.height == png.height);
    for (auto [px, py] : {std::pair{500, 200}, std::pair{800, 500}, std::pair{50, 700}}) {
      for (int c = 0; c < 3; ++c) {
        CHECK(std::abs(int(jpeg.at(px, py)[c]) - int(png.at(px, py)[c])) <= 4);
      }
    }
    double error = 0;
    for (size_t i = 0; i < png.pixels.size(); ++i) {
      error += std::abs(int(jpeg.pixels[i]) - int(png.pixels[i]));
    }
    CHECK(error / double(png.pixels.size()) < 12.0);
    // The next screenshot of the same screen is the same JPEG, from the cache.
    auto again = s.call_tool("screenshot");
    CHECK(mime_of(*again) == "image/jpeg");
  }
}

TEST_CASE("CU_IMAGE_FORMAT=jpeg sends JPEG even when PNG would fit, with a .jpg on disk") {
  xvfb x(1024, 768);
  server_process s(x.display(), {{"CU_IMAGE_FORMAT", "jpeg"}});
  auto r = s.call_tool("screenshot", R"({"save_to_disk":true})");
  REQUIRE_FALSE(is_error(*r));
  CHECK(mime_of(*r) == "image/jpeg");
  std::string saved(field(*r, "saved_to"));
  CHECK(saved.size() > 4);
  CHECK(saved.substr(saved.size() - 4) == ".jpg");
  CHECK(image_of(*r).width == 1024);
}
