// `since` (the marks toolset) against a real Xvfb: a screenshot that names
// an earlier look answers only what X DAMAGE saw change since it, as crops
// of the new capture with their place; nothing when nothing changed; the
// whole image when most changed. screenshot_marks with since keeps the
// numbers the earlier map gave and lists what appeared, moved and went
// away (an xterm read by OCR, its lines written through a FIFO). The
// coordinate session after a since look is the earlier one's, so a click
// on a crop's place lands there.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kMarksOn = {{"CU_TOOLSETS", "marks"}};
constexpr rgb kBackground{40, 44, 52};

simdjson::dom::element structured(const json_line& r) {
  simdjson::dom::element e;
  INFO(r.text.substr(0, 600));
  REQUIRE(r.root["result"]["structuredContent"].get(e) == simdjson::SUCCESS);
  return e;
}

bool flag(simdjson::dom::element e, const char* key) {
  bool v = false;
  INFO(key);
  REQUIRE(e[key].get(v) == simdjson::SUCCESS);
  return v;
}

struct box {
  int64_t x = 0, y = 0, w = 0, h = 0;
};

box box_of(simdjson::dom::element e) {
  std::vector<int64_t> v;
  simdjson::dom::array a;
  REQUIRE(e.get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element n : a) v.push_back(n.get_int64().value());
  REQUIRE(v.size() == 4);
  return box{v[0], v[1], v[2], v[3]};
}

// The crops' places of a since answer ("changed").
std::vector<box> changed_of(const json_line& r) {
  simdjson::dom::array a;
  REQUIRE(structured(r)["changed"].get(a) == simdjson::SUCCESS);
  std::vector<box> out;
  for (simdjson::dom::element c : a) out.push_back(box_of(c["box"]));
  return out;
}

// How many image blocks the answer has, and the i-th of them decoded.
size_t image_count(const json_line& r) {
  size_t n = 0;
  simdjson::dom::array content;
  REQUIRE(r.root["result"]["content"].get(content) == simdjson::SUCCESS);
  for (simdjson::dom::element b : content) {
    std::string_view type;
    if (b["type"].get(type) == simdjson::SUCCESS && type == "image") ++n;
  }
  return n;
}

rgb_image image_block(const json_line& r, size_t i) {
  size_t seen = 0;
  simdjson::dom::array content;
  REQUIRE(r.root["result"]["content"].get(content) == simdjson::SUCCESS);
  for (simdjson::dom::element b : content) {
    std::string_view type, data, mime;
    if (b["type"].get(type) != simdjson::SUCCESS || type != "image") continue;
    if (seen++ != i) continue;
    REQUIRE(b["mimeType"].get(mime) == simdjson::SUCCESS);
    REQUIRE(mime == "image/png");
    REQUIRE(b["data"].get(data) == simdjson::SUCCESS);
    return decode_png_base64(data);
  }
  FAIL("no image block " << i);
  return {};
}

std::string since_args(int64_t look) { return "{\"since\":" + std::to_string(look) + "}"; }

// The image pixel a device pixel of a 1920x1080 screen falls in (1366x768).
int64_t img_x(int64_t dx) { return dx * 1366 / 1920; }
int64_t img_y(int64_t dy) { return dy * 768 / 1080; }

// A 1920x1080 screen covered by one window of known blocks, and the server
// with the marks toolset.
struct scene {
  scene() : x(1920, 1080), painter(x.display()), s(x.display(), kMarksOn) {
    board = painter.create_window(0, 0, 1920, 1080, kBackground);
    painter.paint_blocks(board, 1920, 1080, 7);
    painter.sync();
  }
  xvfb x;
  x_client painter;
  server_process s;
  xcb_window_t board = 0;
};

}  // namespace

