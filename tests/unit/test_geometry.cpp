// Tests for src/core/geometry.h: model resolutions and the mappings
// between screenshot image pixels and root-window device pixels.
#include "core/geometry.h"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace {

// A 1920x1080 monitor to the right of another, as one root window holds it.
const cu::coord_session kOffsetFullHd = cu::make_session({1920, 0, 1920, 1080});
const cu::coord_session kQhd = cu::make_session({0, 0, 2560, 1440});
const cu::coord_session kUnscaled = cu::make_session({100, 50, 800, 600});

// The device pixel holding the centre of image pixel i's footprint, in exact
// integer arithmetic: floor((i + 0.5) * device / image).
int centre_pixel(int i, int image, int device) {
  return int((2LL * i + 1) * device / (2LL * image));
}

cu::point to_device(const cu::coord_session& s, int x, int y) {
  auto p = cu::image_to_device(s, x, y);
  REQUIRE(p.ok());
  return *p;
}

}  // namespace

TEST_CASE("screens are captured at the model resolution of their aspect ratio") {
  using cu::size2;
  CHECK(cu::model_resolution_for({1920, 1080}) == size2{1366, 768});
  CHECK(cu::model_resolution_for({2560, 1440}) == size2{1366, 768});
  CHECK(cu::model_resolution_for({3840, 2160}) == size2{1366, 768});
  CHECK(cu::model_resolution_for({1600, 1200}) == size2{1024, 768});
  CHECK(cu::model_resolution_for({2048, 1536}) == size2{1024, 768});
  CHECK(cu::model_resolution_for({1920, 1200}) == size2{1280, 800});
  CHECK(cu::model_resolution_for({2560, 1600}) == size2{1280, 800});
}

TEST_CASE("a screen already at or below a model resolution is not scaled") {
  using cu::size2;
  CHECK(cu::model_resolution_for({1366, 768}) == size2{1366, 768});
  CHECK(cu::model_resolution_for({1280, 800}) == size2{1280, 800});
  CHECK(cu::model_resolution_for({1024, 768}) == size2{1024, 768});
  CHECK(cu::model_resolution_for({800, 600}) == size2{800, 600});
  CHECK(cu::model_resolution_for({1000, 1000}) == size2{1000, 1000});
  CHECK(cu::model_resolution_for({3000, 1000}) == size2{3000, 1000});
  CHECK(cu::model_resolution_for({0, 0}) == size2{0, 0});
}

TEST_CASE("a screen of no model aspect is scaled, aspect kept, within the caps") {
  using cu::size2;
  // Model aspects keep their model resolution.
  CHECK(cu::image_size_for({1920, 1080}) == size2{1366, 768});
  CHECK(cu::image_size_for({3840, 2160}) == size2{1366, 768});
  // The long edge caps an ultrawide; the area caps a squarish screen.
  CHECK(cu::image_size_for({3440, 1440}) == size2{1568, 656});
  CHECK(cu::image_size_for({3840, 1080}) == size2{1568, 441});
  CHECK(cu::image_size_for({1280, 1024}) == size2{1145, 916});
  CHECK(cu::image_size_for({1000, 2000}) == size2{724, 1448});
  // Small enough already: as it is.
  CHECK(cu::image_size_for({800, 600}) == size2{800, 600});
  CHECK(cu::image_size_for({1568, 600}) == size2{1568, 600});
  CHECK(cu::image_size_for({1, 1}) == size2{1, 1});
  CHECK(cu::image_size_for({0, 0}) == size2{0, 0});
  for (int w = 200; w <= 8000; w += 371) {
    for (int h = 200; h <= 5000; h += 293) {
      size2 s = cu::image_size_for({w, h});
      CAPTURE(w, h, s.w, s.h);
      CHECK(int64_t(s.w) * s.h <= cu::kMaxImageArea);
      CHECK(std::max(s.w, s.h) <= cu::kMaxImageEdge);
      CHECK(s.w <= w);
      CHECK(s.h <= h);
    }
  }
}

TEST_CASE("a session records the device area and its image size") {
  CHECK(kOffsetFullHd.device == cu::rect{1920, 0, 1920, 1080});
  CHECK(kOffsetFullHd.image == cu::size2{1366, 768});
  CHECK(kUnscaled.image == cu::size2{800, 600});
}

