// Acting by mark (the marks toolset) against a real Xvfb: the pointer tools
// given a mark of a screenshot_marks map of a GTK window of known widgets
// (tests/x11/data/gtk_a11y.py, which prints every click it gets), so where a
// click landed is what the application itself says. A mark whose place was
// drawn on since its map is found again (an accessibility element) or
// refused (an OCR line), never applied to what is there now.
//
// meson runs this binary under tools/lib/a11y-session.sh (as x11-marks), so
// the GTK program and the server share a private accessibility bus.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <xcb/xcb.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
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

// tests/x11/data/gtk_a11y.py at 60,40 on the display, once it is ready.
class gtk_app {
 public:
  explicit gtk_app(const std::string& display)
      : program_({"/usr/bin/python3",
                  std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_a11y.py", "60",
                  "40"},
                 display) {
    INFO(program_.log());
    REQUIRE(program_.read_until("ready"));
    REQUIRE(read_geometry().empty());
  }

  // A round trip: the event lines the application printed before it
  // answered (every click on its way has been printed), and its widgets'
  // places as X has them now.
  std::vector<std::string> sync() {
    program_.send("geometry");
    return read_geometry();
  }

  void move(int x, int y) { program_.send("move " + std::to_string(x) + " " + std::to_string(y)); }

  // A command line to the application (its docstring lists them).
  void send(const std::string& line) { program_.send(line); }

  // Reads the application's lines until this one.
  void wait_for(std::string_view line) {
    INFO(program_.log());
    REQUIRE(program_.read_until(line));
  }

  const std::map<std::string, area>& geometry() const { return geoms_; }

 private:
  std::vector<std::string> read_geometry() {
    std::vector<std::string> events;
    geoms_.clear();
    for (;;) {
      auto line = program_.read_line();
      INFO(program_.log());
      REQUIRE(line);
      if (*line == "geom-end") return events;
      if (line->rfind("geom ", 0) != 0) {
        events.push_back(*line);
        continue;
      }
      std::vector<int> v;
      size_t end = line->size();
      for (int i = 0; i < 4; ++i) {
        size_t sp = line->rfind(' ', end - 1);
        v.insert(v.begin(), std::stoi(line->substr(sp + 1, end - sp - 1)));
        end = sp;
      }
      geoms_[line->substr(5, end - 5)] = area{v[0], v[1], v[2], v[3]};
    }
  }

  child_lines program_;
  std::map<std::string, area> geoms_;
};

int count_of(const std::vector<std::string>& lines, std::string_view line) {
  int n = 0;
  for (const std::string& l : lines) n += l == line;
  return n;
}

bool has_prefix(const std::vector<std::string>& lines, std::string_view prefix) {
  for (const std::string& l : lines) {
    if (l.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Where the pointer is on the screen (QueryPointer on the root).
std::pair<int, int> pointer_on(const std::string& display) {
  xcb_connection_t* c = xcb_connect(display.c_str(), nullptr);
  REQUIRE(xcb_connection_has_error(c) == 0);
  xcb_window_t root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
  xcb_query_pointer_reply_t* r = xcb_query_pointer_reply(c, xcb_query_pointer(c, root), nullptr);
  REQUIRE(r != nullptr);
  std::pair<int, int> at{r->root_x, r->root_y};
  free(r);
  xcb_disconnect(c);
  return at;
}

// A map of the GTK window's controls, once the application is on the bus.
std::vector<map_mark> map_controls(server_process& s) {
  std::vector<map_mark> marks;
  wait_until(
      [&] {
        marks = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["a11y"]})"));
        for (const map_mark& m : marks) {
          if (m.name == "Apply" && m.source == "a11y") return true;
        }
        return false;
      },
      "the GTK window's controls to be marked");
  return marks;
}

std::string mark_args(int64_t n, std::string_view more = "") {
  return "{\"mark\":" + std::to_string(n) + std::string(more) + "}";
}

}  // namespace

