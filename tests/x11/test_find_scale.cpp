// screenshot_find at either scale and in colour, against a real Xvfb of
// 1920x1080 (sent as 1366x768): a template at the screen's real size (a
// zoom crop) is found where it was cut and the answer says it matched at
// the screen's scale; one cut from the screenshot says scale 1; a red box
// of the green box's shape does not tie with it; an xterm's fine text cut
// at the screen's real size is found at the default threshold. (Chromium's
// page at the screen's real size: tests/apps/find-template.)
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kVisionOn = {{"CU_TOOLSETS", "vision,windows"}};

// A window of coloured blocks, the same for the same seed: edges and flat
// areas, as a user interface has.
xcb_window_t paint_scene(x_client& x, int left, int top, int w, int h, uint32_t seed) {
  xcb_window_t win = x.create_app_window(left, top, w, h, rgb{250, 250, 250});
  x.paint_blocks(win, w, h, seed);
  x.sync();
  return win;
}

struct found {
  int x, y, w, h;
  double score, scale;
};

std::vector<found> matches(const json_line& r) {
  std::vector<found> out;
  simdjson::dom::array a;
  REQUIRE(r.root["result"]["structuredContent"]["matches"].get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element m : a) {
    double score = 0, scale = -1;
    REQUIRE(m["score"].get(score) == simdjson::SUCCESS);
    // Checked where it matters: absent, the scale reads as -1.
    if (m["scale"].get(scale) != simdjson::SUCCESS) scale = -1;
    out.push_back(found{int(num(m, "x")), int(num(m, "y")), int(num(m, "width")),
                        int(num(m, "height")), score, scale});
  }
  return out;
}

std::string image_data(const json_line& r) {
  std::string_view d;
  REQUIRE(r.root["result"]["content"].at(0)["data"].get(d) == simdjson::SUCCESS);
  return std::string(d);
}

}  // namespace

TEST_CASE("a template at the screen's real size (a zoom crop) is found where it was cut, and "
          "the answer says it matched at the screen's scale") {
  xvfb x(1920, 1080);
  x_client painter(x.display());
  paint_scene(painter, 200, 150, 420, 300, 1);
  paint_scene(painter, 1100, 500, 420, 300, 2);
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // Image (853, 398) to (943, 458) is device (1199, 559) to (1325, 644):
  // zoom sends it at the screen's real size, about 127x85 pixels, as an
  // icon file or a crop an agent saved would be.
  json_ptr zoom = ok_call(s, "zoom", "{\"region\":" + region(853, 398, 943, 458) + "}");
  json_ptr r = ok_call(s, "screenshot_find", "{\"template\":\"" + image_data(*zoom) + "\"}");
  INFO(r->text);
  std::vector<found> m = matches(*r);
  REQUIRE_FALSE(m.empty());
  // Before the scales were searched, this scored about 0.65 at a wrong place.
  CHECK(std::abs(m[0].x - 853) <= 1);
  CHECK(std::abs(m[0].y - 398) <= 1);
  CHECK(std::abs(m[0].w - 90) <= 1);
  CHECK(std::abs(m[0].h - 60) <= 1);
  CHECK(m[0].score > 0.95);
  CHECK(m[0].scale == Approx(1920.0 / 1366).margin(0.001));
  // The device rectangle is the crop's own: its size, at its place.
  simdjson::dom::element device = r->root["result"]["structuredContent"]["matches"].at(0)["device"];
  CHECK(std::abs(num(device, "x") - 1199) <= 1);
  CHECK(std::abs(num(device, "y") - 559) <= 1);
  // The scales searched: the screenshot's, one between, the screen's.
  simdjson::dom::array scales;
  REQUIRE(r->root["result"]["structuredContent"]["scales"].get(scales) == simdjson::SUCCESS);
  CHECK(scales.size() == 3);

  // A part of the screenshot itself matches at scale 1, and only scale 1
  // is searched for it.
  json_ptr cut =
      ok_call(s, "screenshot_find", "{\"template_region\":" + region(853, 398, 943, 458) + "}");
  INFO(cut->text);
  std::vector<found> c = matches(*cut);
  REQUIRE_FALSE(c.empty());
  CHECK(c[0].x == 853);
  CHECK(c[0].y == 398);
  CHECK(c[0].w == 90);
  CHECK(c[0].scale == 1);
  REQUIRE(cut->root["result"]["structuredContent"]["scales"].get(scales) == simdjson::SUCCESS);
  CHECK(scales.size() == 1);
}

