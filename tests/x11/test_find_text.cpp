// find_text (the vision toolset) against a real Xvfb and a real xterm: the
// phrase's box where the xterm shows it, with the screenshot's downscale in
// effect, in the window alone, not in a region without it, nothing for an
// absent phrase; and the message a machine without Tesseract gets.
// Tesseract must be installed (the test packages bring tesseract-ocr):
// without it the first case fails, naming what to install.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kVisionOn = {{"CU_TOOLSETS", "vision,windows"}};

struct text_box {
  std::string text;
  int x, y, w, h, cx, cy;
  int dx, dy, dw, dh;  // device
  double confidence;
};

std::vector<text_box> matches(const json_line& r) {
  std::vector<text_box> out;
  simdjson::dom::element sc = r.root["result"]["structuredContent"];
  std::string_view backend;
  REQUIRE(sc["backend"].get(backend) == simdjson::SUCCESS);
  CHECK(backend == "ocr");
  simdjson::dom::array a;
  REQUIRE(sc["matches"].get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element m : a) {
    simdjson::dom::array c;
    REQUIRE(m["center"].get(c) == simdjson::SUCCESS);
    std::string_view text;
    REQUIRE(m["text"].get(text) == simdjson::SUCCESS);
    double confidence = -1;
    REQUIRE(m["confidence"].get(confidence) == simdjson::SUCCESS);
    simdjson::dom::element d = m["device"];
    out.push_back(text_box{std::string(text), int(num(m, "x")), int(num(m, "y")),
                           int(num(m, "width")), int(num(m, "height")),
                           int(c.at(0).get_int64().value()), int(c.at(1).get_int64().value()),
                           int(num(d, "x")), int(num(d, "y")), int(num(d, "width")),
                           int(num(d, "height")), confidence});
  }
  return out;
}

std::string args_of(const std::string& text, const std::string& more = {}) {
  std::string s = "{\"text\":\"";
  s += text;
  s += "\"";
  if (!more.empty()) {
    s += ",";
    s += more;
  }
  s += "}";
  return s;
}

struct device_rect {
  int x, y, w, h;
};

// The xterm's place on the root, as list_windows says.
device_rect window_rect(server_process& s, const std::string& id) {
  json_ptr r = ok_call(s, "list_windows", "{\"app\":\"xterm\"}");
  simdjson::dom::array a;
  REQUIRE(r->root["result"]["structuredContent"]["windows"].get(a) == simdjson::SUCCESS);
  for (simdjson::dom::element w : a) {
    std::string_view wid;
    REQUIRE(w["id"].get(wid) == simdjson::SUCCESS);
    if (wid != id) continue;
    simdjson::dom::element d = w["device"];
    return device_rect{int(num(d, "x")), int(num(d, "y")), int(num(d, "width")),
                       int(num(d, "height"))};
  }
  FAIL("list_windows does not list " << id);
  return {};
}

std::string xterm_id(server_process& s) {
  json_ptr r = ok_call(s, "list_windows", "{\"app\":\"xterm\"}");
  simdjson::dom::array a;
  REQUIRE(r->root["result"]["structuredContent"]["windows"].get(a) == simdjson::SUCCESS);
  REQUIRE(a.size() == 1);
  std::string_view id;
  REQUIRE(a.at(0)["id"].get(id) == simdjson::SUCCESS);
  return std::string(id);
}

// An xterm at 300,200 showing two known lines, kept off its top-left corner
// (a blank line, an indent): near a corner between a light window and the
// black root, the polarity fix can invert a few pixels of the first
// characters (docs/vision.md, "find_text", limits).
const std::vector<std::string> kPhraseXterm = {
    "xterm", "-geometry", "60x8+300+200", "-e", "sh", "-c",
    "printf '\\n   HELLO WORLD 42\\n   second line Quux\\n'; sleep 1000"};

}  // namespace