TEST_CASE("a left_click by mark lands on that control, for every button mark of a GTK window") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks = map_controls(s);
  // In an order that keeps every control there: "Remove Apply" removes
  // Apply, so it comes last. Each click redraws its control, and some move
  // others (the expander pushes the slider down): the later marks are
  // checked against X DAMAGE's record and found again where needed.
  struct button {
    const char* role;
    const char* name;
    const char* event;
  };
  const button buttons[] = {
      {"push button", "Apply", "clicked Apply"},
      {"check box", "Enabled", "toggled Enabled 1"},
      {"toggle button", "Details", "expanded Details 1"},
      {"push button", "Add Extra", "added Extra"},
      {"push button", "Remove Apply", "removed Apply"},
  };
  int inside = 0, taken = 0;
  for (const button& b : buttons) {
    INFO(b.name);
    const int64_t n = mark_of(marks, b.role, b.name);
    const area g = app.geometry().at(b.name);
    json_ptr r = ok_call(s, "left_click", mark_args(n));
    INFO(text_of(*r));
    CHECK(contains(text_of(*r), std::string("mark ") + std::to_string(n) + " (" + b.role +
                                    " \"" + b.name + "\")"));
    const auto [px, py] = pointer_on(x.display());
    const bool in_box = px >= g.x && px < g.x + g.w && py >= g.y && py < g.y + g.h;
    CHECK(in_box);
    inside += in_box;
    const std::vector<std::string> events = app.sync();
    const bool took = count_of(events, b.event) == 1;
    taken += took;
    // GTK's expander reacts only to its title (the arrow and the label),
    // while its accessible box, and so its mark, is its whole row: its
    // centre is inside the element but not where it takes a click. The
    // other controls take a click anywhere in their box.
    if (std::string_view(b.role) != "toggle button") CHECK(took);
  }
  std::printf("left_click by mark: %d of %zu button marks clicked inside the element, %d taken "
              "by the control (its own log)\n",
              inside, std::size(buttons), taken);
  CHECK(inside == int(std::size(buttons)));
}

TEST_CASE("every pointer tool takes a mark: the pointer lands in its box, clicks count, the "
          "wheel and a drag reach the control") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks = map_controls(s);
  const int64_t apply = mark_of(marks, "push button", "Apply");
  const int64_t level = mark_of(marks, "slider", "Level");
  const area a = app.geometry().at("Apply");
  const area l = app.geometry().at("Level");

  // 1280x800 is sent as is: image pixels are the screen's.
  ok_call(s, "mouse_move", mark_args(apply));
  const auto [px, py] = pointer_on(x.display());
  CHECK(px >= a.x);
  CHECK(px < a.x + a.w);
  CHECK(py >= a.y);
  CHECK(py < a.y + a.h);

  ok_call(s, "double_click", mark_args(apply));
  CHECK(count_of(app.sync(), "clicked Apply") == 2);
  ok_call(s, "triple_click", mark_args(apply));
  CHECK(count_of(app.sync(), "clicked Apply") == 3);
  // A GTK button takes only the first button: the answers name the mark,
  // and nothing is clicked.
  for (const char* tool : {"right_click", "middle_click"}) {
    INFO(tool);
    json_ptr r = ok_call(s, tool, mark_args(apply));
    CHECK(contains(text_of(*r), "mark " + std::to_string(apply) + " (push button \"Apply\")"));
  }
  CHECK(count_of(app.sync(), "clicked Apply") == 0);

  // From the slider's centre (value 50) to near its right end.
  const std::string to_right =
      "[" + std::to_string(l.x + l.w - 4) + "," + std::to_string(l.y + l.h / 2) + "]";
  ok_call(s, "left_click_drag", "{\"start_mark\":" + std::to_string(level) +
                                    ",\"coordinate\":" + to_right + "}");
  std::vector<std::string> events = app.sync();
  INFO(joined(events));
  CHECK(has_prefix(events, "scale 9"));
  // From a quarter of its length to the slider's mark.
  const std::string from_left =
      "[" + std::to_string(l.x + l.w / 4) + "," + std::to_string(l.y + l.h / 2) + "]";
  json_ptr dragged = ok_call(s, "left_click_drag", "{\"start_coordinate\":" + from_left +
                                                       ",\"mark\":" + std::to_string(level) + "}");
  INFO(text_of(*dragged));
  events = app.sync();
  INFO(joined(events));
  CHECK(has_prefix(events, "scale "));
  ok_call(s, "scroll",
          mark_args(level, R"(,"scroll_direction":"down","scroll_amount":3)"));
  CHECK(has_prefix(app.sync(), "scale "));
}

