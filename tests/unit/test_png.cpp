// Tests for src/capture/png.h: both PNG engines produce files that libspng
// decodes, checksums included, to exactly the rows they were given.
#include "capture/png.h"

#include <spng.h>

#include <thread>

#include "capture/task_runner.h"
#include "util/base64.h"
#include "thread_runner.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <functional>
#include <span>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using cu::test::thread_runner;

struct spng_ctx_deleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};

// An RGB image, rows packed.
struct rgb_image {
  int w = 0, h = 0;
  std::vector<uint8_t> bytes;
  rgb_image(int w_, int h_) : w(w_), h(h_), bytes(size_t(w_) * size_t(h_) * 3) {}
  const uint8_t* row(int y) const { return &bytes[size_t(y) * size_t(w) * 3]; }
};

rgb_image random_image(int w, int h, uint32_t seed) {
  rgb_image img(w, h);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& b : img.bytes) b = uint8_t(byte(rng));
  return img;
}

rgb_image flat_image(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  rgb_image img(w, h);
  for (size_t i = 0; i < img.bytes.size(); i += 3) {
    img.bytes[i] = r;
    img.bytes[i + 1] = g;
    img.bytes[i + 2] = b;
  }
  return img;
}

// Screen-like content: a light background, a few bars and some text-like
// noise, so the encoders see runs as well as detail.
rgb_image screen_image(int w, int h) {
  rgb_image img = flat_image(w, h, 240, 240, 240);
  std::mt19937 rng(31337);
  std::uniform_int_distribution<int> coin(0, 7);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img.bytes[(size_t(y) * size_t(w) + size_t(x)) * 3];
      if (y < 30) {
        p[0] = 40;
        p[1] = 60;
        p[2] = 90;
      } else if (y % 20 < 12 && x % 300 < 200 && coin(rng) == 0) {
        p[0] = p[1] = p[2] = 20;
      }
    }
  }
  return img;
}

// Encodes img with engine, checking that fill_row is asked for each row
// once, top to bottom.
cu::byte_buffer encode(const rgb_image& img, cu::png_engine engine) {
  int next = 0;
  auto r = cu::encode_png_rgb(
      img.w, img.h,
      [&](int y, uint8_t* row) {
        CHECK(y == next);
        ++next;
        std::memcpy(row, img.row(y), size_t(img.w) * 3);
      },
      engine);
  INFO((r.ok() ? std::string() : r.err().message));
  REQUIRE(r.ok());
  CHECK(next == img.h);
  return std::move(*r);
}

// Decodes png with libspng, which verifies every CRC and the zlib checksum.
rgb_image decode(const cu::byte_buffer& png) {
  std::unique_ptr<spng_ctx, spng_ctx_deleter> ctx(spng_ctx_new(0));
  REQUIRE(ctx);
  REQUIRE(spng_set_png_buffer(ctx.get(), png.data.get(), png.size) == 0);
  spng_ihdr ihdr{};
  REQUIRE(spng_get_ihdr(ctx.get(), &ihdr) == 0);
  CHECK(ihdr.bit_depth == 8);
  CHECK(ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR);
  CHECK(ihdr.interlace_method == 0);
  rgb_image img(int(ihdr.width), int(ihdr.height));
  size_t size = 0;
  REQUIRE(spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &size) == 0);
  REQUIRE(size == img.bytes.size());
  int rc = spng_decode_image(ctx.get(), img.bytes.data(), size, SPNG_FMT_RGB8, 0);
  INFO(spng_strerror(rc));
  REQUIRE(rc == 0);
  return img;
}

// The file ends with exactly one IEND chunk, nothing after it.
bool ends_with_iend(const cu::byte_buffer& png) {
  static constexpr uint8_t kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  return png.size >= 12 && std::memcmp(png.data.get() + png.size - 12, kIend, 12) == 0;
}

void check_round_trip(const rgb_image& img, cu::png_engine engine) {
  cu::byte_buffer png = encode(img, engine);
  CHECK(ends_with_iend(png));
  rgb_image back = decode(png);
  REQUIRE(back.w == img.w);
  REQUIRE(back.h == img.h);
  // One comparison for the whole image, so a mismatch does not print a
  // million assertions; the first differing row is reported instead.
  int first_bad_row = -1;
  for (int y = 0; y < img.h && first_bad_row < 0; ++y) {
    if (std::memcmp(back.row(y), img.row(y), size_t(img.w) * 3) != 0) first_bad_row = y;
  }
  CHECK(first_bad_row == -1);
}

