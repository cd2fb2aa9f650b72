// Tests for src/vision/match.h: grayscale conversion, the NCC score, the
// exhaustive and coarse-to-fine searches, overlapping matches, the refusals,
// and a template cut from a downscaled screenshot found in device pixels.
// Every scene is drawn from a seeded generator, so each run sees the same
// pixels.
#include "vision/match.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "capture/scale.h"

namespace {

using cu::gray_image;
using cu::match;
using cu::match_method;
using cu::match_options;

// Raw draws from mt19937, whose sequence the standard fixes (its
// distributions are not, so none is used).
struct rng {
  std::mt19937 g;
  explicit rng(uint32_t seed) : g(seed) {}
  int below(int n) { return int(g() % uint32_t(n)); }
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }
};

gray_image blank(int w, int h, uint8_t v) {
  return gray_image{w, h, std::vector<uint8_t>(size_t(w) * size_t(h), v)};
}

uint8_t& px(gray_image& g, int x, int y) { return g.pixels[size_t(y) * size_t(g.w) + size_t(x)]; }

// Value noise in three octaves (16, 4 and 1 pixel cells, bilinear between
// random grid values): structure at every scale, like a photograph.
gray_image texture(int w, int h, uint32_t seed) {
  rng r(seed);
  std::vector<double> sum(size_t(w) * size_t(h), 0);
  const int cells[] = {16, 4, 1};
  const double amps[] = {150, 70, 35};
  for (int o = 0; o < 3; ++o) {
    const int c = cells[o];
    const int gw = w / c + 2, gh = h / c + 2;
    std::vector<double> grid(size_t(gw) * size_t(gh));
    for (double& v : grid) v = r.below(1000) / 1000.0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const double u = double(x) / c, v = double(y) / c;
        const int i = int(u), j = int(v);
        const double fu = u - i, fv = v - j;
        auto at = [&](int a, int b) { return grid[size_t(b) * size_t(gw) + size_t(a)]; };
        const double top = at(i, j) * (1 - fu) + at(i + 1, j) * fu;
        const double bottom = at(i, j + 1) * (1 - fu) + at(i + 1, j + 1) * fu;
        sum[size_t(y) * size_t(w) + size_t(x)] += amps[o] * (top * (1 - fv) + bottom * fv);
      }
    }
  }
  gray_image g = blank(w, h, 0);
  for (size_t i = 0; i < sum.size(); ++i) g.pixels[i] = uint8_t(std::min(255.0, sum[i]));
  return g;
}

// Dark 5x7 glyphs of random strokes in 7x14 cells, in words, on a light
// background: what a terminal or a document shows.
void draw_text(gray_image& g, int x0, int y0, int x1, int y1, rng& r) {
  for (int y = y0; y + 10 <= y1; y += 14) {
    int x = x0 + r.below(8);
    while (x + 7 <= x1) {
      const int letters = r.between(2, 8);
      for (int l = 0; l < letters && x + 7 <= x1; ++l, x += 7) {
        const uint8_t ink = uint8_t(r.between(10, 70));
        for (int gy = 0; gy < 7; ++gy) {
          for (int gx = 0; gx < 5; ++gx) {
            if (r.below(100) < 40) px(g, x + gx, y + 2 + gy) = ink;
          }
        }
      }
      x += 7;
    }
  }
}

gray_image text_scene(int w, int h, uint32_t seed) {
  rng r(seed);
  gray_image g = blank(w, h, uint8_t(r.between(235, 255)));
  draw_text(g, 2, 2, w - 2, h - 2, r);
  return g;
}

// Windows and buttons: a vertical gradient behind rectangles filled with
// horizontal gradients, with borders, some holding a line of text.
gray_image ui_scene(int w, int h, uint32_t seed) {
  rng r(seed);
  gray_image g = blank(w, h, 0);
  const int top = r.between(60, 200), bottom = r.between(60, 200);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) px(g, x, y) = uint8_t(top + (bottom - top) * y / h);
  }
  const int rects = r.between(8, 20);
  for (int i = 0; i < rects; ++i) {
    const int rw = r.between(16, std::max(17, w / 2)), rh = r.between(12, std::max(13, h / 3));
    const int x0 = r.below(std::max(1, w - rw)), y0 = r.below(std::max(1, h - rh));
    const int a = r.between(0, 255), b = r.between(0, 255), border = r.between(0, 255);
    for (int y = y0; y < std::min(h, y0 + rh); ++y) {
      for (int x = x0; x < std::min(w, x0 + rw); ++x) {
        const bool edge = y == y0 || x == x0 || y == y0 + rh - 1 || x == x0 + rw - 1;
        px(g, x, y) = uint8_t(edge ? border : a + (b - a) * (x - x0) / rw);
      }
    }
    if (r.below(2) == 0 && rw > 20 && rh > 16) {
      draw_text(g, x0 + 3, y0 + 2, std::min(w, x0 + rw) - 3, std::min(h, y0 + rh) - 2, r);
    }
  }
  return g;
}