TEST_CASE("a screenshot since a look of an unchanged screen sends no image") {
  scene sc;
  json_ptr first = ok_call(sc.s, "screenshot");
  const int64_t look = num(structured(*first), "look");
  CHECK(image_count(*first) == 1);
  json_ptr again = ok_call(sc.s, "screenshot", since_args(look));
  CHECK(image_count(*again) == 0);
  const int64_t next = num(structured(*again), "look");
  CHECK(next > look);
  CHECK(text_of(*again) == "look " + std::to_string(next) + ": nothing changed since look " +
                               std::to_string(look));
  CHECK(num(structured(*again), "since") == look);
  CHECK_FALSE(flag(structured(*again), "full"));
  CHECK(changed_of(*again).empty());
}

TEST_CASE("a small repaint since a look is one crop holding it, with the pixels a full "
          "screenshot shows there") {
  scene sc;
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  // 60x30 device pixels at (800, 400).
  sc.painter.fill(sc.board, 800, 400, 60, 30, rgb{250, 120, 10});
  sc.painter.sync();
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  INFO(r->text.substr(0, 800));
  REQUIRE(image_count(*r) == 1);
  CHECK_FALSE(flag(structured(*r), "full"));
  const std::vector<box> crops = changed_of(*r);
  REQUIRE(crops.size() == 1);
  const box c = crops[0];
  CHECK(c.x <= img_x(800));
  CHECK(c.y <= img_y(400));
  CHECK(c.x + c.w >= img_x(860));
  CHECK(c.y + c.h >= img_y(430));
  // Padded by a few pixels, not the whole screen.
  CHECK(c.w < 60);
  CHECK(c.h < 40);
  CHECK(text_of(*r).find("[" + std::to_string(c.x) + "," + std::to_string(c.y) + "," +
                         std::to_string(c.w) + "," + std::to_string(c.h) + "]") !=
        std::string::npos);
  CHECK(text_of(*r).find("the rest is as in look " + std::to_string(look)) != std::string::npos);
  const rgb_image crop = image_block(*r, 0);
  REQUIRE(crop.width == c.w);
  REQUIRE(crop.height == c.h);
  const rgb_image full = image_of(*ok_call(sc.s, "screenshot"));
  REQUIRE(full.width == 1366);
  int differing = 0;
  for (int y = 0; y < crop.height; ++y) {
    for (int x = 0; x < crop.width; ++x) {
      if (crop.at(x, y) != full.at(int(c.x) + x, int(c.y) + y)) ++differing;
    }
  }
  CHECK(differing == 0);
  CHECK(crop.at(int(img_x(830) - c.x), int(img_y(415) - c.y)) == rgb{250, 120, 10});
}

TEST_CASE("when most of the screen changed since a look, the whole image is sent") {
  scene sc;
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  sc.painter.fill(sc.board, 0, 0, 1800, 1000, rgb{200, 200, 230});
  sc.painter.sync();
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  REQUIRE(image_count(*r) == 1);
  CHECK(flag(structured(*r), "full"));
  CHECK(image_of(*r).width == 1366);
  std::string why;
  for (size_t i = 0; i < 3 && why.empty(); ++i) {
    const std::string t = text_of(*r, i);
    if (t.find("the whole image") != std::string::npos) why = t;
  }
  CHECK(why.find("most of the image changed since look " + std::to_string(look)) !=
        std::string::npos);
}

TEST_CASE("since naming a look never made or no longer kept is refused, naming the kept ones") {
  scene sc;
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  const std::string e = error_text(sc.s, "screenshot", since_args(look + 100));
  CHECK(e.find("look " + std::to_string(look + 100) + " is not kept") != std::string::npos);
  CHECK(e.find("the kept looks are " + std::to_string(look)) != std::string::npos);
  // Nothing else changed: the look named still answers.
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  CHECK(image_count(*r) == 0);
  // 17 more looks: the first is no longer kept.
  for (int i = 0; i < 17; ++i) ok_call(sc.s, "screenshot");
  CHECK(error_text(sc.s, "screenshot", since_args(look)).find("is not kept") != std::string::npos);
}

TEST_CASE("without the marks toolset screenshot takes no since and names no look") {
  xvfb x(1920, 1080);
  server_process s(x.display());
  json_ptr r = ok_call(s, "screenshot");
  CHECK(structured(*r)["look"].error() == simdjson::NO_SUCH_FIELD);
  CHECK(error_text(s, "screenshot", since_args(1)).find("Invalid argument \"since\"") !=
        std::string::npos);
}

