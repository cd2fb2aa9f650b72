// Tests for src/capture/scale.h: area-averaging filter taps and the scaler
// that turns 4-byte source pixels into RGB rows, at every instruction-set
// level this CPU runs.
#include "capture/scale.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using rgb = std::array<uint8_t, 3>;

constexpr cu::pixel_layout kBgrx{2, 1, 0};
constexpr cu::pixel_layout kRgbx{0, 1, 2};

// A source image of 4-byte pixels, rows stride bytes apart. The padding
// after each row and the fourth byte of each pixel hold junk, so a scaler
// that reads either shows up in the output.
struct image {
  int w, h;
  size_t stride;
  std::vector<uint8_t> bytes;

  image(int w_, int h_, size_t pad = 0)
      : w(w_), h(h_), stride(size_t(w_) * 4 + pad), bytes(stride * size_t(h_), 0xA5) {}

  // Stores c in BGRX order, the usual layout of a 24-bit X visual.
  void set(int x, int y, rgb c) {
    uint8_t* p = &bytes[size_t(y) * stride + size_t(x) * 4];
    p[0] = c[2];
    p[1] = c[1];
    p[2] = c[0];
    p[3] = 0x5A;
  }
  rgb get(int x, int y) const {
    const uint8_t* p = &bytes[size_t(y) * stride + size_t(x) * 4];
    return {p[2], p[1], p[0]};
  }
  void fill(int x0, int y0, int x1, int y1, rgb c) {
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) set(x, y, c);
    }
  }
};

// The scalar level and every vector level this CPU runs, slowest first.
std::vector<cu::simd_level> levels() {
  std::vector<cu::simd_level> all{cu::simd_level::scalar};
  for (cu::simd_level l : {cu::simd_level::ssse3, cu::simd_level::avx2}) {
    if (l <= cu::simd_best()) all.push_back(l);
  }
  return all;
}

// The scaled image as RGB triples, row-major. Each row goes into a buffer of
// exactly its size, so AddressSanitizer catches a store past the end.
std::vector<rgb> scale(const image& src, int dst_w, int dst_h, cu::pixel_layout layout = kBgrx,
                       cu::simd_level level = cu::simd_level::scalar) {
  cu::area_scaler s(src.w, src.h, dst_w, dst_h, layout, level);
  REQUIRE(s.dst_w() == dst_w);
  REQUIRE(s.dst_h() == dst_h);
  REQUIRE(s.level() == level);
  std::vector<uint8_t> row(size_t(dst_w) * 3);
  std::vector<rgb> out;
  out.reserve(size_t(dst_w) * size_t(dst_h));
  for (int y = 0; y < dst_h; ++y) {
    s.row(src.bytes.data(), src.stride, y, row.data());
    for (int x = 0; x < dst_w; ++x) {
      out.push_back({row[size_t(x) * 3], row[size_t(x) * 3 + 1], row[size_t(x) * 3 + 2]});
    }
  }
  return out;
}

// Source sample j's exact share of destination sample i, in double precision:
// destination i covers [i * src / dst, (i + 1) * src / dst).
double exact_share(int src_len, int dst_len, int i, int j) {
  const double step = double(src_len) / double(dst_len);
  const double lo = i * step, hi = (i + 1) * step;
  const double overlap = std::min(hi, j + 1.0) - std::max(lo, double(j));
  return overlap > 0 ? overlap / step : 0.0;
}

// The area average of a BGRX image in double precision, for one destination
// pixel and channel.
double exact_average(const image& src, int dst_w, int dst_h, int x, int y, int channel) {
  double sum = 0;
  const int sy0 = y * src.h / dst_h, sy1 = std::min(src.h, ((y + 1) * src.h + dst_h - 1) / dst_h);
  const int sx0 = x * src.w / dst_w, sx1 = std::min(src.w, ((x + 1) * src.w + dst_w - 1) / dst_w);
  for (int sy = sy0; sy < sy1; ++sy) {
    const double wy = exact_share(src.h, dst_h, y, sy);
    for (int sx = sx0; sx < sx1; ++sx) {
      sum += wy * exact_share(src.w, dst_w, x, sx) * src.get(sx, sy)[size_t(channel)];
    }
  }
  return sum;
}

}  // namespace