gray_image scene(int kind, int w, int h, uint32_t seed) {
  switch (kind % 3) {
    case 0: return texture(w, h, seed);
    case 1: return text_scene(w, h, seed);
    default: return ui_scene(w, h, seed);
  }
}

gray_image cut(const gray_image& g, int x, int y, int w, int h) {
  gray_image c = blank(w, h, 0);
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w; ++i) px(c, i, j) = g.pixels[size_t(y + j) * size_t(g.w) + size_t(x + i)];
  }
  return c;
}

// Adds noise of up to +-amp grey levels, so no score is exactly 1.
void add_noise(gray_image& g, int amp, uint32_t seed) {
  rng r(seed);
  for (uint8_t& v : g.pixels) v = uint8_t(std::clamp(v + r.between(-amp, amp), 0, 255));
}

// Whether a template cut from this scene can be found at one place only:
// not flat, and no other position scores as well (checked by the
// exhaustive search itself in the tests that need it).
double stddev(const gray_image& g) {
  double s = 0, q = 0;
  for (uint8_t v : g.pixels) {
    s += v;
    q += double(v) * v;
  }
  const double n = double(g.pixels.size());
  return std::sqrt(std::max(0.0, q / n - (s / n) * (s / n)));
}

std::vector<match> find(const gray_image& hay, const gray_image& needle, match_options o) {
  auto r = cu::find_template(hay.view(), needle.view(), o);
  INFO((r ? std::string() : r.err().message));
  REQUIRE(r);
  return *r;
}

match_options with(match_method m, double threshold = 0.9, int max_results = 10) {
  match_options o;
  o.method = m;
  o.threshold = threshold;
  o.max_results = max_results;
  return o;
}

const match_method kMethods[] = {match_method::exhaustive, match_method::pyramid,
                                 match_method::automatic};

}  // namespace

TEST_CASE("luma is OpenCV's RGB2GRAY in 14-bit fixed point, in every layout") {
  const uint8_t rgb[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 12, 200, 99};
  gray_image g = cu::to_gray(rgb, 6, 1, sizeof rgb, cu::kLayoutRgb);
  CHECK(g.pixels == std::vector<uint8_t>{76, 150, 29, 255, 0, 132});
  // The same colours as BGRX, with junk in the fourth byte and after the row.
  std::vector<uint8_t> bgrx;
  for (int i = 0; i < 6; ++i) {
    bgrx.insert(bgrx.end(), {rgb[3 * i + 2], rgb[3 * i + 1], rgb[3 * i], 0xA5});
  }
  bgrx.insert(bgrx.end(), 8, 0x5A);
  CHECK(cu::to_gray(bgrx.data(), 6, 1, bgrx.size(), cu::kLayoutBgrx).pixels == g.pixels);
}

TEST_CASE("luma is the same formula on rows long enough for the vector paths, in each layout") {
  // 1000 pixels a row (the fixed layouts' loops run whole vectors, then a
  // tail), rows 4 bytes longer than the pixels, and a layout with neither
  // fixed path (RGBX).
  const int w = 1000, h = 3;
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  uint32_t state = 12345;
  for (uint8_t& v : rgb) {
    state = state * 1664525u + 1013904223u;
    v = uint8_t(state >> 24);
  }
  std::vector<uint8_t> want(size_t(w) * h);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = uint8_t((4899u * rgb[3 * i] + 9617u * rgb[3 * i + 1] + 1868u * rgb[3 * i + 2] + 8192u) >> 14);
  }
  const size_t stride4 = size_t(w) * 4 + 4;
  std::vector<uint8_t> bgrx(stride4 * h, 0xA5), rgbx(stride4 * h, 0x5A);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      uint8_t* b = &bgrx[size_t(y) * stride4 + size_t(x) * 4];
      uint8_t* r = &rgbx[size_t(y) * stride4 + size_t(x) * 4];
      b[0] = p[2], b[1] = p[1], b[2] = p[0];
      r[0] = p[0], r[1] = p[1], r[2] = p[2];
    }
  }
  CHECK(cu::to_gray(rgb.data(), w, h, size_t(w) * 3, cu::kLayoutRgb).pixels == want);
  CHECK(cu::to_gray(bgrx.data(), w, h, stride4, cu::kLayoutBgrx).pixels == want);
  CHECK(cu::to_gray(rgbx.data(), w, h, stride4, cu::color_layout{4, 0, 1, 2}).pixels == want);
}