TEST_CASE("after a since look a click on a crop's place lands on the screen's pixel there") {
  scene sc;
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  sc.painter.fill(sc.board, 1200, 700, 40, 40, rgb{10, 200, 90});
  sc.painter.sync();
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  const std::vector<box> crops = changed_of(*r);
  REQUIRE(crops.size() == 1);
  const int cx = int(crops[0].x + crops[0].w / 2), cy = int(crops[0].y + crops[0].h / 2);
  ok_call(sc.s, "mouse_move", "{\"coordinate\":" + coord(cx, cy) + "}");
  xcb_query_pointer_reply_t* p = xcb_query_pointer_reply(
      sc.painter.connection(),
      xcb_query_pointer(sc.painter.connection(), sc.painter.screen()->root), nullptr);
  REQUIRE(p != nullptr);
  CHECK(p->root_x == device_x(cx));
  CHECK(p->root_y == device_y(cy));
  free(p);
  // That pixel is the repainted square's.
  CHECK(device_x(cx) >= 1200);
  CHECK(device_x(cx) < 1240);
  CHECK(device_y(cy) >= 700);
  CHECK(device_y(cy) < 740);
}

namespace {

struct line_mark {
  int64_t n = 0;
  std::string name;
};

std::vector<line_mark> marks_of(const json_line& r) {
  std::vector<line_mark> out;
  simdjson::dom::array a;
  REQUIRE(structured(r)["marks"].get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element m : a) {
    std::string_view name;
    REQUIRE(m["name"].get(name) == simdjson::SUCCESS);
    out.push_back(line_mark{num(m, "n"), std::string(name)});
  }
  return out;
}

std::vector<int64_t> numbers(const json_line& r, const char* key) {
  std::vector<int64_t> out;
  simdjson::dom::array a;
  REQUIRE(structured(r)[key].get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element n : a) out.push_back(n.get_int64().value());
  return out;
}

const line_mark* named(const std::vector<line_mark>& marks, std::string_view part) {
  for (const line_mark& m : marks) {
    if (m.name.find(part) != std::string::npos) return &m;
  }
  return nullptr;
}

// Writes text to the terminal through its FIFO.
void write_fifo(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, text.data(), text.size()) == ssize_t(text.size()));
  close(fd);
}

}  // namespace