TEST_CASE("area taps sum to 256 and cover exactly the right source span") {
  const std::array<std::array<int, 2>, 6> cases = {
      {{1920, 1366}, {1080, 768}, {2560, 1366}, {1440, 768}, {7, 3}, {5, 5}}};
  for (auto [src, dst] : cases) {
    CAPTURE(src, dst);
    cu::filter_taps t = cu::make_area_taps(src, dst);
    REQUIRE(t.start.size() == size_t(dst));
    REQUIRE(t.weights.size() == size_t(dst) * size_t(t.count));
    REQUIRE(t.count >= 1);
    // The widest span of a destination sample is ceil(src / dst) + 1 source samples.
    CHECK(t.count <= (src + dst - 1) / dst + 1);
    for (int i = 0; i < dst; ++i) {
      CAPTURE(i);
      const int start = t.start[size_t(i)];
      REQUIRE(start >= 0);
      REQUIRE(start + t.count <= src);
      const uint16_t* w = &t.weights[size_t(i) * size_t(t.count)];
      int sum = 0;
      for (int k = 0; k < t.count; ++k) sum += w[k];
      CHECK(sum == 256);
      // Every source sample with a share is among the taps, and each tap's
      // weight is its exact share rounded to within one 256th.
      // Samples further away than this window share nothing and are not tapped.
      const double step = double(src) / double(dst);
      const int j0 = std::max(0, std::min(start, int(i * step)) - 1);
      const int j1 = std::min(src, std::max(start + t.count, int(std::ceil((i + 1) * step))) + 1);
      double covered = 0;
      for (int j = j0; j < j1; ++j) {
        const double share = exact_share(src, dst, i, j);
        const bool tapped = j >= start && j < start + t.count;
        const int weight = tapped ? w[j - start] : 0;
        CAPTURE(j, share, weight);
        if (share > 0) CHECK(tapped);
        if (share == 0) CHECK(weight == 0);
        CHECK(std::abs(weight - share * 256) < 1.0);
        if (tapped) covered += share;
      }
      CHECK(covered == Approx(1.0));
    }
  }
}

TEST_CASE("equal lengths give one tap of full weight per sample") {
  cu::filter_taps t = cu::make_area_taps(5, 5);
  CHECK(t.count == 1);
  CHECK(t.start == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(t.weights == std::vector<uint16_t>{256, 256, 256, 256, 256});
}

TEST_CASE("an integer ratio gives equal taps aligned to the source") {
  cu::filter_taps t = cu::make_area_taps(8, 2);
  CHECK(t.count == 4);
  CHECK(t.start == std::vector<int>{0, 4});
  CHECK(t.weights == std::vector<uint16_t>{64, 64, 64, 64, 64, 64, 64, 64});
}

TEST_CASE("a uniform colour scales to exactly that colour") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  const rgb colour{12, 200, 255};
  const std::array<std::array<int, 4>, 4> cases = {
      {{1920, 1080, 1366, 768}, {2560, 1440, 1366, 768}, {7, 5, 3, 2}, {1600, 1200, 1024, 768}}};
  for (auto [sw, sh, dw, dh] : cases) {
    CAPTURE(sw, sh, dw, dh);
    image src(sw, sh, 12);
    src.fill(0, 0, sw, sh, colour);
    std::vector<rgb> out = scale(src, dw, dh, kBgrx, level);
    CHECK(std::all_of(out.begin(), out.end(), [&](const rgb& c) { return c == colour; }));
  }
}

TEST_CASE("a 2x2 checker scales to its average, rounded to nearest") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  image src(2, 2);
  src.set(0, 0, {10, 0, 255});
  src.set(1, 0, {250, 1, 255});
  src.set(0, 1, {250, 1, 0});
  src.set(1, 1, {10, 1, 0});
  // Red averages to exactly 130, green to 0.75 and blue to 127.5.
  std::vector<rgb> out = scale(src, 1, 1, kBgrx, level);
  CHECK(out == std::vector<rgb>{{130, 1, 128}});
}

