// The grants in the a11y toolset and in what reads the accessibility tree
// for other tools (docs/grants.md, "Toolsets"), against a real Xvfb and a
// real accessible desktop, with and without a window manager (openbox):
// two copies of tests/x11/data/gtk_a11y.py, one called "granted" and one
// called "other" (CU_A11Y_APP_NAME: their AT-SPI names, WM_CLASS instances
// and titles differ), and a server with CU_GRANTS=enforce and every toolset
// that was granted "granted". What happened is read from outside the
// server: each program prints every click, toggle and text change it gets,
// and its "geometry" answer comes after every event that was on its way, so
// "nothing happened" is a round trip to it, never a wait.
//
// meson runs this binary under tools/lib/a11y-session.sh, as x11-a11y: the
// programs and the server share a private accessibility bus, which every
// case uses in turn (a program of an earlier case may be listed for a
// moment after it was killed, so applications are asked for by pid).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <xcb/xcb.h>

#include <algorithm>
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

// tests/x11/data/gtk_a11y.py called name, its window "cu-" name at x,y,
// once it has said it is ready.
class named_gtk {
 public:
  named_gtk(const std::string& display, const std::string& name, int x, int y)
      : program_({"/usr/bin/python3",
                  std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_a11y.py",
                  std::to_string(x), std::to_string(y)},
                 display, {{"CU_A11Y_APP_NAME", name}}) {
    INFO(program_.log());
    REQUIRE(program_.read_until("ready"));
    REQUIRE(read_geometry().empty());
  }

  pid_t pid() const { return program_.pid(); }

  // A round trip: the event lines it printed before it answered, and its
  // widgets' places as X has them now.
  std::vector<std::string> sync() {
    program_.send("geometry");
    return read_geometry();
  }

  // A command line to the program (its docstring lists them), and the
  // line it answers with.
  void ask(const std::string& line, std::string_view answer) {
    program_.send(line);
    INFO(program_.log());
    REQUIRE(program_.read_until(answer));
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
      // "geom NAME X Y W H": the name may hold spaces, the numbers do not.
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

bool has(const std::vector<std::string>& lines, std::string_view line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::string str(simdjson::dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v) != simdjson::SUCCESS) return {};
  return std::string(v);
}

// "{"app":"PID", ...more}"
std::string app_args(pid_t pid, std::string_view more = {}) {
  std::string s = "{\"app\":\"" + std::to_string(pid) + "\"";
  if (!more.empty()) s.append(",").append(more);
  return s + "}";
}

struct listed_app {
  std::string name;
  std::vector<std::string> windows;
  std::optional<bool> granted;
};

// list_apps' entry for pid, or nothing while it does not list it.
std::optional<listed_app> listed(server_process& s, pid_t pid) {
  json_ptr r = ok_call(s, "list_apps");
  simdjson::dom::array apps;
  REQUIRE(r->root["result"]["structuredContent"]["apps"].get(apps) == simdjson::SUCCESS);
  for (simdjson::dom::element a : apps) {
    if (num(a, "pid") != pid) continue;
    listed_app l;
    l.name = str(a, "name");
    simdjson::dom::array windows;
    REQUIRE(a["windows"].get(windows) == simdjson::SUCCESS);
    for (simdjson::dom::element w : windows) l.windows.emplace_back(std::string_view(w));
    bool g = false;
    if (a["granted"].get(g) == simdjson::SUCCESS) l.granted = g;
    return l;
  }
  return std::nullopt;
}

bool session_bus_set() {
  const char* bus = getenv("DBUS_SESSION_BUS_ADDRESS");
  INFO("run this test under tools/lib/a11y-session.sh (meson test does)");
  REQUIRE(bus != nullptr);
  return true;
}

// The desktop of one case: the screen, optionally openbox, the two GTK
// programs side by side and the enforcing server with every toolset,
// granted "granted", once it lists both programs' applications.
struct desk {
  explicit desk(bool with_wm, std::map<std::string, std::string> env = {})
      : bus(session_bus_set()), x(1280, 800), obs(x.display()) {
    if (with_wm) start_openbox(obs, wm, x.display());
    granted.emplace(x.display(), "granted", 40, 40);
    other.emplace(x.display(), "other", 700, 40);
    env["CU_GRANTS"] = "enforce";
    env["CU_TOOLSETS"] = "all";
    s.emplace(x.display(), env);
    ok_call(*s, "request_access", R"({"apps":["granted"],"reason":"the test"})");
    // Registering on the bus is each program's business, and it says
    // nothing when it is done.
    wait_until([&] { return listed(*s, granted->pid()) && listed(*s, other->pid()); },
               "both programs on the accessibility bus");
  }
  bool bus;
  xvfb x;
  x_observer obs;
  std::optional<background_program> wm;
  std::optional<named_gtk> granted, other;
  std::optional<server_process> s;
};

void check_refused(const std::string& text) {
  INFO(text);
  CHECK(contains(text, "was refused"));
  CHECK(contains(text, "\"other\""));
  CHECK(contains(text, "request_access with apps [\"other\"]"));
}

void a11y_tools_keep_to_the_grant(bool with_wm) {
  desk d(with_wm);
  server_process& s = *d.s;

  // list_apps lists both; the one not granted without its windows' titles.
  const listed_app g = *listed(s, d.granted->pid()), o = *listed(s, d.other->pid());
  CHECK(g.name == "granted");
  CHECK(g.granted == std::optional<bool>(true));
  CHECK(g.windows == std::vector<std::string>{"cu-granted"});
  CHECK(o.name == "other");
  CHECK(o.granted == std::optional<bool>(false));
  CHECK(o.windows.empty());

  // drag's points need a coordinate session.
  ok_call(s, "screenshot");
  const xcb_window_t focus_before = d.obs.input_focus();
  const pid_t other = d.other->pid();
  // Index 3 is the button "Apply" (the application, its frame, the box,
  // then the button), the entry 6; no refusal gets as far as reading it.
  for (auto [tool, args] : std::initializer_list<std::pair<const char*, std::string>>{
           {"get_app_state", app_args(other)},
           {"get_app_state", R"({"app":"other"})"},
           {"click", app_args(other, R"("element_index":3)")},
           {"click", app_args(other, R"("element_index":3,"click_count":2)")},
           {"perform_secondary_action", app_args(other, R"("element_index":3,"action":"click")")},
           {"scroll_app", app_args(other, R"("element_index":3,"pages":1)")},
           {"set_value", app_args(other, R"("element_index":6,"value":"typed")")},
           {"type_text", app_args(other, R"("text":"typed")")},
           {"press_key", app_args(other, R"("key":"ctrl+a")")},
           {"press_key", app_args(other, R"("key":"Return")")},
           {"drag", app_args(other, R"("from_x":900,"from_y":300,"to_x":1000,"to_y":300)")}}) {
    INFO(tool << " " << args);
    check_refused(error_text(s, tool, args));
  }
  // Nothing happened in it, and nothing took the keyboard focus.
  const std::vector<std::string> events = d.other->sync();
  INFO(joined(events));
  CHECK(events.empty());
  d.obs.sync();
  CHECK(d.obs.input_focus() == focus_before);

  // The granted program takes them.
  const pid_t granted = d.granted->pid();
  json_ptr state = ok_call(s, "get_app_state", app_args(granted));
  CHECK(contains(text_of(*state), "push button \"Apply\""));
  ok_call(s, "click", app_args(granted, R"("element_index":3)"));
  CHECK(has(d.granted->sync(), "clicked Apply"));
  ok_call(s, "set_value", app_args(granted, R"("element_index":6,"value":"typed")"));
  CHECK(has(d.granted->sync(), "entry typed"));
  ok_call(s, "perform_secondary_action", app_args(granted, R"("element_index":3,"action":"click")"));
  CHECK(has(d.granted->sync(), "clicked Apply"));
  ok_call(s, "press_key", app_args(granted, R"("key":"Return")"));
  ok_call(s, "type_text", app_args(granted, R"("text":"x")"));
  // And the one not granted still saw nothing.
  const std::vector<std::string> after = d.other->sync();
  INFO(joined(after));
  CHECK(after.empty());
}

}  // namespace

