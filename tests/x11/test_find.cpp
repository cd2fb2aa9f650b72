// screenshot_find (the vision toolset) against a real Xvfb: scenes of
// known pixels painted by the test's own X client, templates cut from them
// (a part of the screenshot, a PNG from zoom, the same PNG as a file),
// found at the place the test painted them, with the screenshot's downscale
// in effect and in one window; not found once gone; flat templates refused.
#include <catch2/catch.hpp>
#include <spng.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/tool_calls.h"
#include "support/jsonrpc.h"
#include "util/base64.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kVisionOn = {{"CU_TOOLSETS", "vision,windows"}};

// A window of coloured blocks (a UI-like scene: edges and flat areas), the
// same for the same seed.
xcb_window_t paint_scene(x_client& x, int left, int top, int w, int h, uint32_t seed) {
  xcb_window_t win = x.create_app_window(left, top, w, h, rgb{250, 250, 250});
  uint32_t state = x.paint_blocks(win, w, h, seed);
  auto next = [&] { return next_block_value(state); };
  // And four blocks of the seed's colours at (30, 30) to (130, 110), so a
  // template cut there has edges whatever the random blocks did.
  for (int i = 0; i < 4; ++i) {
    x.fill(win, 30 + 50 * (i % 2), 30 + 40 * (i / 2), 50, 40,
           rgb{uint8_t(next() % 256), uint8_t(next() % 256), uint8_t(next() % 256)});
  }
  x.sync();
  return win;
}

// A greyscale PNG of w x h pixels of vertical stripes, which deflate packs
// to a few hundred KiB however large it is: the shape of a file that
// declares far more pixels than it weighs. Written row by row, so the test
// never holds the image itself.
std::vector<uint8_t> striped_png(uint32_t w, uint32_t h) {
  std::unique_ptr<spng_ctx, void (*)(spng_ctx*)> ctx(spng_ctx_new(SPNG_CTX_ENCODER),
                                                     spng_ctx_free);
  REQUIRE(ctx);
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_set_option(ctx.get(), SPNG_FILTER_CHOICE, SPNG_FILTER_CHOICE_NONE);
  spng_ihdr ihdr{};
  ihdr.width = w;
  ihdr.height = h;
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_GRAYSCALE;
  REQUIRE(spng_set_ihdr(ctx.get(), &ihdr) == 0);
  REQUIRE(spng_encode_image(ctx.get(), nullptr, 0, SPNG_FMT_PNG,
                            SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE) == 0);
  std::vector<uint8_t> row(w);
  for (uint32_t x = 0; x < w; ++x) row[x] = (x / 16) % 2 ? 40 : 220;
  int rc = 0;
  for (uint32_t y = 0; y < h && rc == 0; ++y) rc = spng_encode_row(ctx.get(), row.data(), w);
  REQUIRE(rc == SPNG_EOI);
  size_t len = 0;
  int err = 0;
  void* buf = spng_get_png_buffer(ctx.get(), &len, &err);
  REQUIRE(buf);
  std::vector<uint8_t> out(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + len);
  free(buf);
  return out;
}

struct found {
  int x, y, w, h, cx, cy;
  double score;
};

std::vector<found> matches(const json_line& r) {
  std::vector<found> out;
  simdjson::dom::array a;
  REQUIRE(r.root["result"]["structuredContent"]["matches"].get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element m : a) {
    simdjson::dom::array c;
    REQUIRE(m["center"].get(c) == simdjson::SUCCESS);
    double score = 0;
    REQUIRE(m["score"].get(score) == simdjson::SUCCESS);
    out.push_back(found{int(num(m, "x")), int(num(m, "y")), int(num(m, "width")),
                        int(num(m, "height")), int(c.at(0).get_int64().value()),
                        int(c.at(1).get_int64().value()), score});
  }
  return out;
}

// The image block's base64 data of a tools/call response.
std::string image_data(const json_line& r) {
  std::string_view d;
  REQUIRE(r.root["result"]["content"].at(0)["data"].get(d) == simdjson::SUCCESS);
  return std::string(d);
}

}  // namespace