TEST_CASE("the score is zero-mean NCC: 1 for the template itself under any contrast") {
  const gray_image t = texture(40, 30, 7);
  gray_image brighter = t;
  for (uint8_t& v : brighter.pixels) v = uint8_t(v / 2 + 60);
  CHECK(cu::ncc_at(t.view(), t.view(), 0, 0) == Approx(1.0).margin(1e-12));
  CHECK(cu::ncc_at(brighter.view(), t.view(), 0, 0) > 0.999);
  gray_image negative = t;
  for (uint8_t& v : negative.pixels) v = uint8_t(255 - v);
  CHECK(cu::ncc_at(negative.view(), t.view(), 0, 0) == Approx(-1.0).margin(1e-12));
}

TEST_CASE("a flat window scores 0, as OpenCV's TM_CCOEFF_NORMED does, and never matches") {
  gray_image hay = blank(120, 80, 90);
  const gray_image t = texture(24, 24, 3);
  CHECK(cu::ncc_at(hay.view(), t.view(), 10, 10) == 0);
  for (match_method m : kMethods) {
    CHECK(find(hay, t, with(m, 0.0)).empty());
  }
}

TEST_CASE("a template cut from a scene is found where it was cut, scoring 1") {
  for (int kind = 0; kind < 3; ++kind) {
    const gray_image hay = scene(kind, 400, 300, 100u + uint32_t(kind));
    rng r{uint32_t(kind)};
    for (int i = 0; i < 6; ++i) {
      const int w = r.between(24, 120), h = r.between(24, 90);
      const int x = r.below(400 - w), y = r.below(300 - h);
      const gray_image t = cut(hay, x, y, w, h);
      if (stddev(t) < 2) continue;
      for (match_method m : kMethods) {
        INFO("kind " << kind << " template " << w << "x" << h << " at " << x << "," << y
                     << " method " << int(m));
        const auto found = find(hay, t, with(m, 0.99));
        REQUIRE(!found.empty());
        CHECK(found[0] == match{x, y, w, h, found[0].score});
        CHECK(found[0].score == Approx(1.0).margin(1e-9));
      }
    }
  }
}

TEST_CASE("every reported score is the definition's, with and without AVX2") {
  gray_image hay = ui_scene(300, 200, 11);
  const gray_image t = cut(hay, 150, 60, 64, 48);
  add_noise(hay, 20, 12);
  for (match_method m : kMethods) {
    match_options o = with(m, 0.2, 50);
    const auto vec = find(hay, t, o);
    o.use_simd = false;
    const auto scalar = find(hay, t, o);
    CHECK(vec == scalar);
    REQUIRE(!vec.empty());
    for (const match& f : vec) {
      CHECK(f.score == Approx(cu::ncc_at(hay.view(), t.view(), f.x, f.y)).margin(1e-12));
    }
  }
}

TEST_CASE("the pyramid finds the exhaustive search's best match in 200 random scenes") {
  int compared = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    rng r(seed * 7919u);
    const int kind = int(seed % 3);
    const int hw = r.between(160, 240), hh = r.between(120, 170);
    gray_image hay = scene(kind, hw, hh, seed);
    const int w = r.between(24, 72), h = r.between(24, 72);
    const int x = r.below(hw - w + 1), y = r.below(hh - h + 1);
    const gray_image t = cut(hay, x, y, w, h);
    if (stddev(t) < 2) continue;
    // Noise in the haystack (some seeds only), so the best score is not
    // always exactly 1 and the runners-up differ.
    if (seed % 2 == 0) add_noise(hay, int(seed % 40), seed);
    const auto ex = find(hay, t, with(match_method::exhaustive, 0.3, 5));
    const auto py = find(hay, t, with(match_method::pyramid, 0.3, 5));
    INFO("seed " << seed << " kind " << kind << " haystack " << hw << "x" << hh << " template "
                 << w << "x" << h << " at " << x << "," << y);
    REQUIRE(!ex.empty());
    REQUIRE(!py.empty());
    CHECK(py[0].score == ex[0].score);
    CHECK(py[0].x == ex[0].x);
    CHECK(py[0].y == ex[0].y);
    ++compared;
  }
  CHECK(compared > 150);
}