TEST_CASE("find_text answers an xterm's phrase where the xterm shows it, in image pixels of a "
          "downscaled screen, in the window alone, and nowhere else") {
  // 1920x1080 is sent as 1366x768: image and device pixels differ.
  xvfb x(1920, 1080);
  background_program term(kPhraseXterm, x.display());
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // The xterm maps and draws in its own time: read until the phrase is
  // there (each call reads the screen afresh; bounded by wait_until).
  std::vector<text_box> m;
  wait_until(
      [&] {
        m = matches(*ok_call(s, "find_text", args_of("second line Quux")));
        return !m.empty();
      },
      "the xterm's text to be read");
  const std::string id = xterm_id(s);
  const device_rect w = window_rect(s, id);
  INFO("xterm at " << w.x << "," << w.y << " " << w.w << "x" << w.h);
  REQUIRE(m.size() == 1);
  const text_box& b = m[0];
  INFO("match " << b.text << " image " << b.x << "," << b.y << " " << b.w << "x" << b.h
                << " device " << b.dx << "," << b.dy << " " << b.dw << "x" << b.dh);
  CHECK(b.text == "second line Quux");
  CHECK(b.confidence > 0.5);
  CHECK(b.confidence <= 1.0);
  // Three lines of 13 px down (a blank one, HELLO, then this), three
  // characters of 6 px in; 16 characters wide.
  CHECK(b.dx >= w.x + 3 * 6 - 3);
  CHECK(b.dx <= w.x + 3 * 6 + 6);
  CHECK(b.dy >= w.y + 2 * 13 - 2);
  CHECK(b.dy <= w.y + 2 * 13 + 6);
  CHECK(std::abs(b.dw - 16 * 6) <= 8);
  CHECK(b.dh >= 7);
  CHECK(b.dh <= 15);
  // The image box is the device box scaled by 1366/1920.
  CHECK(std::abs(b.x - b.dx * 1366 / 1920) <= 1);
  CHECK(std::abs(b.y - b.dy * 768 / 1080) <= 1);
  CHECK(b.x != b.dx);
  CHECK(b.cx > b.x);
  CHECK(b.cx < b.x + b.w);
  CHECK(b.cy >= b.y);
  CHECK(b.cy < b.y + b.h);

  // Part of a word, and case folded.
  std::vector<text_box> part = matches(*ok_call(s, "find_text", args_of("hello wor")));
  REQUIRE(part.size() == 1);
  CHECK(part[0].text == "HELLO WORLD");
  CHECK(part[0].dy < b.dy);
  // ... but not with exact.
  CHECK(matches(*ok_call(s, "find_text", args_of("hello wor", "\"exact\":true"))).empty());
  CHECK(matches(*ok_call(s, "find_text", args_of("hello world", "\"exact\":true"))).size() == 1);

  // Not in a region without it; the region is what was searched.
  json_ptr none = ok_call(s, "find_text", args_of("second line Quux", "\"region\":[700,0,1366,768]"));
  CHECK(matches(*none).empty());
  simdjson::dom::element searched = none->root["result"]["structuredContent"]["searched"];
  CHECK(num(searched, "x") == 700);
  CHECK(num(searched, "width") == 666);
  // In a region with it.
  CHECK(matches(*ok_call(s, "find_text",
                         args_of("second line Quux", "\"region\":[150,100,600,300]")))
            .size() == 1);

  // An absent phrase: a successful answer with no match.
  CHECK(matches(*ok_call(s, "find_text", args_of("nowhere to be seen"))).empty());

  // In the window alone: its own pixels, the same place on the root, and
  // the answer names it.
  json_ptr in_window = ok_call(s, "find_text", args_of("second line Quux", "\"window\":\"" + id + "\""));
  std::vector<text_box> wm = matches(*in_window);
  REQUIRE(wm.size() == 1);
  CHECK(std::abs(wm[0].dx - b.dx) <= 2);
  CHECK(std::abs(wm[0].dy - b.dy) <= 2);
  // The window's session: image pixels are its own (60x8 cells fit in
  // 1366x768, so image = device relative to the window).
  CHECK(std::abs(wm[0].x - (b.dx - w.x)) <= 2);
  std::string_view named;
  REQUIRE(in_window->root["result"]["structuredContent"]["window"].get(named) ==
          simdjson::SUCCESS);
  CHECK(named == id);

  // A batch's steps that run only if text is on the screen: the phrase is,
  // the absent one is not (the step is skipped by its condition).
  json_ptr batch = ok_call(
      s, "computer_batch",
      R"({"actions":[{"name":"cursor_position","if":{"text_present":{"text":"second line Quux"}}},)"
      R"({"name":"cursor_position","if":{"text_present":{"text":"nowhere to be seen"}}}]})");
  INFO(batch->text.substr(0, 1200));
  simdjson::dom::element summary = batch->root["result"]["structuredContent"]["batch"];
  CHECK(num(summary, "succeeded") == 1);
  CHECK(num(summary, "skipped_by_condition") == 1);
  CHECK(contains(batch->text, R"(\"condition\":{\"text_present\":true})"));
  CHECK(contains(batch->text, R"(\"condition\":{\"text_present\":false})"));
  CHECK(contains(batch->text, "[step 0 \u00b7 cursor_position] ["));
  CHECK_FALSE(contains(batch->text, "[step 1 \u00b7 cursor_position]"));
}