TEST_CASE("a mark drawn on since its map: an accessibility element is clicked where it moved, an "
          "OCR line is refused with nothing pressed") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks = map_controls(s);
  const int64_t apply = mark_of(marks, "push button", "Apply");
  app.move(400, 300);
  REQUIRE(app.sync().empty());
  REQUIRE(app.geometry().at("Apply").x > 400);
  json_ptr r = ok_call(s, "left_click", mark_args(apply));
  INFO(text_of(*r));
  CHECK(contains(text_of(*r), "moved to"));
  CHECK(count_of(app.sync(), "clicked Apply") == 1);

  // "Remove Apply" takes Apply away and the buttons below move up at once,
  // though GTK redraws them a frame later: the next mark is checked on the
  // input actor after its pacing, when the redraw is there to see, so Add
  // Extra is found where it went (not the entry now under its old place).
  const std::vector<map_mark> again = map_controls(s);
  ok_call(s, "left_click", mark_args(mark_of(again, "push button", "Remove Apply")));
  const int64_t add = mark_of(again, "push button", "Add Extra");
  json_ptr moved = ok_call(s, "left_click", mark_args(add));
  INFO(text_of(*moved));
  CHECK(contains(text_of(*moved), "moved to"));
  std::vector<std::string> events = app.sync();
  CHECK(count_of(events, "removed Apply") == 1);
  CHECK(count_of(events, "added Extra") == 1);
  CHECK(count_of(events, "focus Name field") == 0);
  // Apply is gone: its mark is refused, and nothing is pressed.
  const std::string gone =
      error_text(s, "left_click", mark_args(mark_of(again, "push button", "Apply")));
  CHECK(contains(gone, "is stale: the screen changed there since look"));
  CHECK(contains(gone, "and the element is not found; take a new screenshot_marks"));
  CHECK(app.sync().empty());

  if (!tesseract_installed()) {
    WARN("tesseract is not installed: the OCR mark is not checked");
    return;
  }
  std::vector<map_mark> read;
  int64_t extra = 0;
  wait_until(
      [&] {
        read = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["ocr"]})"));
        for (const map_mark& m : read) {
          if (m.name == "Add Extra") extra = m.n;
        }
        return extra != 0;
      },
      "the button's label to be read");
  ok_call(s, "mouse_move", R"({"coordinate":[5,5]})");
  app.move(100, 100);
  REQUIRE(app.sync().empty());
  const std::string refused = error_text(s, "left_click", mark_args(extra));
  CHECK(contains(refused, "mark " + std::to_string(extra) + " (text \"Add Extra\") is stale"));
  CHECK(contains(refused, "take a new screenshot_marks"));
  CHECK(app.sync().empty());
  CHECK(pointer_on(x.display()) == std::make_pair(5, 5));
}

TEST_CASE("a computer_batch's steps take marks, and the marks are checked like a call's") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks = map_controls(s);
  const int64_t apply = mark_of(marks, "push button", "Apply");
  const int64_t enabled = mark_of(marks, "check box", "Enabled");
  ok_call(s, "computer_batch",
          R"({"actions":[{"name":"left_click","arguments":{"mark":)" + std::to_string(apply) +
              R"(}},{"name":"left_click","arguments":{"mark":)" + std::to_string(enabled) +
              "}}]}");
  const std::vector<std::string> events = app.sync();
  CHECK(count_of(events, "clicked Apply") == 1);
  CHECK(count_of(events, "toggled Enabled 1") == 1);
  // A mark past the map stops the batch there, before anything is pressed.
  json_ptr r = s.call_tool("computer_batch",
                           R"({"actions":[{"name":"left_click","arguments":{"mark":999}},)"
                           R"({"name":"left_click","arguments":{"mark":)" +
                               std::to_string(apply) + "}}]}");
  CHECK(contains(r->text, "has marks 1 to"));
  CHECK(app.sync().empty());
}

TEST_CASE("without the marks toolset, mark is an argument the pointer tools do not take") {
  xvfb x(640, 480);
  server_process s(x.display());
  ok_call(s, "screenshot");
  const std::string refused = error_text(s, "left_click", R"({"mark":1})");
  CHECK(contains(refused, "Invalid argument \"mark\": left_click takes"));
  CHECK(contains(refused, "needs the marks toolset"));
}