TEST_CASE("a template whose best score is just above the threshold is found, just below not") {
  for (match_method m : kMethods) {
    gray_image hay = text_scene(260, 180, 21);
    const gray_image t = cut(hay, 90, 70, 60, 40);
    add_noise(hay, 60, 22);
    const auto all = find(hay, t, with(m, 0.0, 1));
    REQUIRE(all.size() == 1);
    const double best = all[0].score;
    INFO("method " << int(m) << " best " << best);
    CHECK(best < 0.95);
    CHECK(best > 0.5);
    CHECK((all[0].x == 90 && all[0].y == 70));
    const auto at = find(hay, t, with(m, best));
    REQUIRE(at.size() == 1);
    CHECK(at[0] == all[0]);
    CHECK(find(hay, t, with(m, std::nextafter(best, 2.0))).empty());
  }
}

TEST_CASE("a template from another scene is not found") {
  for (int kind = 0; kind < 3; ++kind) {
    const gray_image hay = scene(kind, 320, 240, 31);
    const gray_image other = scene(kind, 320, 240, 32);
    const gray_image t = cut(other, 100, 80, 64, 48);
    for (match_method m : kMethods) {
      INFO("kind " << kind << " method " << int(m));
      CHECK(find(hay, t, with(m)).empty());
    }
  }
}

TEST_CASE("two copies of a pattern are two matches, not a cluster of neighbours") {
  gray_image hay = ui_scene(400, 260, 41);
  const gray_image icon = text_scene(48, 40, 42);
  for (int j = 0; j < icon.h; ++j) {
    for (int i = 0; i < icon.w; ++i) {
      px(hay, 30 + i, 50 + j) = icon.pixels[size_t(j * icon.w + i)];
      px(hay, 300 + i, 190 + j) = icon.pixels[size_t(j * icon.w + i)];
    }
  }
  for (match_method m : kMethods) {
    INFO("method " << int(m));
    const auto found = find(hay, icon, with(m, 0.9, 50));
    REQUIRE(found.size() == 2);
    CHECK(found[0].score == Approx(1.0).margin(1e-9));
    CHECK(found[1].score == Approx(1.0).margin(1e-9));
    // Equal scores: top to bottom.
    CHECK((found[0].x == 30 && found[0].y == 50));
    CHECK((found[1].x == 300 && found[1].y == 190));
  }
}

TEST_CASE("no two matches overlap by more than half the template, best first") {
  const gray_image hay = texture(300, 220, 51);
  const gray_image t = cut(hay, 120, 90, 40, 40);
  for (match_method m : kMethods) {
    const auto found = find(hay, t, with(m, 0.05, 200));
    REQUIRE(found.size() > 5);
    CHECK((found[0].x == 120 && found[0].y == 90));
    for (size_t i = 0; i < found.size(); ++i) {
      if (i > 0) CHECK(found[i].score <= found[i - 1].score);
      for (size_t j = 0; j < i; ++j) {
        const int ox = std::max(0, 40 - std::abs(found[i].x - found[j].x));
        const int oy = std::max(0, 40 - std::abs(found[i].y - found[j].y));
        CHECK(ox * oy <= 40 * 40 / 2);
      }
    }
  }
}

TEST_CASE("max_results caps the list and keeps the best") {
  const gray_image hay = texture(300, 220, 61);
  const gray_image t = cut(hay, 50, 40, 32, 32);
  const auto many = find(hay, t, with(match_method::exhaustive, 0.05, 100));
  const auto three = find(hay, t, with(match_method::exhaustive, 0.05, 3));
  REQUIRE(many.size() > 3);
  REQUIRE(three.size() == 3);
  CHECK(std::equal(three.begin(), three.end(), many.begin()));
}

TEST_CASE("a flat template is refused with a message that says so") {
  const gray_image hay = texture(100, 100, 71);
  const gray_image flat = blank(20, 20, 128);
  auto r = cu::find_template(hay.view(), flat.view());
  REQUIRE(!r);
  CHECK(r.err().code == cu::errc::invalid_argument);
  CHECK(r.err().message.find("single flat colour") != std::string::npos);
  // Nearly flat: a grey level of rounding noise.
  gray_image nearly = flat;
  for (size_t i = 0; i < nearly.pixels.size(); i += 2) nearly.pixels[i] = 129;
  CHECK(!cu::find_template(hay.view(), nearly.view()));
  // A faint line is detail enough.
  gray_image line = flat;
  for (int x = 0; x < 20; ++x) px(line, x, 10) = 110;
  CHECK(cu::find_template(hay.view(), line.view()));
}