// (No colon in this name: Catch 2 wraps a long name at its colon, and here
// it never ended.)
TEST_CASE("a zoom sent behind six find_text calls is answered before the second of them, as "
          "recognition holds no place screenshots wait for") {
  xvfb x(1920, 1080);
  background_program term(kPhraseXterm, x.display());
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // Tesseract loaded and the xterm drawn: each recognition below reads a
  // whole screen with text on it, hundreds of milliseconds each.
  wait_until([&] { return !matches(*ok_call(s, "find_text", args_of("second line Quux"))).empty(); },
             "the xterm's text to be read");

  // Recognitions run one at a time, so the second find_text answer comes
  // at least two recognitions after the calls. The zoom needs a grab of a
  // few milliseconds; it used to wait for a place in the pool until three
  // recognitions had ended.
  for (int i = 1; i <= 6; ++i) {
    s.send(tool_call("\"t" + std::to_string(i) + "\"", "find_text", args_of("nowhere to be seen")));
  }
  const int64_t sent = now_ms();
  s.send(tool_call("\"z\"", "zoom", "{\"region\":[0,0,200,200]}"));
  std::vector<std::string> order;
  int64_t zoom_ms = -1;
  while (order.size() < 7) {
    auto line = s.read_line(60000);
    REQUIRE(line);
    json_ptr j = parse_json(*line);
    const std::string id = id_of(*j);
    if (id.empty()) continue;  // A notification.
    INFO(j->text.substr(0, 400));
    CHECK_FALSE(is_error(*j));
    if (id == "\"z\"") zoom_ms = now_ms() - sent;
    order.push_back(id);
  }
  std::string said;
  for (const std::string& id : order) said += id + " ";
  fprintf(stderr, "answered in the order %s; the zoom after %lld ms\n", said.c_str(),
          (long long)zoom_ms);
  INFO("answered in the order " << said);
  const auto zoom_at = std::find(order.begin(), order.end(), "\"z\"") - order.begin();
  CHECK(zoom_at <= 1);
  // Every find_text answered once (two workers grab, so the first two may
  // reach the recognizer in either order).
  std::vector<std::string> texts;
  for (const std::string& id : order) {
    if (id != "\"z\"") texts.push_back(id);
  }
  std::sort(texts.begin(), texts.end());
  CHECK(texts == std::vector<std::string>{"\"t1\"", "\"t2\"", "\"t3\"", "\"t4\"", "\"t5\"",
                                          "\"t6\""});
}

TEST_CASE("find_text without Tesseract says what to install, and the server goes on") {
  xvfb x(640, 480);
  std::map<std::string, std::string> env = kVisionOn;
  env["CU_TESSERACT_LIBRARY"] = "/nonexistent/libtesseract.so.5";
  server_process s(x.display(), env);
  const std::string why = error_text(s, "find_text", args_of("anything"));
  CHECK(contains(why, "Tesseract"));
  CHECK(contains(why, "apt-get install tesseract-ocr"));
  // Asked again: the same answer, and other tools still work.
  CHECK(contains(error_text(s, "find_text", args_of("anything")), "apt-get install tesseract-ocr"));
  ok_call(s, "screenshot", "{}");
}
