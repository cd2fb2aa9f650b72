// What changed between two looks, as pure functions (vision/look_diff.h):
// the changed rectangles merged into a few crops, and a new map's marks
// numbered after the earlier map's. No display.
#include <catch2/catch.hpp>

#include <vector>

#include "vision/look_diff.h"

using cu::mark;
using cu::mark_candidate;
using cu::mark_source;
using cu::rect;

namespace {

mark numbered(int n, std::string role, std::string name, rect box,
              mark_source source = mark_source::a11y) {
  mark m;
  m.n = n;
  m.what = mark_candidate{std::move(role), std::move(name), box, source};
  m.label = rect{box.x, box.y - 14, cu::label_size(n).w, cu::label_size(n).h};
  return m;
}

int64_t area(const rect& r) { return int64_t(r.w) * r.h; }

bool inside(const rect& small, const rect& big) { return cu::intersect(small, big) == small; }

}  // namespace

TEST_CASE("the glyphs of one typed line, drawn one by one, are one crop") {
  std::vector<rect> glyphs;
  for (int k = 0; k < 20; ++k) glyphs.push_back(rect{100 + 7 * k, 400, 6, 13});
  const auto merged = cu::merge_rects(glyphs, 4, 8);
  REQUIRE(merged.size() == 1);
  CHECK(merged[0] == rect{100, 400, 7 * 19 + 6, 13});
}

TEST_CASE("changes far apart stay apart, and touching ones do not when the gap is zero") {
  const auto merged = cu::merge_rects({{500, 500, 10, 10}, {0, 0, 10, 10}, {10, 0, 10, 10}}, 0, 8);
  REQUIRE(merged.size() == 3);
  CHECK(merged[0] == rect{0, 0, 10, 10});
  CHECK(merged[1] == rect{10, 0, 10, 10});
  CHECK(merged[2] == rect{500, 500, 10, 10});
}

TEST_CASE("past the bound the closest changes are merged, and every change stays covered") {
  std::vector<rect> scattered;
  for (int k = 0; k < 40; ++k) scattered.push_back(rect{(k % 8) * 150, (k / 8) * 150, 20, 20});
  const auto merged = cu::merge_rects(scattered, 4, 8);
  CHECK(merged.size() <= 8);
  for (const rect& r : scattered) {
    bool covered = false;
    for (const rect& m : merged) covered = covered || inside(r, m);
    CHECK(covered);
  }
  // Neighbours were merged, not far corners: no crop spans the whole screen.
  for (const rect& m : merged) CHECK(area(m) < 1200 * 600);
}

TEST_CASE("a crop's padding stays in the image") {
  CHECK(cu::pad_within(rect{0, 0, 10, 10}, 2, {100, 50}) == rect{0, 0, 12, 12});
  CHECK(cu::pad_within(rect{95, 45, 10, 10}, 2, {100, 50}) == rect{93, 43, 7, 7});
  CHECK(cu::pad_within(rect{200, 200, 10, 10}, 2, {100, 50}).w == 0);
}

TEST_CASE("a mark seen before keeps its number, a new one gets the next, a missing one is gone") {
  const std::vector<mark> before = {
      numbered(1, "push button", "OK", {10, 10, 50, 20}),
      numbered(2, "text", "$ ls", {10, 40, 40, 12}, mark_source::ocr),
      numbered(3, "push button", "Cancel", {70, 10, 50, 20}),
  };
  // Numbered by position anew: the new line sits between the others.
  std::vector<mark> now = {
      numbered(1, "push button", "OK", {10, 10, 50, 20}),
      numbered(2, "text", "hello", {10, 30, 40, 12}, mark_source::ocr),
      numbered(3, "push button", "Cancel", {80, 10, 50, 20}),
  };
  const cu::marks_diff d = cu::carry_numbers(now, before);
  REQUIRE(now.size() == 3);
  CHECK(now[0].n == 1);
  CHECK(now[0].what.name == "OK");
  CHECK(now[1].n == 3);
  CHECK(now[1].what.name == "Cancel");
  CHECK(now[2].n == 4);
  CHECK(now[2].what.name == "hello");
  CHECK(d.appeared == std::vector<int>{4});
  REQUIRE(d.moved.size() == 1);
  CHECK(d.moved[0].n == 3);
  CHECK(d.moved[0].from == rect{70, 10, 50, 20});
  CHECK(d.moved[0].to == rect{80, 10, 50, 20});
  CHECK(d.gone == std::vector<int>{2});
}