namespace {

// A plain X window of the test's own, override-redirect (no window manager
// runs here) and so stacked over everything, mapped over area: it names no
// process, and it counts the button presses X sends it.
class covering_window {
 public:
  covering_window(const std::string& display, area at) {
    c_ = xcb_connect(display.c_str(), nullptr);
    REQUIRE(xcb_connection_has_error(c_) == 0);
    xcb_screen_t* screen = xcb_setup_roots_iterator(xcb_get_setup(c_)).data;
    id_ = xcb_generate_id(c_);
    const uint32_t values[] = {screen->black_pixel, 1,
                               XCB_EVENT_MASK_STRUCTURE_NOTIFY | XCB_EVENT_MASK_BUTTON_PRESS};
    xcb_create_window(c_, XCB_COPY_FROM_PARENT, id_, screen->root, int16_t(at.x), int16_t(at.y),
                      uint16_t(at.w), uint16_t(at.h), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      screen->root_visual,
                      XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
    xcb_map_window(c_, id_);
    xcb_flush(c_);
    // Mapped once X says so: the stacking the press is checked against is
    // then the one the test means.
    for (;;) {
      xcb_generic_event_t* ev = xcb_wait_for_event(c_);
      REQUIRE(ev != nullptr);
      const uint8_t type = ev->response_type & 0x7f;
      free(ev);
      if (type == XCB_MAP_NOTIFY) break;
    }
  }
  ~covering_window() { xcb_disconnect(c_); }
  covering_window(const covering_window&) = delete;
  covering_window& operator=(const covering_window&) = delete;

  // The presses X sent the window until now: a round trip first, so every
  // event generated before it has arrived.
  int presses() {
    free(xcb_get_input_focus_reply(c_, xcb_get_input_focus(c_), nullptr));
    while (xcb_generic_event_t* ev = xcb_poll_for_event(c_)) {
      presses_ += (ev->response_type & 0x7f) == XCB_BUTTON_PRESS;
      free(ev);
    }
    return presses_;
  }

 private:
  xcb_connection_t* c_ = nullptr;
  xcb_window_t id_ = 0;
  int presses_ = 0;
};

}  // namespace

TEST_CASE("a left_click by mark on a button under another window presses it through its "
          "accessibility action, and the covering window gets no press; other tools refuse it") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks = map_controls(s);
  const int64_t apply = mark_of(marks, "push button", "Apply");
  const area g = app.geometry().at("Apply");
  ok_call(s, "mouse_move", R"({"coordinate":[5,5]})");
  covering_window over(x.display(), area{g.x + g.w / 2 - 40, g.y + g.h / 2 - 20, 80, 40});

  json_ptr r = ok_call(s, "left_click", mark_args(apply));
  INFO(text_of(*r));
  CHECK(contains(text_of(*r), "mark " + std::to_string(apply) +
                                  " (push button \"Apply\") is under another window: pressed "
                                  "through its accessibility action \"click\""));
  CHECK(count_of(app.sync(), "clicked Apply") == 1);
  CHECK(over.presses() == 0);
  CHECK(pointer_on(x.display()) == std::make_pair(5, 5));

  const std::string refused = error_text(s, "mouse_move", mark_args(apply));
  CHECK(contains(refused, "mark " + std::to_string(apply) +
                              " (push button \"Apply\") is under another window, so the pointer "
                              "cannot reach it: nothing was pressed"));
  const std::string right = error_text(s, "right_click", mark_args(apply));
  CHECK(contains(right, "is under another window, so the pointer cannot reach it"));
  CHECK(pointer_on(x.display()) == std::make_pair(5, 5));
  CHECK(app.sync().empty());
  CHECK(over.presses() == 0);
}

TEST_CASE("a screenshot after a map does not replace it: a left_click by mark lands on the map's "
          "element") {
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  const std::vector<map_mark> marks = map_controls(s);
  const int64_t apply = mark_of(marks, "push button", "Apply");
  const area g = app.geometry().at("Apply");
  // A look that is not a map, of a part of the screen (another session).
  ok_call(s, "screenshot");
  ok_call(s, "zoom", R"({"region":[0,0,200,150]})");
  json_ptr r = ok_call(s, "left_click", mark_args(apply));
  INFO(text_of(*r));
  CHECK(contains(text_of(*r), "mark " + std::to_string(apply) + " (push button \"Apply\")"));
  const auto [px, py] = pointer_on(x.display());
  CHECK((px >= g.x && px < g.x + g.w && py >= g.y && py < g.y + g.h));
  CHECK(count_of(app.sync(), "clicked Apply") == 1);
}

namespace {

// A client's title bar in root pixels: the top of its frame
// (_NET_FRAME_EXTENTS around its area); empty before the manager framed it.
area bar_of(x_observer& obs, xcb_window_t w) {
  const std::vector<uint32_t> e = obs.cardinals(w, "_NET_FRAME_EXTENTS");
  if (e.size() != 4) return {};
  const area a = x_area(obs, w);
  return area{a.x - int(e[0]), a.y - int(e[2]), a.w + int(e[0] + e[1]), int(e[2])};
}

bool inside(std::pair<int, int> p, const area& a) {
  return p.first >= a.x && p.first < a.x + a.w && p.second >= a.y && p.second < a.y + a.h;
}

}  // namespace

