// screenshot_marks (the marks toolset) against a real Xvfb: a GTK window of
// known widgets (tests/x11/data/gtk_a11y.py, which prints their geometry as
// X has it) read through its accessibility tree, and an xterm read by OCR.
// Every known control must get a mark whose box holds the control's centre,
// and two maps of an unchanged screen must number alike. Openbox-framed
// xterms give title bars, one partly under another window; a busy screen
// checks the image's size bound. xcalc's Xaw buttons, X windows of their
// own with labels too small for OCR, are marked from X's geometry.
//
// meson runs the cases tagged [a11y] under tools/lib/a11y-session.sh (as
// x11-a11y: the GTK program and the server share a private accessibility
// bus) as x11-marks-a11y, and the others with no bus as x11-marks, which
// is built without libatspi too.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <xcb/xcb.h>

#include <optional>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/child_lines.h"
#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/marks_map.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

// What a map says, as one comparable text: number, role, name, box, source.
std::string map_text(const std::vector<map_mark>& marks) {
  std::string out;
  for (const map_mark& m : marks) {
    out += std::to_string(m.n) + " " + m.role + " " + m.name + " " + std::to_string(m.x) + "," +
           std::to_string(m.y) + "," + std::to_string(m.w) + "," + std::to_string(m.h) + " " +
           m.source + "\n";
  }
  return out;
}

// A client's outer frame (its area grown by _NET_FRAME_EXTENTS), in root
// pixels.
area outer_frame(x_observer& obs, xcb_window_t w) {
  const area a = x_area(obs, w);
  const std::vector<uint32_t> e = obs.cardinals(w, "_NET_FRAME_EXTENTS");
  REQUIRE(e.size() == 4);
  return area{a.x - int(e[0]), a.y - int(e[2]), a.w + int(e[0] + e[1]), a.h + int(e[2] + e[3])};
}

const map_mark* title_bar_of(const std::vector<map_mark>& marks, const std::string& title) {
  for (const map_mark& m : marks) {
    if (m.role == "title bar" && m.name == title) return &m;
  }
  return nullptr;
}

// The windows under w that xcalc's buttons are: viewable, childless,
// button-sized (more than 20x15: the readout's indicators are smaller)
// and not the readout (wider than half the window), each in root pixels.
std::vector<area> button_windows(x_observer& obs, xcb_window_t w) {
  xcb_connection_t* c = obs.connection();
  const area whole = x_area(obs, w);
  std::vector<area> out;
  std::vector<xcb_window_t> level = {w};
  for (int depth = 0; depth < 4 && !level.empty(); ++depth) {
    std::vector<xcb_window_t> next;
    for (xcb_window_t parent : level) {
      auto* t = xcb_query_tree_reply(c, xcb_query_tree(c, parent), nullptr);
      if (t == nullptr) continue;
      xcb_window_t* k = xcb_query_tree_children(t);
      const std::vector<xcb_window_t> kids(k, k + xcb_query_tree_children_length(t));
      free(t);
      if (parent != w && kids.empty() && obs.viewable(parent)) {
        const area a = x_area(obs, parent);
        if (a.w > 20 && a.h > 15 && a.w * 2 < whole.w) out.push_back(a);
      }
      next.insert(next.end(), kids.begin(), kids.end());
    }
    level = std::move(next);
  }
  return out;
}

}  // namespace