TEST_CASE("of two alike marks the nearest pairs, so two equal lines keep their own numbers") {
  const std::vector<mark> before = {
      numbered(5, "text", "same", {0, 100, 40, 12}, mark_source::ocr),
      numbered(6, "text", "same", {0, 200, 40, 12}, mark_source::ocr),
  };
  std::vector<mark> now = {
      numbered(1, "text", "same", {0, 102, 40, 12}, mark_source::ocr),
      numbered(2, "text", "same", {0, 198, 40, 12}, mark_source::ocr),
  };
  cu::carry_numbers(now, before);
  CHECK(now[0].n == 5);
  CHECK(now[0].what.box.y == 102);
  CHECK(now[1].n == 6);
  CHECK(now[1].what.box.y == 198);
}

TEST_CASE("a label whose number grows a digit grows with it") {
  std::vector<mark> before;
  for (int n = 1; n <= 9; ++n) before.push_back(numbered(n, "text", std::to_string(n), {0, n * 20, 10, 10}));
  std::vector<mark> now = {numbered(1, "text", "new", {0, 400, 10, 10})};
  cu::carry_numbers(now, before);
  REQUIRE(now[0].n == 10);
  CHECK(now[0].label.w == cu::label_size(10).w);
}

namespace {

// A w x h RGB image of one grey.
std::vector<uint8_t> grey(int w, int h, uint8_t v = 90) {
  return std::vector<uint8_t>(size_t(w) * size_t(h) * 3, v);
}

void set_pixel(std::vector<uint8_t>& img, int w, int x, int y, uint8_t v) {
  img[(size_t(y) * size_t(w) + size_t(x)) * 3 + 1] = v;
}

}  // namespace

TEST_CASE("identical pixels have no differing tiles, however much is asked about") {
  const auto a = grey(40, 30), b = grey(40, 30);
  CHECK(cu::differing_tiles(a.data(), b.data(), {40, 30}, {rect{0, 0, 40, 30}}).empty());
}

TEST_CASE("one pixel that differs is the one tile on the grid it falls in") {
  auto a = grey(40, 30), b = grey(40, 30);
  set_pixel(b, 40, 13, 21, 7);
  const auto tiles = cu::differing_tiles(a.data(), b.data(), {40, 30}, {rect{0, 0, 40, 30}});
  REQUIRE(tiles.size() == 1);
  CHECK(tiles[0] == rect{8, 16, 8, 8});
}

TEST_CASE("a difference outside the rectangles asked about is not seen") {
  auto a = grey(40, 30), b = grey(40, 30);
  set_pixel(b, 40, 30, 2, 7);
  CHECK(cu::differing_tiles(a.data(), b.data(), {40, 30}, {rect{0, 10, 20, 20}}).empty());
  // A rectangle touching a tile's corner looks at the whole tile.
  CHECK(cu::differing_tiles(a.data(), b.data(), {40, 30}, {rect{31, 7, 1, 1}}).size() == 1);
}

TEST_CASE("tiles at the image's right and bottom edges are clipped to it") {
  auto a = grey(21, 19), b = grey(21, 19);
  set_pixel(b, 21, 20, 18, 7);
  const auto tiles = cu::differing_tiles(a.data(), b.data(), {21, 19}, {rect{0, 0, 50, 50}});
  REQUIRE(tiles.size() == 1);
  CHECK(tiles[0] == rect{16, 16, 5, 3});
}

TEST_CASE("overlapping rectangles give each differing tile once, top to bottom then left to "
          "right") {
  auto a = grey(64, 64), b = grey(64, 64);
  set_pixel(b, 64, 50, 3, 7);
  set_pixel(b, 64, 2, 40, 7);
  set_pixel(b, 64, 10, 3, 7);
  const auto tiles = cu::differing_tiles(a.data(), b.data(), {64, 64},
                                         {rect{0, 0, 64, 64}, rect{0, 0, 32, 64}});
  REQUIRE(tiles.size() == 3);
  CHECK(tiles[0] == rect{8, 0, 8, 8});
  CHECK(tiles[1] == rect{48, 0, 8, 8});
  CHECK(tiles[2] == rect{0, 40, 8, 8});
}

TEST_CASE("two small changes far apart in one big drawn rectangle stay two small crops once "
          "merged") {
  auto a = grey(400, 300), b = grey(400, 300);
  set_pixel(b, 400, 20, 20, 7);
  set_pixel(b, 400, 380, 280, 7);
  auto tiles = cu::differing_tiles(a.data(), b.data(), {400, 300}, {rect{10, 10, 380, 280}});
  const auto crops = cu::merge_rects(std::move(tiles), 4, 8);
  REQUIRE(crops.size() == 2);
  CHECK(area(crops[0]) + area(crops[1]) == 128);
}