TEST_CASE("a rectangle's scaled centre has exactly the rectangle's colour") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  image src(1920, 1080, 64);
  src.fill(0, 0, 1920, 1080, {128, 128, 128});
  struct box {
    int x0, y0, x1, y1;
    rgb colour;
  };
  const std::vector<box> boxes = {
      {0, 0, 40, 40, {255, 0, 0}},         {100, 100, 300, 160, {0, 255, 0}},
      {1881, 1041, 1920, 1080, {0, 0, 255}}, {957, 531, 963, 549, {255, 255, 0}},
      {1500, 10, 1507, 17, {1, 2, 3}},     {20, 900, 1900, 905, {250, 0, 250}},
  };
  for (const box& b : boxes) src.fill(b.x0, b.y0, b.x1, b.y1, b.colour);
  std::vector<rgb> out = scale(src, 1366, 768, kBgrx, level);
  for (const box& b : boxes) {
    const int cx = (b.x0 + b.x1) / 2 * 1366 / 1920;
    const int cy = (b.y0 + b.y1) / 2 * 768 / 1080;
    CAPTURE(b.x0, b.y0, cx, cy);
    CHECK(out[size_t(cy) * 1366 + size_t(cx)] == b.colour);
  }
  CHECK(out[size_t(400) * 1366 + 600] == rgb{128, 128, 128});
}

TEST_CASE("a random image scales to its area average within rounding") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  std::mt19937 rng(1080);
  std::uniform_int_distribution<int> byte(0, 255);
  image src(1920, 1080, 8);
  for (int y = 0; y < src.h; ++y) {
    for (int x = 0; x < src.w; ++x) {
      src.set(x, y, {uint8_t(byte(rng)), uint8_t(byte(rng)), uint8_t(byte(rng))});
    }
  }
  std::vector<rgb> out = scale(src, 1366, 768, kBgrx, level);
  double worst = 0;
  std::array<double, 3> bias{};
  int samples = 0;
  for (int y = 0; y < 768; y += 7) {
    for (int x = 0; x < 1366; ++x, ++samples) {
      for (int c = 0; c < 3; ++c) {
        const double want = exact_average(src, 1366, 768, x, y, c);
        const double got = out[size_t(y) * 1366 + size_t(x)][size_t(c)];
        worst = std::max(worst, std::abs(got - want));
        bias[size_t(c)] += got - want;
      }
    }
  }
  // Each weight is a 256th-rounded share, so a pixel can be off by a level or
  // two; but rounding, not truncation, keeps every channel unbiased.
  CHECK(worst <= 2.0);
  for (double b : bias) CHECK(std::abs(b / samples) < 0.1);
}

TEST_CASE("the pixel layout decides which source byte is red and which is blue") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  image src(4, 2, 4);
  src.fill(0, 0, 4, 2, {10, 20, 30});  // Stored as bytes 30, 20, 10, X.
  SECTION("when scaling") {
    CHECK(scale(src, 2, 1, kBgrx, level) == std::vector<rgb>{{10, 20, 30}, {10, 20, 30}});
    CHECK(scale(src, 2, 1, kRgbx, level) == std::vector<rgb>{{30, 20, 10}, {30, 20, 10}});
  }
  SECTION("when only converting") {
    CHECK(scale(src, 4, 2, kBgrx, level) == std::vector<rgb>(8, rgb{10, 20, 30}));
    CHECK(scale(src, 4, 2, kRgbx, level) == std::vector<rgb>(8, rgb{30, 20, 10}));
  }
}

TEST_CASE("a same-size scaler only converts pixels and honours the stride") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  std::mt19937 rng(517);
  std::uniform_int_distribution<int> byte(0, 255);
  image src(517, 33, 20);
  for (int y = 0; y < src.h; ++y) {
    for (int x = 0; x < src.w; ++x) {
      src.set(x, y, {uint8_t(byte(rng)), uint8_t(byte(rng)), uint8_t(byte(rng))});
    }
  }
  std::vector<rgb> out = scale(src, 517, 33, kBgrx, level);
  bool same = true;
  for (int y = 0; y < src.h; ++y) {
    for (int x = 0; x < src.w; ++x) same = same && out[size_t(y) * 517 + size_t(x)] == src.get(x, y);
  }
  CHECK(same);
}