TEST_CASE("screenshot_marks marks every known control of a GTK window where X has it, and "
          "numbers an unchanged screen alike", "[a11y]") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  // 1280x800 is sent as is: image pixels are the screen's.
  xvfb x(1280, 800);
  child_lines app({"/usr/bin/python3",
                   std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_a11y.py", "60",
                   "40"},
                  x.display());
  REQUIRE(app.read_until("ready"));
  std::map<std::string, std::array<int, 4>> geom;
  for (;;) {
    auto line = app.read_line();
    REQUIRE(line);
    if (*line == "geom-end") break;
    if (line->rfind("geom ", 0) != 0) continue;
    std::vector<std::string> words;
    size_t end = line->size();
    for (int i = 0; i < 4; ++i) {
      size_t sp = line->rfind(' ', end - 1);
      words.insert(words.begin(), line->substr(sp + 1, end - sp - 1));
      end = sp;
    }
    geom[line->substr(5, end - 5)] = {std::stoi(words[0]), std::stoi(words[1]),
                                      std::stoi(words[2]), std::stoi(words[3])};
  }
  REQUIRE(geom.count("Apply") == 1);
  server_process s(x.display(), kMarksOn);
  const std::string args = R"({"sources":["a11y","windows"]})";
  // The application registers on the bus in its own time: map until its
  // controls are there (each call reads the trees afresh).
  std::vector<map_mark> first;
  wait_until(
      [&] {
        first = marks_of(*ok_call(s, "screenshot_marks", args));
        for (const map_mark& m : first) {
          if (m.name == "Apply" && m.source == "a11y") return true;
        }
        return false;
      },
      "the GTK window's controls to be marked");
  INFO(map_text(first));
  for (const char* name : {"Apply", "Remove Apply", "Add Extra", "Name field", "Count",
                           "Enabled", "Details", "Level"}) {
    INFO(name);
    REQUIRE(geom.count(name) == 1);
    const auto& g = geom[name];
    const int cx = g[0] + g[2] / 2, cy = g[1] + g[3] / 2;
    bool marked = false;
    for (const map_mark& m : first) marked = marked || holds(m, cx, cy);
    CHECK(marked);
  }
  // The same screen, mapped again: the same numbers for the same things.
  const std::vector<map_mark> second = marks_of(*ok_call(s, "screenshot_marks", args));
  CHECK(map_text(second) == map_text(first));
  // The list a model reads: one line per mark.
  json_ptr r = ok_call(s, "screenshot_marks", args);
  const std::string list = text_of(*r, 1);
  CHECK(list.find("push button \"Apply\" [") != std::string::npos);
}

TEST_CASE("screenshot_marks marks an xterm's lines by OCR, each line's box holding its text") {
  if (!tesseract_installed()) {
    WARN("tesseract is not installed: the OCR source is not checked");
    return;
  }
  xvfb x(1280, 800);
  background_program term(
      {"xterm", "-geometry", "60x8+300+200", "-e", "sh", "-c",
       "printf '\\n   HELLO WORLD 42\\n   second line Quux\\n'; sleep 1000"},
      x.display());
  server_process s(x.display(), kMarksOn);
  const std::string args = R"({"sources":["ocr"]})";
  std::vector<map_mark> first;
  const map_mark* quux = nullptr;
  wait_until(
      [&] {
        first = marks_of(*ok_call(s, "screenshot_marks", args));
        quux = nullptr;
        for (const map_mark& m : first) {
          if (m.name.find("Quux") != std::string::npos) quux = &m;
        }
        return quux != nullptr;
      },
      "the xterm's text to be marked");
  INFO(map_text(first));
  // The line starts three characters (6 px) in and two lines (13 px) down
  // inside the xterm, whose inside starts near 300,200.
  CHECK(quux->source == "ocr");
  CHECK(quux->role == "text");
  CHECK(holds(*quux, 300 + 3 * 6 + 8 * 6, 200 + 2 * 13 + 6));
  const std::vector<map_mark> second = marks_of(*ok_call(s, "screenshot_marks", args));
  CHECK(map_text(second) == map_text(first));
}

TEST_CASE("a title bar whose middle another window covers keeps a mark on its uncovered piece") {
  xvfb x(1280, 800);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  start_openbox(obs, wm, x.display());
  // The lower xterm's bar runs from x 100 to about 590; the upper one,
  // mapped later and so stacked above, covers it from x 250 on.
  xterm_window low(x.display(), "cu-marks-low", 100, 100);
  xterm_window high(x.display(), "cu-marks-high", 250, 60);
  const xcb_window_t low_w = obs.client_named("cu-marks-low");
  const xcb_window_t high_w = obs.client_named("cu-marks-high");
  REQUIRE(low_w != XCB_NONE);
  REQUIRE(high_w != XCB_NONE);
  // The manager decorates, places and stacks in its own time: wait for its
  // stacking list to end with the upper window and for both frames' extents.
  wait_until(
      [&] {
        const auto stacking =
            obs.cardinals(obs.root(), "_NET_CLIENT_LIST_STACKING");
        return stacking.size() >= 2 && stacking.back() == high_w &&
               obs.cardinals(low_w, "_NET_FRAME_EXTENTS").size() == 4 &&
               obs.cardinals(high_w, "_NET_FRAME_EXTENTS").size() == 4 &&
               outer_frame(obs, high_w).x == 250 && outer_frame(obs, low_w).x == 100;
      },
      "openbox to frame and stack both xterms");
  const area low_frame = outer_frame(obs, low_w);
  const area high_frame = outer_frame(obs, high_w);
  INFO("low " << low_frame << " high " << high_frame);
  // The scene is the one meant: the upper frame covers the lower bar's
  // middle and the lower bar's rows.
  REQUIRE(high_frame.x < low_frame.x + low_frame.w / 2);
  REQUIRE(high_frame.y + high_frame.h > low_frame.y + 20);
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks =
      marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["windows"]})"));
  INFO(map_text(marks));
  const map_mark* high_bar = title_bar_of(marks, "cu-marks-high");
  const map_mark* low_bar = title_bar_of(marks, "cu-marks-low");
  REQUIRE(high_bar != nullptr);
  REQUIRE(low_bar != nullptr);
  CHECK(high_bar->x == high_frame.x);
  CHECK(high_bar->w == high_frame.w);
  // The lower bar's mark lies in its uncovered part, left of the upper
  // frame, and is all of that part.
  CHECK(low_bar->x == low_frame.x);
  CHECK(low_bar->x + low_bar->w == high_frame.x);
  CHECK(low_bar->y == low_frame.y);
}