TEST_CASE("each image pixel maps to the device pixel at the centre of its footprint") {
  for (const cu::coord_session& s : {kOffsetFullHd, kQhd, kUnscaled}) {
    CAPTURE(s.device.w, s.device.h);
    for (int x = 0; x < s.image.w; ++x) {
      cu::point p = to_device(s, x, 0);
      CHECK(p.x == s.device.x + centre_pixel(x, s.image.w, s.device.w));
    }
    for (int y = 0; y < s.image.h; ++y) {
      cu::point p = to_device(s, 0, y);
      CHECK(p.y == s.device.y + centre_pixel(y, s.image.h, s.device.h));
    }
  }
}

TEST_CASE("the monitor origin is added to every mapped point") {
  CHECK(to_device(kOffsetFullHd, 0, 0) == cu::point{1920, 0});
  CHECK(to_device(kOffsetFullHd, 1365, 767) == cu::point{1920 + 1919, 1079});
  CHECK(to_device(kUnscaled, 0, 0) == cu::point{100, 50});
  CHECK(to_device(kUnscaled, 799, 599) == cu::point{899, 649});
}

TEST_CASE("fractional image points stay inside the device area") {
  for (const cu::coord_session& s : {kOffsetFullHd, kQhd, kUnscaled}) {
    for (double v : {0.0, 0.25, 0.5, 0.999, 1.5}) {
      cu::point p = *cu::image_to_device(s, v, v);
      CHECK(p.x >= s.device.x);
      CHECK(p.y >= s.device.y);
    }
    const double xmax = std::nextafter(double(s.image.w), 0.0);
    const double ymax = std::nextafter(double(s.image.h), 0.0);
    auto p = cu::image_to_device(s, xmax, ymax);
    REQUIRE(p.ok());
    CHECK(p->x == s.device.x + s.device.w - 1);
    CHECK(p->y == s.device.y + s.device.h - 1);
  }
}

TEST_CASE("an image point outside the screenshot is out of range") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::array<double, 2>> outside = {
      {-1, 0}, {0, -1}, {-0.5, 10}, {1366, 0}, {0, 768}, {1366, 768}, {2000, 10},
      {nan, 0}, {0, nan}, {inf, 0}, {0, -inf}};
  for (auto [x, y] : outside) {
    CAPTURE(x, y);
    auto p = cu::image_to_device(kOffsetFullHd, x, y);
    REQUIRE_FALSE(p.ok());
    CHECK(p.err().code == cu::errc::out_of_range);
    CHECK_THAT(p.err().message, Catch::Contains("1366x768"));
  }
}

TEST_CASE("mapping an image pixel to the device and back gives the same pixel") {
  for (const cu::coord_session& s : {kOffsetFullHd, kQhd, kUnscaled}) {
    CAPTURE(s.device.w, s.device.h);
    for (int x = 0; x < s.image.w; ++x) {
      CHECK(cu::device_to_image(s, to_device(s, x, 17)) == cu::point{x, 17});
    }
    for (int y = 0; y < s.image.h; ++y) {
      CHECK(cu::device_to_image(s, to_device(s, 17, y)) == cu::point{17, y});
    }
  }
}

TEST_CASE("every device pixel maps back to the image pixel whose footprint holds it") {
  const cu::coord_session& s = kOffsetFullHd;
  for (int dx = 0; dx < s.device.w; ++dx) {
    cu::point p = cu::device_to_image(s, {s.device.x + dx, s.device.y});
    CAPTURE(dx, p.x);
    // The footprint of image pixel i is [i * 1920 / 1366, (i + 1) * 1920 / 1366)
    // and holds the device pixel's centre dx + 0.5.
    CHECK(p.y == 0);
    CHECK(p.x * 3840LL <= (2LL * dx + 1) * 1366);
    CHECK((2LL * dx + 1) * 1366 < (p.x + 1) * 3840LL);
  }
}