// Encodes img in strips through runner; every row must be asked for exactly
// once, whichever thread asks.
cu::byte_buffer encode_parallel(const rgb_image& img, cu::task_runner& runner) {
  std::vector<int> asked(size_t(img.h), 0);
  auto make_filler = [&]() -> cu::row_filler {
    return [&](int y, uint8_t* row) {
      ++asked[size_t(y)];  // Distinct rows per strip: no two threads share one.
      std::memcpy(row, img.row(y), size_t(img.w) * 3);
    };
  };
  auto r = cu::encode_png_rgb_parallel(img.w, img.h, make_filler, runner);
  INFO((r.ok() ? std::string() : r.err().message));
  REQUIRE(r.ok());
  CHECK(std::count(asked.begin(), asked.end(), 1) == img.h);
  return std::move(*r);
}

const cu::png_engine kEngines[] = {cu::png_engine::fastest, cu::png_engine::spng};

const char* engine_name(cu::png_engine e) {
  return e == cu::png_engine::spng ? "libspng" : cu::png_fastest_engine_name();
}

}  // namespace

TEST_CASE("random images of several sizes decode to exactly their rows") {
  const int sizes[][2] = {{1, 1}, {3, 2}, {2, 3}, {517, 33}, {1366, 768}};
  for (cu::png_engine engine : kEngines) {
    for (const auto& s : sizes) {
      CAPTURE(engine_name(engine), s[0], s[1]);
      check_round_trip(random_image(s[0], s[1], uint32_t(s[0] * 7919 + s[1])), engine);
    }
  }
}

TEST_CASE("flat images of several sizes decode to exactly their rows") {
  const int sizes[][2] = {{1, 1}, {3, 2}, {517, 33}, {1366, 768}};
  for (cu::png_engine engine : kEngines) {
    for (const auto& s : sizes) {
      CAPTURE(engine_name(engine), s[0], s[1]);
      check_round_trip(flat_image(s[0], s[1], 0x12, 0x80, 0xfe), engine);
      check_round_trip(flat_image(s[0], s[1], 0, 0, 0), engine);
      check_round_trip(flat_image(s[0], s[1], 255, 255, 255), engine);
    }
  }
}

TEST_CASE("screen-like content decodes exactly and compresses well") {
  const rgb_image img = screen_image(1366, 768);
  for (cu::png_engine engine : kEngines) {
    CAPTURE(engine_name(engine));
    check_round_trip(img, engine);
    CHECK(encode(img, engine).size < img.bytes.size() / 4);
  }
}

TEST_CASE("incompressible random data still decodes") {
  // Random bytes do not deflate, so the file is larger than the filtered
  // rows it holds, and larger than the ISA-L encoder's first estimate of
  // raw/2 + 4 KiB: its output buffer has to grow on the way.
  const rgb_image img = random_image(800, 600, 600);
  const size_t raw = (size_t(img.w) * 3 + 1) * size_t(img.h);
  for (cu::png_engine engine : kEngines) {
    CAPTURE(engine_name(engine));
    check_round_trip(img, engine);
    CHECK(encode(img, engine).size > raw);
  }
}

TEST_CASE("an empty image is refused") {
  auto fill = [](int, uint8_t*) { FAIL("no row should be asked for"); };
  for (cu::png_engine engine : kEngines) {
    for (auto [w, h] : {std::pair{0, 1}, std::pair{1, 0}, std::pair{-1, 5}}) {
      auto r = cu::encode_png_rgb(w, h, fill, engine);
      REQUIRE_FALSE(r.ok());
      CHECK(r.err().code == cu::errc::invalid_argument);
    }
  }
}

TEST_CASE("the fastest engine has a name") {
  const std::string name = cu::png_fastest_engine_name();
  CHECK((name == "isa-l" || name == "libspng"));
}

TEST_CASE("an image encoded in parallel strips decodes to exactly its rows") {
  thread_runner runner;
  for (auto [w, h] : {std::pair{1366, 768}, std::pair{517, 200}, std::pair{300, 100},
                      std::pair{7, 3}}) {
    CAPTURE(w, h);
    for (const rgb_image& img : {screen_image(w, h), random_image(w, h, uint32_t(w + h))}) {
      cu::byte_buffer png = encode_parallel(img, runner);
      CHECK(ends_with_iend(png));
      rgb_image back = decode(png);
      REQUIRE(back.w == img.w);
      REQUIRE(back.h == img.h);
      CHECK(back.bytes == img.bytes);
    }
  }
  if (std::string(cu::png_fastest_engine_name()) == "isa-l") {
    // Tall images were really cut into strips (small ones stay whole).
    CHECK(runner.ran > 0);
  }
}

namespace {

// Encodes img through encode_png_strips with strips (kept ones are reused);
// nothing when it gave up above give_up_above bytes.
std::optional<cu::byte_buffer> encode_strips(const rgb_image& img,
                                             std::vector<cu::png_strip>& strips,
                                             size_t give_up_above = SIZE_MAX) {
  thread_runner runner;
  auto make_filler = [&]() -> cu::row_filler {
    return [&](int y, uint8_t* row) { std::memcpy(row, img.row(y), size_t(img.w) * 3); };
  };
  auto r = cu::encode_png_strips(img.w, img.h, strips, make_filler, runner, give_up_above);
  INFO((r.ok() ? std::string() : r.err().message));
  REQUIRE(r.ok());
  if (!*r) return std::nullopt;
  // The pieces join into the file, and base64 over the pieces is base64
  // of the file.
  cu::byte_buffer file = (*r)->join();
  std::string pieces, joined;
  cu::base64_append(pieces, (*r)->spans());
  cu::base64_append(joined, file.data.get(), file.size);
  CHECK(pieces == joined);
  return file;
}

}  // namespace