TEST_CASE("a part of a downscaled screenshot is found at its place, and a click on its center "
          "lands there") {
  // 1920x1080 is sent as 1366x768: every image pixel is 1.41 device pixels.
  xvfb x(1920, 1080);
  x_client painter(x.display());
  paint_scene(painter, 200, 150, 420, 300, 1);
  paint_scene(painter, 1100, 500, 420, 300, 2);
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // Cut from the second scene, in image pixels: device (1200, 560) is image
  // (853, 398).
  const int x0 = 853, y0 = 398, x1 = 853 + 90, y1 = 398 + 60;
  json_ptr r = ok_call(s, "screenshot_find", "{\"template_region\":" + region(x0, y0, x1, y1) + "}");
  std::vector<found> m = matches(*r);
  REQUIRE_FALSE(m.empty());
  INFO(r->text);
  // Exactly where it was cut, at its own size: the image pixel nearest
  // the device match, not the device rectangle rounded outwards.
  CHECK(m[0].x == x0);
  CHECK(m[0].y == y0);
  CHECK(m[0].w == 90);
  CHECK(m[0].h == 60);
  CHECK(m[0].score > 0.97);
  // Nothing else in the scenes looks like it.
  for (size_t i = 1; i < m.size(); ++i) CHECK(m[i].score < m[0].score);
  // The device rectangle is where the pixels are: image (853, 398) starts
  // at device floor(853 * 1920 / 1366) = 1198 (or the next pixel).
  simdjson::dom::element device = r->root["result"]["structuredContent"]["matches"].at(0)["device"];
  CHECK(std::abs(num(device, "x") - 1199) <= 2);
  CHECK(std::abs(num(device, "y") - 559) <= 2);
  // Searched in a region without it: nothing.
  json_ptr none = ok_call(s, "screenshot_find", "{\"template_region\":" +
                                                    region(x0, y0, x1, y1) +
                                                    ",\"region\":[0,0,600,380]}");
  CHECK(matches(*none).empty());
}

TEST_CASE("a PNG template, as base64 and as a file, is found, and not once it is gone") {
  // 1024x768 is sent as it is, so zoom's PNG of a region is a template in
  // image pixels.
  xvfb x(1024, 768);
  x_client painter(x.display());
  xcb_window_t scene = paint_scene(painter, 300, 200, 400, 300, 3);
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  const std::string png = image_data(*ok_call(s, "zoom", "{\"region\":[420,260,484,324]}"));
  json_ptr r = ok_call(s, "screenshot_find", "{\"template\":\"" + png + "\"}");
  std::vector<found> m = matches(*r);
  REQUIRE(m.size() >= 1);
  CHECK(m[0].x == 420);
  CHECK(m[0].y == 260);
  CHECK(m[0].w == 64);
  CHECK(m[0].h == 64);
  CHECK(m[0].cx == 452);
  CHECK(m[0].cy == 292);
  CHECK(m[0].score > 0.999);

  // The same PNG from a file.
  std::vector<uint8_t> bytes;
  REQUIRE(cu::base64_decode(png, bytes));
  char path[] = "/tmp/cu-find-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  close(fd);
  json_ptr from_file =
      ok_call(s, "screenshot_find", "{\"template_path\":\"" + std::string(path) + "\"}");
  unlink(path);
  REQUIRE_FALSE(matches(*from_file).empty());
  CHECK(matches(*from_file)[0].x == 420);

  // The scene goes: nothing matches.
  xcb_unmap_window(painter.connection(), scene);
  painter.sync();
  json_ptr gone = ok_call(s, "screenshot_find", "{\"template\":\"" + png + "\"}");
  CHECK(matches(*gone).empty());
}

TEST_CASE("a small PNG that declares a huge image is refused from its header, at once and "
          "without the memory to decode it") {
  xvfb x(1024, 768);
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // 8192x8192: 64 Mi pixels, about 270 MB once decoded to RGB and grey.
  const std::vector<uint8_t> huge = striped_png(8192, 8192);
  INFO("the PNG weighs " << huge.size() << " bytes");
  REQUIRE(huge.size() < (1u << 20));
  std::string base64;
  cu::base64_append(base64, huge.data(), huge.size());
  char path[] = "/tmp/cu-find-huge-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, huge.data(), huge.size()) == ssize_t(huge.size()));
  close(fd);

  const cu::test::memory_kib before = process_memory(s.pid());
  const int64_t started = now_ms();
  const std::string as_base64 =
      error_text(s, "screenshot_find", "{\"template\":\"" + base64 + "\"}");
  const int64_t base64_ms = now_ms() - started;
  const std::string as_file =
      error_text(s, "screenshot_find", "{\"template_path\":\"" + std::string(path) + "\"}");
  const int64_t both_ms = now_ms() - started;
  const cu::test::memory_kib after = process_memory(s.pid());
  unlink(path);
  // The numbers, for the record (docs/vision.md quotes them).
  fprintf(stderr,
          "huge PNG (%zu bytes): refused as base64 in %lld ms, both in %lld ms; peak RSS %lld "
          "KiB before, %lld KiB after\n",
          huge.size(), (long long)base64_ms, (long long)both_ms, (long long)before.peak,
          (long long)after.peak);
  INFO(as_base64 << "\n" << as_file);
  CHECK(contains(as_base64, "Invalid argument \"template\": the template (8192x8192) is too "
                            "large: at most 2048 pixels on a side"));
  CHECK(contains(as_file, "Invalid argument \"template_path\": the template (8192x8192) is too "
                          "large: at most 2048 pixels on a side"));
  // Decoding it took 1.8 s and 270 MB of peak memory; a header costs
  // neither. The bound leaves room for a loaded machine and the
  // sanitizers, and none for a decode.
  REQUIRE(before.peak > 0);
  CHECK(after.peak - before.peak < 32 * 1024);
  CHECK(both_ms < 1500);

  // Within the limit but larger than what is searched: refused from the
  // header too, with the sizes.
  const std::vector<uint8_t> wide = striped_png(1500, 300);
  base64.clear();
  cu::base64_append(base64, wide.data(), wide.size());
  CHECK(contains(error_text(s, "screenshot_find", "{\"template\":\"" + base64 + "\"}"),
                 "the template (1500x300) is larger than the image searched (1024x768)"));
}