TEST_CASE("device points outside the area are clamped to the image edge") {
  const cu::coord_session& s = kOffsetFullHd;
  CHECK(cu::device_to_image(s, {0, -5}) == cu::point{0, 0});
  CHECK(cu::device_to_image(s, {1919, 0}) == cu::point{0, 0});
  CHECK(cu::device_to_image(s, {3840, 1080}) == cu::point{1365, 767});
  CHECK(cu::device_to_image(s, {9999, 9999}) == cu::point{1365, 767});
}

TEST_CASE("a region maps to the device rectangle it covers, rounded outwards") {
  const cu::coord_session& s = kOffsetFullHd;
  std::mt19937 rng(1366);
  std::uniform_int_distribution<int> xs(0, s.image.w), ys(0, s.image.h);
  for (int i = 0; i < 2000; ++i) {
    int x0 = xs(rng), x1 = xs(rng), y0 = ys(rng), y1 = ys(rng);
    if (x0 == x1 || y0 == y1) continue;
    if (x0 > x1) std::swap(x0, x1);
    if (y0 > y1) std::swap(y0, y1);
    CAPTURE(x0, y0, x1, y1);
    auto r = cu::region_to_device(s, {x0, y0, x1, y1});
    REQUIRE(r.ok());
    // The exact device span is [x0 * 1920 / 1366, x1 * 1920 / 1366); the
    // rectangle holds it and is less than one device pixel larger each side.
    const double ex0 = x0 * 1920.0 / 1366.0, ex1 = x1 * 1920.0 / 1366.0;
    const double ey0 = y0 * 1080.0 / 768.0, ey1 = y1 * 1080.0 / 768.0;
    const int rx0 = r->x - s.device.x, ry0 = r->y - s.device.y;
    CHECK(rx0 <= ex0 + 1e-9);
    CHECK(rx0 > ex0 - 1);
    CHECK(rx0 + r->w >= ex1 - 1e-9);
    CHECK(rx0 + r->w < ex1 + 1);
    CHECK(ry0 <= ey0 + 1e-9);
    CHECK(ry0 > ey0 - 1);
    CHECK(ry0 + r->h >= ey1 - 1e-9);
    CHECK(ry0 + r->h < ey1 + 1);
    // Every pixel the region touched maps inside the rectangle.
    for (auto [x, y] : {std::array<int, 2>{x0, y0}, {x1 - 1, y1 - 1}, {x0, y1 - 1}}) {
      cu::point p = to_device(s, x, y);
      CHECK(p.x >= r->x);
      CHECK(p.x < r->x + r->w);
      CHECK(p.y >= r->y);
      CHECK(p.y < r->y + r->h);
    }
  }
}

TEST_CASE("the whole image as a region is the whole device area") {
  for (const cu::coord_session& s : {kOffsetFullHd, kQhd, kUnscaled}) {
    auto r = cu::region_to_device(s, {0, 0, s.image.w, s.image.h});
    REQUIRE(r.ok());
    CHECK(*r == s.device);
  }
}

TEST_CASE("a region on exact pixel boundaries maps without growing") {
  // 1366 and 1920 share the factor 2: image x 683 is exactly device x 960.
  auto r = cu::region_to_device(kOffsetFullHd, {0, 0, 683, 768});
  REQUIRE(r.ok());
  CHECK(*r == cu::rect{1920, 0, 960, 1080});
  auto u = cu::region_to_device(kUnscaled, {10, 20, 30, 40});
  REQUIRE(u.ok());
  CHECK(*u == cu::rect{110, 70, 20, 20});
}

TEST_CASE("an empty, inverted, negative or oversize region is out of range") {
  const std::vector<std::array<int, 4>> bad = {
      {10, 10, 10, 20}, {10, 10, 20, 10}, {20, 10, 10, 20}, {10, 20, 20, 10},
      {-1, 0, 10, 10},  {0, -1, 10, 10},  {0, 0, 1367, 10}, {0, 0, 10, 769},
      {1366, 0, 1367, 10}, {-10, -10, -5, -5}};
  for (const auto& region : bad) {
    CAPTURE(region[0], region[1], region[2], region[3]);
    auto r = cu::region_to_device(kOffsetFullHd, region);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == cu::errc::out_of_range);
    CHECK_THAT(r.err().message, Catch::Contains("1366") && Catch::Contains("768"));
  }
}