TEST_CASE("a template larger than the image, an empty one and bad options are refused") {
  const gray_image hay = texture(100, 80, 81);
  const gray_image wide = texture(101, 20, 82);
  const gray_image tall = texture(20, 81, 83);
  for (const gray_image* t : {&wide, &tall}) {
    auto r = cu::find_template(hay.view(), t->view());
    REQUIRE(!r);
    CHECK(r.err().message.find("larger than the image searched") != std::string::npos);
  }
  const gray_image t = cut(hay, 10, 10, 20, 20);
  CHECK(!cu::find_template(hay.view(), cu::gray_view{}));
  CHECK(!cu::find_template(cu::gray_view{}, t.view()));
  for (double bad : {-0.1, 1.1, std::nan("")}) {
    auto r = cu::find_template(hay.view(), t.view(), with(match_method::automatic, bad));
    REQUIRE(!r);
    CHECK(r.err().message.find("threshold") != std::string::npos);
  }
  for (int bad : {0, cu::kMaxResults + 1}) {
    CHECK(!cu::find_template(hay.view(), t.view(), with(match_method::automatic, 0.9, bad)));
  }
}

TEST_CASE("a template the size of the image has one position") {
  const gray_image hay = ui_scene(64, 48, 91);
  for (match_method m : kMethods) {
    const auto found = find(hay, hay, with(m));
    REQUIRE(found.size() == 1);
    CHECK(found[0] == match{0, 0, 64, 48, found[0].score});
  }
}

TEST_CASE("a template taller than wide and one wider than tall are both found") {
  const gray_image hay = ui_scene(500, 400, 93);
  for (auto [w, h] : {std::pair{200, 26}, std::pair{26, 200}}) {
    const gray_image t = cut(hay, 123, 77, w, h);
    const auto found = find(hay, t, with(match_method::pyramid, 0.99));
    REQUIRE(!found.empty());
    CHECK((found[0].x == 123 && found[0].y == 77));
  }
}

namespace {

// A colour screen of device pixels (BGRX), a UI scene in three channels.
struct screen {
  int w, h;
  std::vector<uint8_t> bgrx;
};

screen colour_screen(int w, int h, uint32_t seed, int shift = 0) {
  const gray_image r = ui_scene(w + 8, h + 8, seed), g = ui_scene(w + 8, h + 8, seed + 1),
                   b = text_scene(w + 8, h + 8, seed + 2);
  screen s{w, h, std::vector<uint8_t>(size_t(w) * size_t(h) * 4)};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      // shift moves the content right and down by that many device pixels.
      const size_t i = size_t(y + 8 - shift) * size_t(w + 8) + size_t(x + 8 - shift);
      uint8_t* p = &s.bgrx[(size_t(y) * size_t(w) + size_t(x)) * 4];
      p[0] = uint8_t(std::min(255, b.pixels[i] / 2 + g.pixels[i] / 2));
      p[1] = g.pixels[i];
      p[2] = r.pixels[i];
      p[3] = 0;
    }
  }
  return s;
}

// The screenshot the server would send of this screen: capture/scale.h's
// area-averaging downscale to RGB, then to grey.
gray_image screenshot(const screen& s, int iw, int ih) {
  cu::area_scaler scaler(s.w, s.h, iw, ih, cu::pixel_layout{2, 1, 0});
  std::vector<uint8_t> rgb(size_t(iw) * size_t(ih) * 3);
  for (int y = 0; y < ih; ++y) {
    scaler.row(s.bgrx.data(), size_t(s.w) * 4, y, &rgb[size_t(y) * size_t(iw) * 3]);
  }
  return cu::to_gray(rgb.data(), iw, ih, size_t(iw) * 3, cu::kLayoutRgb);
}

}  // namespace

TEST_CASE("area_downscale is the screenshot's filter, to a grey level") {
  const screen s = colour_screen(640, 360, 101);
  const gray_image device = cu::to_gray(s.bgrx.data(), s.w, s.h, size_t(s.w) * 4, cu::kLayoutBgrx);
  const gray_image ours = cu::area_downscale(device.view(), 455, 256);
  const gray_image theirs = screenshot(s, 455, 256);
  int worst = 0;
  for (size_t i = 0; i < ours.pixels.size(); ++i) {
    worst = std::max(worst, std::abs(ours.pixels[i] - theirs.pixels[i]));
  }
  CHECK(worst <= 1);
}