TEST_CASE("without a window manager every a11y tool refuses the program not granted, which sees "
          "nothing, and serves the granted one") {
  a11y_tools_keep_to_the_grant(false);
}

TEST_CASE("under openbox every a11y tool refuses the program not granted, which sees nothing, "
          "and serves the granted one") {
  a11y_tools_keep_to_the_grant(true);
}

TEST_CASE("the a11y press_key refuses a system key combo without the systemKeyCombos grant, "
          "before it focuses anything") {
  desk d(false);
  server_process& s = *d.s;
  d.obs.set_input_focus(d.obs.root());
  const std::string text = error_text(s, "press_key", app_args(d.granted->pid(), R"("key":"super")"));
  INFO(text);
  CHECK(contains(text, "system key combo"));
  CHECK(contains(text, "systemKeyCombos"));
  CHECK(contains(error_text(s, "press_key", app_args(d.granted->pid(), R"("key":"ctrl+alt+t")")),
                 "systemKeyCombos"));
  d.obs.sync();
  CHECK(d.obs.input_focus() == d.obs.root());
  CHECK(d.granted->sync().empty());

  ok_call(s, "request_access", R"({"apps":[],"systemKeyCombos":true,"reason":"the test"})");
  ok_call(s, "press_key", app_args(d.granted->pid(), R"("key":"super")"));
}