TEST_CASE("a map passing CU_MAX_RESULT_BYTES as PNG is sent as JPEG within the bound") {
  // A 1024x768 screen (no downscale) with a noise square whose PNG is big.
  xvfb x(1024, 768);
  x_client painter(x.display());
  xcb_window_t w = painter.create_window(0, 0, 1024, 768, {200, 200, 200});
  painter.paint_noise(w, 256, 256, 11);
  painter.fill(w, 400, 100, 200, 200, {20, 90, 160});
  painter.sync();
  const std::string args = R"({"sources":["windows"]})";
  auto with = [](std::string k, std::string v) {
    std::map<std::string, std::string> env = kMarksOn;
    env[k] = v;
    return env;
  };
  auto mime = [](const json_line& r) {
    std::string_view v;
    REQUIRE(r.root["result"]["content"].at(0)["mimeType"].get(v) == simdjson::SUCCESS);
    return std::string(v);
  };
  size_t png_line = 0;
  {
    server_process s(x.display(), with("CU_IMAGE_FORMAT", "png"));
    json_ptr r = ok_call(s, "screenshot_marks", args);
    REQUIRE(mime(*r) == "image/png");
    png_line = r->text.size() + 1;  // The newline ends the line.
  }
  INFO("PNG line " << png_line << " bytes");
  REQUIRE(png_line > 65536);  // Above the smallest bound allowed.
  {
    // A bound the line fits exactly: PNG, the same line.
    server_process s(x.display(), with("CU_MAX_RESULT_BYTES", std::to_string(png_line)));
    json_ptr r = ok_call(s, "screenshot_marks", args);
    CHECK(mime(*r) == "image/png");
    CHECK(r->text.size() + 1 == png_line);
  }
  {
    // One byte less: JPEG, within the bound, the map's size unchanged.
    server_process s(x.display(), with("CU_MAX_RESULT_BYTES", std::to_string(png_line - 1)));
    json_ptr r = ok_call(s, "screenshot_marks", args);
    CHECK(mime(*r) == "image/jpeg");
    CHECK(r->text.size() + 1 <= png_line - 1);
    rgb_image jpeg = image_of(*r);
    CHECK(jpeg.width == 1024);
    CHECK(jpeg.height == 768);
  }
  {
    // JPEG asked for: JPEG whatever the size.
    server_process s(x.display(), with("CU_IMAGE_FORMAT", "jpeg"));
    CHECK(mime(*ok_call(s, "screenshot_marks", args)) == "image/jpeg");
  }
}