TEST_CASE("rows may be produced in any order") {
  const cu::simd_level level = GENERATE(from_range(levels()));
  CAPTURE(cu::simd_name(level));
  image src(30, 20);
  for (int y = 0; y < 20; ++y) src.fill(0, y, 30, y + 1, {uint8_t(y * 10), 0, 0});
  std::vector<rgb> in_order = scale(src, 9, 7, kBgrx, level);
  cu::area_scaler s(30, 20, 9, 7, kBgrx, level);
  std::vector<uint8_t> row(9 * 3);
  for (int y = 6; y >= 0; --y) {
    s.row(src.bytes.data(), src.stride, y, row.data());
    CAPTURE(y);
    CHECK(rgb{row[0], row[1], row[2]} == in_order[size_t(y) * 9]);
  }
}

TEST_CASE("a level above what the CPU runs falls back to the best it does") {
  const cu::area_scaler s(64, 32, 40, 20, kBgrx, cu::simd_level::avx2);
  CHECK(s.level() == std::min(cu::simd_level::avx2, cu::simd_best()));
  CHECK(cu::area_scaler(64, 32, 40, 20, kBgrx).level() == cu::simd_best());
  CHECK(std::string(cu::simd_name(cu::simd_level::scalar)) == "scalar");
  CHECK(std::string(cu::simd_name(cu::simd_level::ssse3)) == "ssse3");
  CHECK(std::string(cu::simd_name(cu::simd_level::avx2)) == "avx2");
}

TEST_CASE("every vector level writes exactly the bytes of the scalar level") {
  // The screen sizes the server scales, then sizes that leave every vector
  // loop a tail (widths 1 to 19), many taps per pixel (100 to 7 columns),
  // a one-way downscale each way, and no padding after the last row, so an
  // over-read of the source shows up under AddressSanitizer.
  struct size_case {
    int sw, sh, dw, dh;
    size_t pad;
  };
  std::vector<size_case> cases = {
      {1920, 1080, 1366, 768, 0}, {1920, 1080, 1920, 1080, 0}, {3840, 2160, 1366, 768, 8},
      {3440, 1440, 1568, 656, 0}, {2560, 1440, 1366, 768, 4},  {100, 40, 7, 3, 0},
      {1000, 9, 3, 2, 0},         {640, 480, 639, 479, 12},    {640, 480, 640, 240, 0},
      {640, 480, 320, 480, 0},    {33, 17, 1, 1, 0},           {1, 1, 1, 1, 0},
  };
  for (int sw = 1; sw <= 19; ++sw) {
    for (int dw : {1, (sw + 1) / 2, sw - 1, sw}) {
      if (dw >= 1) cases.push_back({sw, 5, dw, 3, size_t(sw % 3) * 4});
    }
  }
  std::mt19937 rng(2160);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const size_case& c : cases) {
    CAPTURE(c.sw, c.sh, c.dw, c.dh, c.pad);
    // Noise (the fourth byte too), then flat white and black blocks, whose
    // sums are the largest and smallest the accumulators hold.
    image src(c.sw, c.sh, c.pad);
    for (uint8_t& b : src.bytes) b = uint8_t(byte(rng));
    src.fill(0, 0, c.sw / 3, c.sh / 2, {255, 255, 255});
    src.fill(c.sw / 3, c.sh / 2, c.sw * 2 / 3, c.sh, {0, 0, 0});
    for (cu::pixel_layout layout : {kBgrx, kRgbx}) {
      const std::vector<rgb> want = scale(src, c.dw, c.dh, layout, cu::simd_level::scalar);
      for (cu::simd_level level : levels()) {
        CAPTURE(layout.r, cu::simd_name(level));
        // The first pixel that differs, rather than a million printed.
        const std::vector<rgb> got = scale(src, c.dw, c.dh, layout, level);
        const size_t at = size_t(std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin());
        CAPTURE(at % size_t(c.dw), at / size_t(c.dw));
        CHECK(at == got.size());
      }
    }
  }
}