TEST_CASE("find_text's accessibility search does not read the program not granted, and reads the "
          "granted one") {
  // Without Tesseract only the accessibility backend can answer: the
  // pixels of the window not granted are the capture's business
  // (screenshot filtering), not this test's.
  desk d(false, {{"CU_TESSERACT_LIBRARY", "/nonexistent/libtesseract.so.5"}});
  server_process& s = *d.s;
  // Buttons labelled "Twin" only in the program not granted.
  d.other->ask("twins", "added Twins");
  CHECK(d.other->sync().empty());
  ok_call(s, "screenshot");

  const std::string none = error_text(s, "find_text", R"({"text":"Twin"})");
  INFO(none);
  CHECK(contains(none, "Tesseract"));

  json_ptr r = ok_call(s, "find_text", R"({"text":"Remove Apply"})");
  INFO(r->text);
  simdjson::dom::element sc = r->root["result"]["structuredContent"];
  CHECK(str(sc, "backend") == "a11y");
  simdjson::dom::array matches;
  REQUIRE(sc["matches"].get(matches) == simdjson::SUCCESS);
  REQUIRE(matches.size() == 1);
  CHECK(json_area(matches.at(0)["device"]) == d.granted->geometry().at("Remove Apply"));

  // Granted, the other program's labels are read: the search above left
  // them out because of the grants, not because it could not read them.
  ok_call(s, "request_access", R"({"apps":["other"],"reason":"the test"})");
  json_ptr twin = ok_call(s, "find_text", R"({"text":"Twin"})");
  INFO(twin->text);
  CHECK(str(twin->root["result"]["structuredContent"], "backend") == "a11y");
}

namespace {

void marks_leave_out_the_program_not_granted(bool with_wm) {
  desk d(with_wm);
  server_process& s = *d.s;
  d.other->ask("twins", "added Twins");
  CHECK(d.other->sync().empty());
  CHECK(d.granted->sync().empty());
  std::vector<map_mark> marks;
  wait_until(
      [&] {
        marks = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["a11y","windows"]})"));
        return std::any_of(marks.begin(), marks.end(), [](const map_mark& m) {
          return m.name == "Apply" && m.source == "a11y";
        });
      },
      "the granted program's controls to be marked");
  std::string listing;
  for (const map_mark& m : marks) listing += m.source + " " + m.role + " \"" + m.name + "\"\n";
  INFO(listing);
  int applies = 0;
  for (const map_mark& m : marks) {
    CHECK(m.name != "Twin");
    CHECK(m.name != "cu-other");
    applies += m.name == "Apply";
  }
  // The one "Apply" is the granted program's: the other's is left out.
  CHECK(applies == 1);
  if (with_wm) {
    CHECK(std::any_of(marks.begin(), marks.end(), [](const map_mark& m) {
      return m.role == "title bar" && m.name == "cu-granted";
    }));
  }
}

}  // namespace

TEST_CASE("without a window manager screen marks leave out the program not granted") {
  marks_leave_out_the_program_not_granted(false);
}

TEST_CASE("under openbox screen marks leave out the program not granted and its title bar") {
  marks_leave_out_the_program_not_granted(true);
}

TEST_CASE("a mark of a program whose grant ended is pressed neither by the pointer nor through "
          "its accessibility action") {
  // The grants can end only by the idle release, after two seconds with
  // no request: the map is made while both programs are granted.
  desk d(false, {{"CU_IDLE_RELEASE_SECS", "2"}});
  server_process& s = *d.s;
  d.other->ask("twins", "added Twins");
  CHECK(d.other->sync().empty());
  std::vector<map_mark> marks;
  wait_until(
      [&] {
        // Asked again before each map, so that a slow one (a busy
        // machine) cannot have let the release end the grant first.
        ok_call(s, "request_access", R"({"apps":["granted","other"],"reason":"the test"})");
        marks = marks_of(*ok_call(s, "screenshot_marks", R"({"sources":["a11y"]})"));
        return std::any_of(marks.begin(), marks.end(),
                           [](const map_mark& m) { return m.name == "Twin"; });
      },
      "the other program's controls to be marked");
  int64_t twin = -1;
  for (const map_mark& m : marks) {
    if (m.name == "Twin") twin = m.n;
  }
  // The idle release is a clock, not an event: nothing but two seconds
  // with no request end the grants, so the test waits them out.
  usleep(2300 * 1000);
  ok_call(s, "request_access", R"({"apps":["granted"],"reason":"the test"})");
  json_ptr now = ok_call(s, "list_granted_applications");
  INFO(now->text);
  CHECK_FALSE(contains(now->text, "\"other\""));

  // On the screen, the pointer would reach a window not granted.
  const std::string pointed = error_text(s, "left_click", "{\"mark\":" + std::to_string(twin) + "}");
  INFO(pointed);
  CHECK(contains(pointed, "\"other\""));
  CHECK(contains(pointed, "was refused"));

  // Under another window, the accessibility action is asked for, and the
  // grants refuse it on the a11y thread.
  const area g = d.other->geometry().at("Apply");
  x_client over(d.x.display());
  over.create_app_window(g.x, g.y, g.w, 400, {40, 40, 40});
  over.sync();
  const std::string acted = error_text(s, "left_click", "{\"mark\":" + std::to_string(twin) + "}");
  INFO(acted);
  CHECK(contains(acted, "its accessibility action was not done"));
  CHECK(contains(acted, "\"other\""));
  CHECK(contains(acted, "nothing was pressed"));
  const std::vector<std::string> events = d.other->sync();
  INFO(joined(events));
  CHECK(events.empty());
}
