// Tests for src/capture/jpeg.h: libjpeg decodes what the encoder writes to
// the image it was given (within JPEG's loss), and the strips of a parallel
// encode join into a file that decodes to exactly the pixels of the
// encode in one piece.
#include "capture/jpeg.h"

#include <jpeglib.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "capture/task_runner.h"
#include "thread_runner.h"

namespace {

using cu::test::thread_runner;

struct rgb_image {
  int w = 0, h = 0;
  std::vector<uint8_t> bytes;
  rgb_image(int w_, int h_) : w(w_), h(h_), bytes(size_t(w_) * size_t(h_) * 3) {}
  uint8_t* row(int y) { return &bytes[size_t(y) * size_t(w) * 3]; }
  const uint8_t* row(int y) const { return &bytes[size_t(y) * size_t(w) * 3]; }
};

// Smooth gradients with a few flat blocks: what JPEG keeps well.
rgb_image scene(int w, int h) {
  rgb_image img(w, h);
  for (int y = 0; y < h; ++y) {
    uint8_t* p = img.row(y);
    for (int x = 0; x < w; ++x, p += 3) {
      p[0] = uint8_t(x * 255 / w);
      p[1] = uint8_t(y * 255 / h);
      p[2] = uint8_t(128 + ((x / 64 + y / 64) % 2) * 60);
    }
  }
  return img;
}

rgb_image decode(const cu::byte_buffer& j) {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, j.data.get(), j.size);
  REQUIRE(jpeg_read_header(&cinfo, TRUE) == JPEG_HEADER_OK);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  rgb_image img(int(cinfo.output_width), int(cinfo.output_height));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = img.row(int(cinfo.output_scanline));
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  // A corrupt stream shows as warnings (libjpeg fills in what it lost).
  CHECK(err.num_warnings == 0);
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return img;
}

std::function<cu::row_filler()> filler_of(const rgb_image& img) {
  return [&img]() -> cu::row_filler {
    return [&img](int y, uint8_t* row) { std::memcpy(row, img.row(y), size_t(img.w) * 3); };
  };
}

double mean_abs_error(const rgb_image& a, const rgb_image& b) {
  double sum = 0;
  for (size_t i = 0; i < a.bytes.size(); ++i) sum += std::abs(int(a.bytes[i]) - int(b.bytes[i]));
  return sum / double(a.bytes.size());
}

}  // namespace

TEST_CASE("a JPEG decodes to its image within JPEG's loss") {
  for (auto [w, h] : {std::pair{1366, 768}, std::pair{517, 203}, std::pair{7, 3}}) {
    CAPTURE(w, h);
    rgb_image img = scene(w, h);
    auto j = cu::encode_jpeg_rgb(w, h, filler_of(img)(), 90);
    REQUIRE(j.ok());
    rgb_image back = decode(*j);
    REQUIRE(back.w == w);
    REQUIRE(back.h == h);
    // A 7x3 gradient changes too much per pixel for 4:2:0 chroma.
    if (w > 16) CHECK(mean_abs_error(img, back) < 3.0);
  }
}

TEST_CASE("a JPEG encoded in strips decodes to exactly the one-piece encode") {
  thread_runner runner;
  for (auto [w, h] : {std::pair{1366, 768}, std::pair{1568, 656}, std::pair{1000, 333},
                      std::pair{300, 100}}) {
    CAPTURE(w, h);
    rgb_image img = scene(w, h);
    auto whole = cu::encode_jpeg_rgb(w, h, filler_of(img)(), 85);
    cu::jpeg_strips layout = cu::jpeg_strip_layout(w, h, 85);
    auto strips = cu::encode_jpeg_strips(layout, filler_of(img), runner);
    REQUIRE(whole.ok());
    REQUIRE(strips.ok());
    rgb_image a = decode(*whole);
    rgb_image b = decode(*strips);
    REQUIRE(b.w == w);
    REQUIRE(b.h == h);
    CHECK(a.bytes == b.bytes);
  }
  CHECK(runner.ran > 0);  // The tall images were really cut.
}

TEST_CASE("JPEG strips kept from an earlier encode join new ones exactly") {
  thread_runner runner;
  const int w = 1366, h = 768;
  rgb_image before = scene(w, h);
  cu::jpeg_strips j = cu::jpeg_strip_layout(w, h, 80);
  REQUIRE(cu::encode_jpeg_strips(j, filler_of(before), runner).ok());
  rgb_image after = before;
  for (int y = 300; y < 340; ++y) {
    for (int x = 600; x < 640; ++x) after.row(y)[x * 3] ^= 0xff;
  }
  size_t redone = 0;
  for (cu::png_strip& s : j.strips) {
    if (s.y0 < 340 && 300 < s.y1) {
      s.deflated.reset();
      ++redone;
    }
  }
  CHECK(redone == 2);  // Rows 300..339 cross the strip boundary at 320.
  auto joined = cu::encode_jpeg_strips(j, filler_of(after), runner);
  cu::jpeg_strips fresh = cu::jpeg_strip_layout(w, h, 80);
  auto whole = cu::encode_jpeg_strips(fresh, filler_of(after), runner);
  REQUIRE(joined.ok());
  REQUIRE(whole.ok());
  CHECK(decode(*joined).bytes == decode(*whole).bytes);
}

TEST_CASE("lower JPEG quality gives smaller files") {
  rgb_image img = scene(800, 600);
  auto hi = cu::encode_jpeg_rgb(800, 600, filler_of(img)(), 90);
  auto lo = cu::encode_jpeg_rgb(800, 600, filler_of(img)(), 40);
  REQUIRE(hi.ok());
  REQUIRE(lo.ok());
  CHECK(lo->size < hi->size);
}

TEST_CASE("an empty JPEG is refused") {
  auto r = cu::encode_jpeg_rgb(0, 10, [](int, uint8_t*) {}, 90);
  CHECK_FALSE(r.ok());
}