TEST_CASE("a template cut from a downscaled screenshot is found at its device place") {
  // The server's case: a 1920x1080 screen sent as 1366x768.
  const int dw = 1920, dh = 1080, iw = 1366, ih = 768;
  const double sx = double(dw) / iw, sy = double(dh) / ih;
  for (int shift : {0, 1}) {
    const screen s = colour_screen(dw, dh, 111);
    const gray_image shot = screenshot(s, iw, ih);
    // The screen as it is when the template is looked for: moved by shift
    // device pixels since the screenshot.
    const screen now = shift ? colour_screen(dw, dh, 111, shift) : s;
    const gray_image device =
        cu::to_gray(now.bgrx.data(), dw, dh, size_t(dw) * 4, cu::kLayoutBgrx);
    rng r(113);
    for (int i = 0; i < 5; ++i) {
      const int w = r.between(30, 200), h = r.between(24, 120);
      const int ix = r.between(5, iw - w - 5), iy = r.between(5, ih - h - 5);
      const gray_image t = cut(shot, ix, iy, w, h);
      if (stddev(t) < 4) continue;
      INFO("shift " << shift << " template " << w << "x" << h << " at image " << ix << "," << iy);
      auto found = cu::find_template_scaled(device.view(), {iw, ih}, t.view(), with(match_method::automatic, 0.8));
      REQUIRE(found);
      REQUIRE(!found->empty());
      const match& m = (*found)[0];
      CHECK(std::abs(m.x - (ix * sx + shift)) <= 1.0);
      CHECK(std::abs(m.y - (iy * sy + shift)) <= 1.0);
      CHECK(m.w == int(std::lround(w * sx)));
      CHECK(m.h == int(std::lround(h * sy)));
      if (shift == 0) CHECK(m.score > 0.99);
    }
  }
}

TEST_CASE("a scaled search looks only inside its region, and answers in device pixels") {
  const int dw = 1280, dh = 720, iw = 1024, ih = 576;
  const screen s = colour_screen(dw, dh, 121);
  const gray_image shot = screenshot(s, iw, ih);
  const gray_image device = cu::to_gray(s.bgrx.data(), dw, dh, size_t(dw) * 4, cu::kLayoutBgrx);
  const gray_image t = cut(shot, 600, 300, 80, 50);
  const match_options o = with(match_method::automatic, 0.95);
  auto inside = cu::find_template_scaled(device.view(), {iw, ih}, t.view(), o, {500, 250, 300, 200});
  REQUIRE(inside);
  REQUIRE(inside->size() == 1);
  CHECK(std::abs((*inside)[0].x - 750) <= 1);
  CHECK(std::abs((*inside)[0].y - 375) <= 1);
  auto outside = cu::find_template_scaled(device.view(), {iw, ih}, t.view(), o, {0, 0, 500, 250});
  REQUIRE(outside);
  CHECK(outside->empty());
  CHECK(!cu::find_template_scaled(device.view(), {iw, ih}, t.view(), o, {900, 500, 200, 100}));
  CHECK(!cu::find_template_scaled(device.view(), {dw + 1, ih}, t.view(), o));
}

TEST_CASE("one limit on a template's size, with one message, whatever checks it") {
  CHECK(cu::check_template_size(cu::kMaxTemplateSide, cu::kMaxTemplateSide).ok());
  auto e = cu::check_template_size(cu::kMaxTemplateSide + 1, 10);
  REQUIRE_FALSE(e);
  CHECK(e.err().code == cu::errc::invalid_argument);
  CHECK(e.err().message == "the template (2049x10) is too large: at most 2048 pixels on a side");
  // find_template gives the same refusal.
  std::vector<uint8_t> hay(size_t(4000) * 4, 0), needle(size_t(2049) * 2, 0);
  for (size_t i = 0; i < needle.size(); ++i) needle[i] = uint8_t(i * 37);
  auto found = cu::find_template(cu::gray_view{hay.data(), 4000, 4, 4000},
                                 cu::gray_view{needle.data(), 2049, 2, 2049}, cu::match_options{});
  REQUIRE_FALSE(found.ok());
  CHECK(found.err().message == "the template (2049x2) is too large: at most 2048 pixels on a side");
}