TEST_CASE("a title bar's mark follows its window: dragged by start_mark, moved by X, clicked by "
          "mark on its new middle; a closed window's bar mark is refused") {
  xvfb x(1280, 800);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  start_openbox(obs, wm, x.display());
  xterm_window term(x.display(), "cu-act-bar", 100, 100);
  std::optional<xterm_window> other(std::in_place, x.display(), "cu-act-gone", 700, 450);
  xcb_window_t w = XCB_NONE, gone_w = XCB_NONE;
  wait_until(
      [&] {
        w = obs.client_named("cu-act-bar");
        gone_w = obs.client_named("cu-act-gone");
        return w != XCB_NONE && gone_w != XCB_NONE && bar_of(obs, w).w > 0 &&
               bar_of(obs, gone_w).w > 0;
      },
      "openbox to frame both xterms");
  server_process s(x.display(), kMarksOn);
  std::vector<map_mark> marks;
  int64_t bar = 0, gone = 0;
  wait_until(
      [&] {
        marks = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["windows"]})"));
        bar = gone = 0;
        for (const map_mark& m : marks) {
          if (m.role == "title bar" && m.name == "cu-act-bar") bar = m.n;
          if (m.role == "title bar" && m.name == "cu-act-gone") gone = m.n;
        }
        return bar != 0 && gone != 0;
      },
      "both title bars to be marked");
  const area before = bar_of(obs, w);
  INFO("bar before " << before);

  // Dragged by its bar's mark, the window goes with the pointer.
  json_ptr dragged =
      ok_call(s, "left_click_drag", R"({"start_mark":)" + std::to_string(bar) +
                                        R"(,"coordinate":[600,300]})");
  INFO(text_of(*dragged));
  wait_until([&] { return bar_of(obs, w).x != before.x; }, "the window to follow the drag");
  const area dropped = bar_of(obs, w);
  CHECK(inside({600, 300}, dropped));

  // Moved again by X, behind the server's back: the mark is found on the
  // window's bar where it is now.
  const uint32_t to[] = {200, 500};
  xcb_configure_window(obs.connection(), w, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y, to);
  obs.sync();
  wait_until([&] { return bar_of(obs, w).y != dropped.y; }, "openbox to move the window");
  const area now = bar_of(obs, w);
  INFO("bar now " << now);
  json_ptr r = ok_call(s, "left_click", mark_args(bar));
  INFO(text_of(*r));
  CHECK(contains(text_of(*r), "mark " + std::to_string(bar) + " (title bar \"cu-act-bar\") moved to"));
  CHECK(inside(pointer_on(x.display()), now));

  // A window closed: its bar's mark is refused, and the pointer stays.
  other.reset();
  wait_until([&] { return !obs.viewable(gone_w); }, "the other xterm to close");
  const auto still = pointer_on(x.display());
  const std::string refused = error_text(s, "left_click", mark_args(gone));
  CHECK(contains(refused, "mark " + std::to_string(gone) + " (title bar \"cu-act-gone\") is stale"));
  CHECK(contains(refused, "its window shows no title bar now"));
  CHECK(pointer_on(x.display()) == still);
}

TEST_CASE("a redrawn mark with a twin of the same role and name is pressed where it was, not "
          "refused") {
  // Two buttons labelled alike: after the window draws itself again both
  // marks count as drawn on, and the one still exactly where the mark was
  // is the same element by all the tree says.
  REQUIRE(getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr);
  xvfb x(1280, 800);
  gtk_app app(x.display());
  server_process s(x.display(), kMarksOn);
  app.send("twins");
  REQUIRE(count_of(app.sync(), "added Twins") == 1);
  std::vector<map_mark> marks;
  std::vector<int64_t> twins;
  wait_until(
      [&] {
        marks = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["a11y"]})"));
        twins.clear();
        for (const map_mark& m : marks) {
          if (m.role == "push button" && m.name == "Twin") twins.push_back(m.n);
        }
        return twins.size() == 2;
      },
      "both twins to be marked");
  // Marks are numbered top to bottom: the second is the lower button.
  app.send("redraw");
  app.wait_for("redrawn");
  json_ptr r = ok_call(s, "left_click", mark_args(twins[1]));
  INFO(text_of(*r));
  CHECK(contains(text_of(*r), "was redrawn since look"));
  CHECK(contains(text_of(*r), "found again in its place"));
  const std::vector<std::string> events = app.sync();
  CHECK(count_of(events, "clicked Twin 2") == 1);
  CHECK(count_of(events, "clicked Twin 1") == 0);
}
