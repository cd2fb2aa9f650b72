// screenshot_marks (the marks toolset) against a real Xvfb: a GTK window of
// known widgets (tests/x11/data/gtk_a11y.py, which prints their geometry as
// X has it) read through its accessibility tree, and an xterm read by OCR.
// Every known control must get a mark whose box holds the control's centre,
// and two maps of an unchanged screen must number alike.
//
// meson runs this binary under tools/lib/a11y-session.sh (as x11-a11y), so
// the GTK program and the server share a private accessibility bus.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/child_lines.h"
#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kMarksOn = {{"CU_TOOLSETS", "marks"}};

struct map_mark {
  int64_t n = 0;
  std::string role, name, source;
  int64_t x = 0, y = 0, w = 0, h = 0;
};

std::string str(simdjson::dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v) != simdjson::SUCCESS) return {};
  return std::string(v);
}

// The marks of a screenshot_marks answer, from its structuredContent.
std::vector<map_mark> marks_of(const json_line& r) {
  INFO(r.text.substr(0, 600));
  simdjson::dom::array a;
  REQUIRE(r.root["result"]["structuredContent"]["marks"].get(a) == simdjson::SUCCESS);
  std::vector<map_mark> out;
  for (simdjson::dom::element m : a) {
    map_mark k;
    REQUIRE(m["n"].get(k.n) == simdjson::SUCCESS);
    k.role = str(m, "role");
    k.name = str(m, "name");
    k.source = str(m, "source");
    simdjson::dom::array box;
    REQUIRE(m["box"].get(box) == simdjson::SUCCESS);
    std::vector<int64_t> v;
    for (simdjson::dom::element e : box) v.push_back(int64_t(e.get_int64().value()));
    REQUIRE(v.size() == 4);
    k.x = v[0];
    k.y = v[1];
    k.w = v[2];
    k.h = v[3];
    out.push_back(k);
  }
  return out;
}

bool holds(const map_mark& m, int64_t x, int64_t y) {
  return x >= m.x && x < m.x + m.w && y >= m.y && y < m.y + m.h;
}

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

bool tesseract_installed() {
  return access("/usr/lib/x86_64-linux-gnu/libtesseract.so.5", R_OK) == 0;
}

}  // namespace

TEST_CASE("screenshot_marks marks every known control of a GTK window where X has it, and "
          "numbers an unchanged screen alike") {
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