TEST_CASE("screenshot_marks since keeps the numbers of the lines seen, numbers a new line "
          "after them, and says which line went away") {
  if (access("/usr/lib/x86_64-linux-gnu/libtesseract.so.5", R_OK) != 0) {
    WARN("tesseract is not installed: the marks diff is not checked");
    return;
  }
  xvfb x(1280, 800);
  const std::string fifo = "/tmp/cu-marks-since-" + std::to_string(getpid());
  unlink(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  background_program term(
      {"xterm", "-geometry", "60x8+300+200", "-e", "sh", "-c",
       "printf '\\n   HELLO WORLD 42\\n   second line Quux\\n'; while :; do cat " + fifo +
           "; done"},
      x.display());
  server_process s(x.display(), kMarksOn);
  const std::string ocr = R"("sources":["ocr"])";
  json_ptr a;
  wait_until(
      [&] {
        a = ok_call(s, "screenshot_marks", "{" + ocr + "}");
        const auto m = marks_of(*a);
        return named(m, "Quux") != nullptr && named(m, "HELLO") != nullptr;
      },
      "the xterm's lines to be marked");
  const std::vector<line_mark> first = marks_of(*a);
  const int64_t look_a = num(structured(*a), "look");
  int64_t highest = 0;
  for (const line_mark& m : first) highest = std::max(highest, m.n);
  const int64_t hello = named(first, "HELLO")->n, quux = named(first, "Quux")->n;

  write_fifo(fifo, "   Zebra third 77\n");
  json_ptr b;
  wait_until(
      [&] {
        b = ok_call(s, "screenshot_marks", "{" + ocr + ",\"since\":" + std::to_string(look_a) + "}");
        return named(marks_of(*b), "Zebra") != nullptr;
      },
      "the new line to be marked");
  INFO(text_of(*b));
  CHECK_FALSE(flag(structured(*b), "full"));
  CHECK_FALSE(changed_of(*b).empty());
  const std::vector<line_mark> listed_b = marks_of(*b);
  const line_mark* zebra = named(listed_b, "Zebra");
  CHECK(zebra->n == highest + 1);
  CHECK(numbers(*b, "appeared") == std::vector<int64_t>{zebra->n});
  const std::vector<int64_t> gone_b = numbers(*b, "gone");
  CHECK(std::find(gone_b.begin(), gone_b.end(), hello) == gone_b.end());
  CHECK(std::find(gone_b.begin(), gone_b.end(), quux) == gone_b.end());
  // Only what changed is listed: not the lines seen before.
  CHECK(named(listed_b, "Quux") == nullptr);
  const int64_t look_b = num(structured(*b), "look");

  // Line 2 (HELLO) cleared, the cursor put back.
  write_fifo(fifo, "\0337\033[2;1H\033[2K\0338");
  json_ptr c;
  wait_until(
      [&] {
        c = ok_call(s, "screenshot_marks", "{" + ocr + ",\"since\":" + std::to_string(look_b) + "}");
        return !numbers(*c, "gone").empty();
      },
      "the cleared line to be gone");
  INFO(text_of(*c));
  CHECK(numbers(*c, "gone") == std::vector<int64_t>{hello});
  CHECK(numbers(*c, "appeared").empty());
  CHECK(text_of(*c).find("gone: " + std::to_string(hello)) != std::string::npos);
  unlink(fifo.c_str());
}

namespace {

// The area of the crops of a since answer, in image pixels.
int64_t crops_area(const std::vector<box>& crops) {
  int64_t a = 0;
  for (const box& c : crops) a += c.w * c.h;
  return a;
}

bool holds(const box& c, int64_t x, int64_t y, int64_t w, int64_t h) {
  return c.x <= img_x(x) && c.y <= img_y(y) && c.x + c.w >= img_x(x + w) &&
         c.y + c.h >= img_y(y + h);
}

// Redraws device area [x, y, w, h] of win in one CopyArea from a pixmap
// holding what the window shows there, except for the squares filled with
// colour: as GTK paints a frame's whole invalid region's bounding box,
// X DAMAGE reports the one big rectangle though few pixels changed.
void redraw_through_pixmap(x_client& painter, xcb_window_t win, int x, int y, int w, int h,
                           const std::vector<std::array<int, 4>>& squares, rgb colour) {
  xcb_connection_t* c = painter.connection();
  const xcb_pixmap_t pixmap = xcb_generate_id(c);
  xcb_create_pixmap(c, painter.screen()->root_depth, pixmap, win, uint16_t(w), uint16_t(h));
  const uint32_t pixel = (uint32_t(colour[0]) << 16) | (uint32_t(colour[1]) << 8) | colour[2];
  const xcb_gcontext_t gc = xcb_generate_id(c);
  const uint32_t values[] = {pixel, 0};
  xcb_create_gc(c, gc, win, XCB_GC_FOREGROUND | XCB_GC_GRAPHICS_EXPOSURES, values);
  xcb_copy_area(c, win, pixmap, gc, int16_t(x), int16_t(y), 0, 0, uint16_t(w), uint16_t(h));
  for (const auto& s : squares) {
    const xcb_rectangle_t r{int16_t(s[0] - x), int16_t(s[1] - y), uint16_t(s[2]), uint16_t(s[3])};
    xcb_poly_fill_rectangle(c, pixmap, gc, 1, &r);
  }
  xcb_copy_area(c, pixmap, win, gc, 0, 0, int16_t(x), int16_t(y), uint16_t(w), uint16_t(h));
  xcb_free_gc(c, gc);
  xcb_free_pixmap(c, pixmap);
  painter.sync();
}

}  // namespace

TEST_CASE("a screenshot since a look of a place redrawn with the same pixels says nothing "
          "changed") {
  scene sc;
  sc.painter.fill(sc.board, 800, 400, 60, 30, rgb{250, 120, 10});
  sc.painter.sync();
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  sc.painter.fill(sc.board, 800, 400, 60, 30, rgb{250, 120, 10});
  sc.painter.sync();
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  INFO(r->text.substr(0, 800));
  CHECK(image_count(*r) == 0);
  CHECK(changed_of(*r).empty());
  CHECK(flag(structured(*r), "unchanged"));
  // The look just made keeps the same pixels: a since of it says the same.
  const int64_t next = num(structured(*r), "look");
  sc.painter.fill(sc.board, 800, 400, 60, 30, rgb{250, 120, 10});
  sc.painter.sync();
  CHECK(image_count(*ok_call(sc.s, "screenshot", since_args(next))) == 0);
}

TEST_CASE("a screenshot_marks since a look of a place redrawn with the same pixels crops "
          "nothing") {
  scene sc;
  const std::string windows = R"({"sources":["windows"])";
  const int64_t look =
      num(structured(*ok_call(sc.s, "screenshot_marks", windows + "}")), "look");
  sc.painter.fill(sc.board, 300, 300, 200, 100, rgb{0, 0, 0});
  sc.painter.fill(sc.board, 300, 300, 200, 100, rgb{0, 0, 0});
  sc.painter.sync();
  // The first fill changed pixels: one crop; a look since this one after
  // the same fill again sees none.
  json_ptr changed = ok_call(sc.s, "screenshot_marks",
                             windows + ",\"since\":" + std::to_string(look) + "}");
  CHECK(changed_of(*changed).size() == 1);
  const int64_t next = num(structured(*changed), "look");
  sc.painter.fill(sc.board, 300, 300, 200, 100, rgb{0, 0, 0});
  sc.painter.sync();
  json_ptr r = ok_call(sc.s, "screenshot_marks",
                       windows + ",\"since\":" + std::to_string(next) + "}");
  INFO(r->text.substr(0, 800));
  CHECK(image_count(*r) == 0);
  CHECK(changed_of(*r).empty());
  CHECK_FALSE(flag(structured(*r), "full"));
}

TEST_CASE("one big redraw whose pixels differ in two small squares far apart is two small "
          "crops, each holding its square") {
  scene sc;
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  // 1200x700 device pixels redrawn at (300, 200): about 40% of the image,
  // one crop from the damage record alone.
  redraw_through_pixmap(sc.painter, sc.board, 300, 200, 1200, 700,
                        {{320, 220, 20, 20}, {1460, 860, 20, 20}}, rgb{255, 0, 255});
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  INFO(r->text.substr(0, 800));
  CHECK_FALSE(flag(structured(*r), "full"));
  const std::vector<box> crops = changed_of(*r);
  REQUIRE(crops.size() == 2);
  CHECK(image_count(*r) == 2);
  CHECK(holds(crops[0], 320, 220, 20, 20));
  CHECK(holds(crops[1], 1460, 860, 20, 20));
  // Each about its square (14x14 image pixels) and the tiles it falls in.
  for (const box& c : crops) {
    CHECK(c.w <= 30);
    CHECK(c.h <= 30);
  }
  CHECK(crops_area(crops) * 100 < img_x(1200) * img_y(700));
  const rgb_image crop = image_block(*r, 1);
  CHECK(crop.at(int(img_x(1470) - crops[1].x), int(img_y(870) - crops[1].y)) ==
        rgb{255, 0, 255});
}

TEST_CASE("a since naming a look older than the newest two, whose pixels are dropped, answers "
          "from the damage record alone") {
  scene sc;
  const int64_t look = num(structured(*ok_call(sc.s, "screenshot")), "look");
  sc.painter.fill(sc.board, 800, 400, 60, 30, rgb{250, 120, 10});
  sc.painter.sync();
  ok_call(sc.s, "screenshot");
  ok_call(sc.s, "screenshot");
  json_ptr r = ok_call(sc.s, "screenshot", since_args(look));
  INFO(r->text.substr(0, 800));
  const std::vector<box> crops = changed_of(*r);
  REQUIRE(crops.size() == 1);
  CHECK(holds(crops[0], 800, 400, 60, 30));
  const rgb_image crop = image_block(*r, 0);
  CHECK(crop.at(int(img_x(830) - crops[0].x), int(img_y(415) - crops[0].y)) ==
        rgb{250, 120, 10});
  // Drawn with the same pixels again: the damage record alone cannot tell,
  // so the place is a crop though nothing looks different.
  sc.painter.fill(sc.board, 800, 400, 60, 30, rgb{250, 120, 10});
  sc.painter.sync();
  const int64_t old = num(structured(*r), "look");
  ok_call(sc.s, "screenshot");
  ok_call(sc.s, "screenshot");
  CHECK(changed_of(*ok_call(sc.s, "screenshot", since_args(old))).size() == 1);
}

TEST_CASE("a map since a look has a crop over every mark that appeared, even a line drawn while "
          "the map was being taken") {
  if (access("/usr/lib/x86_64-linux-gnu/libtesseract.so.5", R_OK) != 0) {
    WARN("tesseract is not installed: the marks diff is not checked");
    return;
  }
  xvfb x(1280, 800);
  const std::string fifo = "/tmp/cu-marks-race-" + std::to_string(getpid());
  unlink(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  background_program term({"xterm", "-geometry", "60x22+300+100", "-e", "sh", "-c",
                           "printf '\\n   READY 0\\n'; while :; do cat " + fifo + "; done"},
                          x.display());
  server_process s(x.display(), kMarksOn);
  json_ptr a;
  wait_until(
      [&] {
        a = ok_call(s, "screenshot_marks", R"({"sources":["ocr"]})");
        return named(marks_of(*a), "READY") != nullptr;
      },
      "the xterm's first line to be marked");
  int64_t look = num(structured(*a), "look");
  // Each line is written right after the map is asked for, so the terminal
  // draws it about when the server takes the map: before its record of
  // changes is brought up to date, between that and the grab, or after.
  // Whenever the map reads the line, a crop must show it.
  const char* words[] = {"Apple", "Banana", "Cherry", "Damson", "Elder", "Fig", "Grape",
                         "Hazel", "Lemon", "Mango", "Olive", "Peach", "Quince", "Rowan"};
  int appeared = 0;
  for (size_t i = 0; i < std::size(words); ++i) {
    const std::string id = "\"race-" + std::to_string(i) + "\"";
    s.send(R"({"jsonrpc":"2.0","id":)" + id +
           R"(,"method":"tools/call","params":{"name":"screenshot_marks","arguments":)"
           R"({"sources":["ocr"],"since":)" +
           std::to_string(look) + "}}}");
    write_fifo(fifo, "   " + std::string(words[i]) + " " + std::to_string(10 + i) + "\n");
    json_ptr r = s.read_response(id);
    REQUIRE(r);
    INFO(text_of(*r));
    look = num(structured(*r), "look");
    if (flag(structured(*r), "full")) continue;
    const std::vector<box> crops = changed_of(*r);
    simdjson::dom::array listed;
    REQUIRE(structured(*r)["marks"].get(listed) == simdjson::SUCCESS);
    // With crops, the marks listed are those that appeared or moved.
    for (simdjson::dom::element m : listed) {
      const box b = box_of(m["box"]);
      const int64_t cx = b.x + b.w / 2, cy = b.y + b.h / 2;
      bool shown = false;
      for (const box& c : crops) {
        shown = shown || (cx >= c.x && cx < c.x + c.w && cy >= c.y && cy < c.y + c.h);
      }
      CHECK(shown);
      ++appeared;
    }
  }
  std::printf("a map since a look: %d marks listed, each checked against the crops\n", appeared);
  CHECK(appeared > 0);
  unlink(fifo.c_str());
}