TEST_CASE("a map of one window marks only inside it, its own controls and no title bars",
          "[a11y]") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  start_openbox(obs, wm, x.display());
  child_lines app({"/usr/bin/python3",
                   std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_a11y.py", "60",
                   "40"},
                  x.display());
  REQUIRE(app.read_until("geom-end"));
  xterm_window term(x.display(), "cu-marks-other", 700, 500);
  const xcb_window_t gtk = obs.client_named("cu-a11y-test");
  REQUIRE(gtk != XCB_NONE);
  server_process s(x.display(), kMarksOn);
  // The whole screen first, until the GTK controls and both title bars are
  // there (the manager frames, the application registers, in their time).
  std::vector<map_mark> all;
  const map_mark* apply = nullptr;
  wait_until(
      [&] {
        all = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["a11y","windows"]})"));
        apply = nullptr;
        for (const map_mark& m : all) {
          if (m.name == "Apply" && m.source == "a11y") apply = &m;
        }
        return apply != nullptr && title_bar_of(all, "cu-a11y-test") != nullptr &&
               title_bar_of(all, "cu-marks-other") != nullptr;
      },
      "the GTK controls and both title bars to be marked");
  const area at = x_area(obs, gtk);
  INFO(map_text(all) << "window " << at);
  json_ptr r = ok_call(s, "screenshot_marks",
                       R"({"sources":["a11y","windows"],"window":")" + hex(gtk) + "\"}");
  const std::vector<map_mark> own = marks_of(*r);
  INFO(map_text(own));
  std::string_view named;
  REQUIRE(r->root["result"]["structuredContent"]["window"].get(named) == simdjson::SUCCESS);
  CHECK(named == hex(gtk));
  // Its own pixels: the image is the window's size (1280x800 is not scaled).
  rgb_image img = image_of(*r);
  CHECK(img.width == at.w);
  CHECK(img.height == at.h);
  REQUIRE_FALSE(own.empty());
  bool apply_seen = false;
  for (const map_mark& m : own) {
    CHECK(m.role != "title bar");
    CHECK(m.source == "a11y");
    CHECK(m.x >= 0);
    CHECK(m.y >= 0);
    CHECK(m.x + m.w / 2 < at.w);
    CHECK(m.y + m.h / 2 < at.h);
    // The same control as on the whole screen, moved by the window's place.
    if (m.name == "Apply") {
      apply_seen = true;
      CHECK(m.x == apply->x - at.x);
      CHECK(m.y == apply->y - at.y);
    }
  }
  CHECK(apply_seen);
}

TEST_CASE("the windows source marks xcalc's Xaw buttons, each an X window of its own, and no "
          "part of an xterm") {
  if (access("/usr/bin/xcalc", X_OK) != 0) {
    WARN("xcalc is not installed: X control windows are not checked");
    return;
  }
  xvfb x(1280, 800);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  start_openbox(obs, wm, x.display());
  background_program calc({"xcalc", "-geometry", "+300+100"}, x.display());
  xterm_window term(x.display(), "cu-marks-term", 700, 100);
  xcb_window_t calc_w = XCB_NONE;
  std::vector<area> buttons;
  // xcalc maps its buttons, and openbox frames it, in their own time.
  wait_until(
      [&] {
        calc_w = obs.client_named("Calculator");
        if (calc_w == XCB_NONE || obs.cardinals(calc_w, "_NET_FRAME_EXTENTS").size() != 4) {
          return false;
        }
        buttons = button_windows(obs, calc_w);
        return buttons.size() >= 40;
      },
      "xcalc's buttons to be mapped and its window framed");
  const xcb_window_t term_w = obs.client_named("cu-marks-term");
  REQUIRE(term_w != XCB_NONE);
  const area term_inside = x_area(obs, term_w);
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks =
      marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["ocr","windows"]})"));
  INFO(map_text(marks));
  // 1280x800 is sent as is: image pixels are root pixels.
  size_t inside = 0;
  for (const area& b : buttons) {
    bool marked = false;
    for (const map_mark& m : marks) marked = marked || holds(m, b.x + b.w / 2, b.y + b.h / 2);
    if (marked) ++inside;
  }
  const double rate = double(inside) / double(buttons.size());
  fprintf(stderr, "xcalc: %zu of %zu button windows have their centre in a mark (%.1f%%)\n",
          inside, buttons.size(), 100.0 * rate);
  CHECK(rate >= 0.8);
  // The xterm's text window is most of the xterm: no control mark in it.
  for (const map_mark& m : marks) {
    if (m.source != "windows" || m.role == "title bar") continue;
    INFO(m.n << " " << m.role << " " << m.x << "," << m.y);
    CHECK_FALSE((m.x + m.w / 2 >= term_inside.x && m.x + m.w / 2 < term_inside.x + term_inside.w &&
                 m.y + m.h / 2 >= term_inside.y && m.y + m.h / 2 < term_inside.y + term_inside.h));
  }
}