TEST_CASE("screenshot_find in one window answers in the window's image, and refuses what it "
          "cannot search") {
  xvfb x(1024, 768);
  // The server first, and a capture answered, so its Composite redirection
  // (asked for when a capture worker connects) keeps what is painted from
  // then on: a real program repaints on the Expose a redirection brings,
  // this painter does not.
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  x_client painter(x.display());
  xcb_window_t scene = paint_scene(painter, 100, 100, 500, 400, 4);
  // A cover over part of the window: the window's own pixels are searched.
  painter.create_window(0, 0, 300, 300, rgb{0, 255, 0});
  painter.sync();
  ok_call(s, "screenshot", "{\"window\":\"" + hex(scene) + "\"}");
  // A part under the cover, in the window's image.
  json_ptr r = ok_call(s, "screenshot_find", "{\"template_region\":[40,40,120,100]}");
  CHECK(r->root["result"]["structuredContent"]["window"].get_string().value() == hex(scene));
  std::vector<found> m = matches(*r);
  REQUIRE_FALSE(m.empty());
  CHECK(m[0].x == 40);
  CHECK(m[0].y == 40);

  // Refusals, each naming what to change.
  CHECK(contains(error_text(s, "screenshot_find", "{}"), "exactly one of"));
  CHECK(contains(error_text(s, "screenshot_find",
                            "{\"template_region\":[0,0,10,10],\"template_path\":\"/x.png\"}"),
                 "exactly one of"));
  CHECK(contains(error_text(s, "screenshot_find", "{\"template\":\"not base64!\"}"),
                 "Invalid argument \"template\""));
  CHECK(contains(error_text(s, "screenshot_find", "{\"template\":\"aGVsbG8=\"}"),
                 "not a PNG"));
  CHECK(contains(error_text(s, "screenshot_find", "{\"template_path\":\"relative.png\"}"),
                 "absolute path"));
  CHECK(contains(error_text(s, "screenshot_find", "{\"template_path\":\"/nonexistent/t.png\"}"),
                 "cannot read"));
  // A FIFO with no writer would block a reader for ever: refused at once.
  char fifo_dir[] = "/tmp/cu-find-fifo-XXXXXX";
  REQUIRE(mkdtemp(fifo_dir) != nullptr);
  const std::string fifo = std::string(fifo_dir) + "/t.png";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(contains(error_text(s, "screenshot_find", "{\"template_path\":\"" + fifo + "\"}"),
                 "is not a regular file"));
  unlink(fifo.c_str());
  rmdir(fifo_dir);
  CHECK(contains(error_text(s, "screenshot_find", "{\"template_region\":[0,0,600,10]}"),
                 "Invalid argument \"template_region\""));
  CHECK(contains(error_text(s, "screenshot_find",
                            "{\"template_region\":[0,0,10,10],\"threshold\":1.5}"),
                 "Invalid argument \"threshold\""));
  CHECK(contains(error_text(s, "screenshot_find",
                            "{\"template_region\":[0,0,10,10],\"max_results\":0}"),
                 "Invalid argument \"max_results\""));
  // A flat part: the scene's background in its corner, one colour.
  ok_call(s, "screenshot", "{}");
  CHECK(contains(error_text(s, "screenshot_find", "{\"template_region\":[1000,740,1020,760]}"),
                 "flat"));
  // Without the toolset, the tool is unknown.
  server_process plain(x.display());
  CHECK(contains(error_text(plain, "screenshot_find", "{\"template_region\":[0,0,10,10]}"),
                 "Unknown tool"));
}