TEST_CASE("strips kept from an earlier encode join new ones into an exact PNG") {
  const int w = 1366, h = 768;
  std::vector<cu::png_strip> strips = cu::png_strip_layout(h);
  if (strips.empty()) {
    SUCCEED("this build's PNG encoder (libspng) keeps no strips");
    return;
  }
  CHECK(strips.front().y0 == 0);
  CHECK(strips.back().y1 == h);
  rgb_image before = screen_image(w, h);
  auto first = encode_strips(before, strips);
  REQUIRE(first);
  CHECK(decode(*first).bytes == before.bytes);
  for (const cu::png_strip& s : strips) REQUIRE(s.deflated);

  // A change in rows 300..339: only the strips holding them are redone.
  rgb_image after = before;
  for (int y = 300; y < 340; ++y) {
    for (int x = 600; x < 640; ++x) after.bytes[(size_t(y) * w + size_t(x)) * 3] ^= 0xff;
  }
  std::vector<const cu::byte_buffer*> kept;
  size_t redone = 0;
  for (cu::png_strip& s : strips) {
    if (s.y0 < 340 && 300 < s.y1) {
      s.deflated.reset();
      ++redone;
    }
    kept.push_back(s.deflated.get());
  }
  CHECK(redone >= 1);
  CHECK(redone <= 3);
  auto second = encode_strips(after, strips);
  REQUIRE(second);
  rgb_image back = decode(*second);
  CHECK(back.bytes == after.bytes);
  for (size_t i = 0; i < strips.size(); ++i) {
    if (kept[i] != nullptr) CHECK(strips[i].deflated.get() == kept[i]);
  }
}

TEST_CASE("a strip encode gives up once the bytes pass the limit") {
  std::vector<cu::png_strip> strips = cu::png_strip_layout(400);
  rgb_image noise = random_image(600, 400, 99);
  auto whole = encode_strips(noise, strips);
  REQUIRE(whole);
  std::vector<cu::png_strip> again = cu::png_strip_layout(400);
  CHECK_FALSE(encode_strips(noise, again, whole->size / 2));
  std::vector<cu::png_strip> enough = cu::png_strip_layout(400);
  CHECK(encode_strips(noise, enough, whole->size + 1000));
}

TEST_CASE("decode_png_rgb gives back what was encoded, and refuses what is not a PNG or too big") {
  const rgb_image img = random_image(517, 33, 99);
  cu::byte_buffer png = encode(img, kEngines[0]);
  auto back = cu::decode_png_rgb({png.data.get(), png.size});
  REQUIRE(back.ok());
  CHECK(back->w == 517);
  CHECK(back->h == 33);
  CHECK(back->rgb == img.bytes);
  // Wider than allowed: refused, saying why.
  auto wide = cu::decode_png_rgb({png.data.get(), png.size}, 256);
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.err().code == cu::errc::invalid_argument);
  CHECK(wide.err().message.find("not a PNG this server can read") == 0);
  // Not a PNG, and a PNG cut short.
  const uint8_t text[] = {'h', 'e', 'l', 'l', 'o'};
  CHECK_FALSE(cu::decode_png_rgb(text).ok());
  CHECK_FALSE(cu::decode_png_rgb({png.data.get(), png.size / 2}).ok());
  CHECK_FALSE(cu::decode_png_rgb({}).ok());
}

TEST_CASE("png_header_size reads the size from the first 24 bytes, and refuses what is not a "
          "PNG's start") {
  const rgb_image img = random_image(517, 33, 7);
  cu::byte_buffer png = encode(img, kEngines[0]);
  // The header alone is enough: nothing after it is looked at.
  auto size = cu::png_header_size({png.data.get(), 24});
  REQUIRE(size.ok());
  CHECK(size->w == 517);
  CHECK(size->h == 33);
  CHECK_FALSE(cu::png_header_size({png.data.get(), 23}).ok());
  const uint8_t text[] = {'h', 'e', 'l', 'l', 'o'};
  auto refused = cu::png_header_size(text);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == cu::errc::invalid_argument);
  CHECK(refused.err().message.find("not a PNG this server can read") == 0);
  // A width of zero is no image.
  std::vector<uint8_t> zero(png.data.get(), png.data.get() + 24);
  zero[16] = zero[17] = zero[18] = zero[19] = 0;
  CHECK_FALSE(cu::png_header_size(zero).ok());
}