TEST_CASE("a red box of the green box's shape does not tie with the green box's template") {
  xvfb x(1920, 1080);
  x_client painter(x.display());
  xcb_window_t win = painter.create_app_window(100, 100, 1200, 600, rgb{245, 245, 245});
  // Two boxes of one shape, a frame with a bar across: green at (100, 100)
  // in the window, red at (700, 300). Their grey levels differ only by
  // brightness, which grey NCC does not see (both scored 0.980).
  for (auto [bx, by, colour] : {std::tuple{100, 100, rgb{0, 160, 0}},
                                std::tuple{700, 300, rgb{220, 0, 0}}}) {
    painter.fill(win, bx, by, 140, 90, colour);
    painter.fill(win, bx + 10, by + 10, 120, 70, rgb{245, 245, 245});
    painter.fill(win, bx + 10, by + 40, 120, 10, colour);
  }
  painter.sync();
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // The green box with a margin, in image pixels: device (190, 190) to
  // (350, 300).
  const int x0 = 135, y0 = 135, x1 = 249, y1 = 213;
  json_ptr r = ok_call(s, "screenshot_find", "{\"template_region\":" + region(x0, y0, x1, y1) +
                                                 ",\"threshold\":0.3}");
  INFO(r->text);
  std::vector<found> m = matches(*r);
  REQUIRE(m.size() >= 2);
  CHECK(m[0].x == x0);
  CHECK(m[0].y == y0);
  CHECK(m[0].score > 0.99);
  // The red box: device (790, 390), image (562, 277); found, well below.
  bool red_seen = false;
  for (size_t i = 1; i < m.size(); ++i) {
    if (std::abs(m[i].x - 562) <= 2 && std::abs(m[i].y - 277) <= 2) {
      red_seen = true;
      CHECK(m[i].score < 0.85);
    }
  }
  CHECK(red_seen);
  // At the default threshold, the green box alone.
  json_ptr strict =
      ok_call(s, "screenshot_find", "{\"template_region\":" + region(x0, y0, x1, y1) + "}");
  INFO(strict->text);
  CHECK(matches(*strict).size() == 1);
}

namespace {

// An xterm at 100,100 full of distinct lines of text in its default font
// (one-pixel strokes), whose title becomes "text ready" once they are
// printed: xterm's requests reach the X server in order, so a title seen
// means the text before it was drawn.
const std::vector<std::string> kTextXterm = {
    "xterm", "-geometry", "90x24+100+100", "-e", "sh", "-c",
    "printf '%s\\n' 'Perception that holds on real applications: find it where it is.' "
    "'The quick brown fox jumps over the lazy dog 0123456789 times.' "
    "'Pack my box with five dozen liquor jugs; then weigh them.' "
    "'screenshot_find tries each template at every scale it can have.' "
    "'A crop starts at a fraction of a screenshot pixel, not at its edge.' "
    "'Sphinx of black quartz, judge my vow (and keep it short).' "
    "'{\"region\": [853, 398, 943, 458], \"threshold\": 0.9}' "
    "'How vexingly quick daft zebras jump over the wooden fence!' "
    "'One-pixel strokes suffer most when they fall between two pixels.' "
    "'$ meson test -C build --print-errorlogs x11-find_scale' "
    "'Grumpy wizards make toxic brew for the evil queen and jack.' "
    "'The five boxing wizards jump quickly; heavy fog walks by.' "
    "'Amazingly few discotheques provide jukeboxes, said Quentin.'; "
    "printf '\\033]2;text ready\\007'; exec sleep 1000"};

}  // namespace

TEST_CASE("an xterm's fine text cut at the screen's real size is found at its place at the "
          "default threshold") {
  xvfb x(1920, 1080);
  background_program term(kTextXterm, x.display());
  server_process s(x.display(), kVisionOn);
  wait_until(
      [&] {
        json_ptr w = ok_call(s, "list_windows", "{\"app\":\"xterm\"}");
        return w->text.find("text ready") != std::string::npos;
      },
      "the xterm's text to be printed");
  ok_call(s, "screenshot", "{}");
  // Image (80, 80) to (293, 222) is device (112.4, 112.5) to (411.8,
  // 312.2): about 300x200 pixels of text, at the screen's real size,
  // starting two fifths of a screenshot pixel in. Before the phases of the
  // template's downscale were tried it was not found at the default
  // threshold; now it scores 0.999.
  json_ptr zoom = ok_call(s, "zoom", "{\"region\":" + region(80, 80, 293, 222) + "}");
  json_ptr r = ok_call(s, "screenshot_find", "{\"template\":\"" + image_data(*zoom) + "\"}");
  INFO(r->text);
  std::vector<found> m = matches(*r);
  REQUIRE_FALSE(m.empty());
  CHECK(std::abs(m[0].x - 80) <= 1);
  CHECK(std::abs(m[0].y - 80) <= 1);
  CHECK(m[0].score >= 0.9);
  CHECK(m[0].scale == Approx(1920.0 / 1366).margin(0.001));
  // Distinct lines: nothing else is the text.
  CHECK(m.size() == 1);
}
