// The a11y toolset against a real Xvfb and a real accessible desktop: a
// GTK3 window of known widgets (tests/x11/data/gtk_a11y.py, which prints a
// line for everything that happens to it and its widgets' geometry from X)
// and gtk3-widget-factory. Every action a tool takes is checked by what the
// application says happened, and every "nothing happened" by a round trip
// to the application (its "geometry" answer comes after every event that
// was on its way), never by waiting.
//
// The accessible desktop. meson runs this binary as
//   env -u DISPLAY tools/lib/a11y-session.sh -- x11-a11y
// with A11Y_SESSION_PRIVATE=1, so the script starts a private session bus
// (dbus-run-session), the AT-SPI bus launcher and the registry before the
// tests, and ends them after. Each test then starts its own Xvfb, and the
// GTK programs and the server it starts on that Xvfb inherit
// DBUS_SESSION_BUS_ADDRESS from this process. That works because nothing on
// the accessibility side needs the X display: the launcher, started with no
// DISPLAY, just makes the accessibility bus (checked: it then names its
// socket "bus" rather than "bus_<display>", in the private runtime
// directory the script gives it), and libatspi in the applications and in
// the server finds that bus by asking org.a11y.Bus on the session bus. It
// would first look for an AT_SPI_BUS property on the X root, which no test
// Xvfb has. DISPLAY is taken away from the script on purpose: a launcher
// given a display writes AT_SPI_BUS on that display's root, which on a
// developer's machine would be their own desktop's.
//
// One accessibility bus serves every test case in turn, so applications
// are asked for by pid (a program of an earlier case may still be listed for
// a moment after it was killed), except where a test checks the name.
#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "support/child_lines.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kA11yOn = {{"CU_TOOLSETS", "a11y"}};
const char* const kTitle = "cu-a11y-test";
// Where the GTK window is put: not at 0,0, so that an element's frame in
// the window's image and its place on the screen differ.
const int kWindowX = 60, kWindowY = 40;

// No key is down on the display and no pointer button is pressed, asked of
// X directly (an input_probe would take the keyboard focus from the GTK
// window).
void check_nothing_held(x_observer& obs) {
  xcb_connection_t* c = obs.connection();
  auto* k = xcb_query_keymap_reply(c, xcb_query_keymap(c), nullptr);
  auto* p = xcb_query_pointer_reply(c, xcb_query_pointer(c, obs.root()), nullptr);
  REQUIRE(k != nullptr);
  REQUIRE(p != nullptr);
  CHECK(std::all_of(std::begin(k->keys), std::end(k->keys), [](uint8_t b) { return b == 0; }));
  CHECK((p->mask & 0x1f00) == 0);
  free(k);
  free(p);
}

std::vector<std::string> strings(simdjson::dom::element e, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (e[key].get(a) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element s : a) {
    std::string_view v;
    if (s.get(v) == simdjson::SUCCESS) out.emplace_back(v);
  }
  return out;
}

bool has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string str(simdjson::dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v) != simdjson::SUCCESS) return {};
  return std::string(v);
}

// A value as text: a string as it is, a number as an integer when it is
// one ("42", not "42.0"); "" when absent or null.
std::string value_text(simdjson::dom::element e, const char* key) {
  simdjson::dom::element v;
  if (e[key].get(v) != simdjson::SUCCESS || v.is_null()) return {};
  std::string_view s;
  if (v.get(s) == simdjson::SUCCESS) return std::string(s);
  double d = 0;
  if (v.get(d) == simdjson::SUCCESS) {
    if (d == double(int64_t(d))) return std::to_string(int64_t(d));
    return std::to_string(d);
  }
  return simdjson::minify(v);
}

// A tool's structuredContent, parsed on its own (the test fails without).
json_ptr structured(const json_line& r) {
  INFO(r.text.substr(0, 800));
  simdjson::dom::element sc;
  REQUIRE(r.root["result"]["structuredContent"].get(sc) == simdjson::SUCCESS);
  return parse_json(simdjson::minify(sc));
}

// Calls an a11y tool that must succeed and whose first text block is the
// same JSON as its structuredContent; the structuredContent.
json_ptr ok_json(server_process& s, std::string_view tool, std::string_view args) {
  json_ptr r = ok_call(s, tool, args);
  json_ptr sc = structured(*r);
  json_ptr text = parse_json(text_of(*r));
  CHECK(json_equal(text->root, sc->root));
  return sc;
}

// "{"app":"PID", ...more}"
std::string app_args(pid_t pid, std::string_view more = {}) {
  std::string s = "{\"app\":\"" + std::to_string(pid) + "\"";
  if (!more.empty()) s.append(",").append(more);
  return s + "}";
}

std::string index_arg(int64_t i) { return "\"element_index\":" + std::to_string(i); }

struct listed_app {
  std::string name, bus_name;
  int64_t pid = 0;
  std::vector<std::string> windows;
  bool answering = false;
};

std::vector<listed_app> list_apps(server_process& s) {
  json_ptr sc = ok_json(s, "list_apps", "{}");
  std::vector<listed_app> out;
  simdjson::dom::array apps;
  REQUIRE(sc->root["apps"].get(apps) == simdjson::SUCCESS);
  for (simdjson::dom::element a : apps) {
    listed_app l;
    l.name = str(a, "name");
    l.bus_name = str(a, "bus_name");
    l.pid = num(a, "pid");
    l.windows = strings(a, "windows");
    REQUIRE(a["answering"].get(l.answering) == simdjson::SUCCESS);
    out.push_back(std::move(l));
  }
  return out;
}

// Polls list_apps until it lists an application of this pid with a window
// of this title: registering on the bus is the application's business, and
// it says nothing when it is done.
listed_app wait_listed(server_process& s, pid_t pid, std::string_view title) {
  listed_app found;
  wait_until([&] {
    for (listed_app& a : list_apps(s)) {
      if (a.pid == pid && (title.empty() || has(a.windows, title))) {
        found = a;
        return true;
      }
    }
    return false;
  }, "the application on the accessibility bus");
  return found;
}

struct element {
  int64_t index = -1, depth = -1;
  std::string role, name, value;
  std::vector<std::string> states, actions;
  std::optional<area> frame, device;
};

// get_app_state's answer, taken apart.
struct app_state {
  json_ptr response;
  std::string text;  // the first content block: the tree as text
  int64_t snapshot = -1;
  int64_t pid = 0;
  std::string app_name;
  std::string window_id, window_title;
  std::optional<area> window;  // its device area
  int image_w = 0, image_h = 0;
  bool truncated = false;
  std::optional<int64_t> focused;      // the focused element's index
  std::optional<std::string> selected;  // the selected text
  std::vector<element> elements;

  const element* find(std::string_view role, std::string_view name) const {
    for (const element& e : elements) {
      if (e.role == role && e.name == name) return &e;
    }
    return nullptr;
  }
  const element& named(std::string_view role, std::string_view name) const {
    const element* e = find(role, name);
    INFO(text);
    if (e == nullptr) FAIL("no " << role << " \"" << name << "\" in the tree");
    return *e;
  }
};

app_state get_state(server_process& s, const std::string& args) {
  app_state st;
  st.response = ok_call(s, "get_app_state", args);
  st.text = text_of(*st.response);
  json_ptr sc = structured(*st.response);
  simdjson::dom::element root = sc->root;
  INFO(sc->text.substr(0, 1500));
  st.snapshot = num(root, "snapshot");
  st.pid = num(root["app"], "pid");
  st.app_name = str(root["app"], "name");
  simdjson::dom::element w = root["window"];
  if (!w.is_null()) {
    st.window_id = str(w, "id");
    st.window_title = str(w, "title");
    st.window = json_area(w["device"]);
  }
  st.image_w = int(num(root["image"], "width"));
  st.image_h = int(num(root["image"], "height"));
  REQUIRE(root["truncated"].get(st.truncated) == simdjson::SUCCESS);
  if (!root["focused"].is_null()) st.focused = num(root, "focused");
  std::string_view sel;
  if (root["selected_text"].get(sel) == simdjson::SUCCESS) st.selected = std::string(sel);
  simdjson::dom::array elements;
  REQUIRE(root["elements"].get(elements) == simdjson::SUCCESS);
  for (simdjson::dom::element e : elements) {
    element el;
    el.index = num(e, "index");
    el.depth = num(e, "depth");
    el.role = str(e, "role");
    el.name = str(e, "name");
    el.value = value_text(e, "value");
    el.states = strings(e, "states");
    el.actions = strings(e, "actions");
    simdjson::dom::element f;
    if (e["frame"].get(f) == simdjson::SUCCESS && !f.is_null()) el.frame = json_area(f);
    if (e["device"].get(f) == simdjson::SUCCESS && !f.is_null()) el.device = json_area(f);
    st.elements.push_back(std::move(el));
  }
  return st;
}

// The size of the PNG in content block i of a response.
std::pair<int, int> png_size(const json_line& r, size_t i) {
  simdjson::dom::element block = r.root["result"]["content"].at(i);
  INFO(r.text.substr(0, 300));
  REQUIRE(str(block, "type") == "image");
  REQUIRE(str(block, "mimeType") == "image/png");
  rgb_image img = decode_png_base64(str(block, "data"));
  return {img.width, img.height};
}

// tests/x11/data/gtk_a11y.py on the display, once it has said it is ready.
class gtk_app {
 public:
  explicit gtk_app(const std::string& display)
      : program_({"/usr/bin/python3",
                  std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_a11y.py",
                  std::to_string(kWindowX), std::to_string(kWindowY)},
                 display) {
    auto before = program_.read_until("ready");
    INFO(program_.log());
    REQUIRE(before);
    REQUIRE(read_geometry().empty());
  }

  pid_t pid() const { return program_.pid(); }
  child_lines& program() { return program_; }
  // Where X says each known widget is, by accessible name, as of the last
  // round trip.
  const std::map<std::string, area>& geometry() const { return geoms_; }

  // A round trip: asks for the geometry and returns the event lines the
  // application printed before answering (everything that was on its way).
  std::vector<std::string> sync() {
    program_.send("geometry");
    return read_geometry();
  }

  // Reads until the line `line` and returns the lines before it.
  std::vector<std::string> expect(std::string_view line) {
    auto before = program_.read_until(line);
    INFO("waiting for the application to print \"" << line << "\"");
    INFO(program_.log());
    REQUIRE(before);
    return *before;
  }

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
      std::vector<std::string> words;
      size_t end = line->size();
      for (int i = 0; i < 4; ++i) {
        size_t sp = line->rfind(' ', end - 1);
        words.insert(words.begin(), line->substr(sp + 1, end - sp - 1));
        end = sp;
      }
      geoms_[line->substr(5, end - 5)] =
          area{std::stoi(words[0]), std::stoi(words[1]), std::stoi(words[2]), std::stoi(words[3])};
    }
  }

  child_lines program_;
  std::map<std::string, area> geoms_;
};

bool session_bus_set() {
  const char* bus = getenv("DBUS_SESSION_BUS_ADDRESS");
  INFO("run this test under tools/lib/a11y-session.sh (meson test does)");
  REQUIRE(bus != nullptr);
  return true;
}

// A private Xvfb, the GTK window on it and the server with the a11y
// toolset, once the server lists the window's application.
struct a11y_desk {
  bool bus = session_bus_set();
  xvfb x{1280, 800};
  x_observer obs{x.display()};
  gtk_app app{x.display()};
  server_process s{x.display(), kA11yOn};
  listed_app listed = wait_listed(s, app.pid(), kTitle);

  std::string args(std::string_view more = {}) const { return app_args(app.pid(), more); }
  app_state state() { return get_state(s, args()); }
};

// The known widgets: role, accessible name.
const std::vector<std::pair<std::string, std::string>> kKnown = {
    {"push button", "Apply"},  {"push button", "Remove Apply"}, {"push button", "Add Extra"},
    {"text", "Name field"},    {"spin button", "Count"},        {"check box", "Enabled"},
    {"toggle button", "Details"}, {"slider", "Level"}};

}  // namespace

TEST_CASE("list_apps lists the GTK program by name, pid and window title") {
  a11y_desk d;
  CHECK(d.listed.name == "gtk_a11y.py");
  CHECK(d.listed.pid == d.app.pid());
  CHECK(d.listed.windows == std::vector<std::string>{kTitle});
  CHECK(d.listed.answering);
  CHECK(d.listed.bus_name.rfind(":", 0) == 0);
  // Asked for by name once it is the only one of that name (a program of an
  // earlier test may linger on the bus for a moment).
  wait_until([&] {
    auto apps = list_apps(d.s);
    return std::count_if(apps.begin(), apps.end(),
                         [](const listed_app& a) { return a.name == "gtk_a11y.py"; }) == 1;
  }, "one gtk_a11y.py on the bus");
  app_state st = get_state(d.s, R"({"app":"gtk_a11y.py"})");
  CHECK(st.pid == d.app.pid());
  CHECK(st.app_name == "gtk_a11y.py");
}

TEST_CASE("get_app_state shows the known widgets with their roles, names and where X says they are") {
  a11y_desk d;
  app_state st = d.state();
  INFO(st.text);
  CHECK(st.pid == d.app.pid());

  // Depth first from the application; indices count from 0.
  REQUIRE(st.elements.size() > kKnown.size());
  for (size_t i = 0; i < st.elements.size(); ++i) CHECK(st.elements[i].index == int64_t(i));
  CHECK(st.elements[0].role == "application");
  CHECK(st.elements[0].depth == 0);
  const element& frame = st.named("frame", kTitle);
  CHECK(frame.depth == 1);

  // The window: X's own window, at X's place, and the image is all of it.
  REQUIRE(st.window);
  CHECK(st.window_title == kTitle);
  const xcb_window_t wid = xcb_window_t(std::stoul(st.window_id, nullptr, 16));
  CHECK(*st.window == x_area(d.obs, wid));
  CHECK(*st.window == area{kWindowX, kWindowY, 500, 400});
  CHECK(st.image_w == st.window->w);
  CHECK(st.image_h == st.window->h);
  CHECK(png_size(*st.response, 1) == std::pair<int, int>{st.image_w, st.image_h});

  for (const auto& [role, name] : kKnown) {
    CAPTURE(role, name);
    const element& e = st.named(role, name);
    CHECK(e.depth > frame.depth);
    REQUIRE(d.app.geometry().count(name) == 1);
    const area x = d.app.geometry().at(name);
    REQUIRE(e.device);
    CHECK(*e.device == x);
    REQUIRE(e.frame);
    CHECK(*e.frame == area{x.x - st.window->x, x.y - st.window->y, x.w, x.h});
  }
  CHECK(has(st.named("push button", "Apply").actions, "click"));
  CHECK(has(st.named("check box", "Enabled").actions, "click"));
  CHECK(has(st.named("toggle button", "Details").actions, "activate"));
  CHECK(has(st.named("toggle button", "Details").states, "expandable"));
  CHECK(st.named("text", "Name field").value == "hello");
  CHECK(st.named("spin button", "Count").value == "5");
  CHECK(contains(st.text, "push button \"Apply\" {click}"));

  // Every snapshot has a new id.
  app_state again = d.state();
  CHECK(again.snapshot > st.snapshot);
  CHECK(again.elements.size() == st.elements.size());
}

TEST_CASE("click by element index uses the button's action; click by image point presses the pointer there") {
  a11y_desk d;
  app_state st = d.state();
  const element& apply = st.named("push button", "Apply");
  json_ptr r = ok_json(d.s, "click", d.args(index_arg(apply.index)));
  CHECK(str(r->root, "method") == "action");
  CHECK(num(r->root["element"], "index") == apply.index);
  CHECK(str(r->root["element"], "name") == "Apply");
  CHECK(str(r->root["element"], "role") == "push button");
  CHECK(d.app.expect("clicked Apply").empty());

  // The centre of "Add Extra" in the image get_app_state sent.
  const element& add = st.named("push button", "Add Extra");
  REQUIRE(add.frame);
  const int cx = add.frame->x + add.frame->w / 2, cy = add.frame->y + add.frame->h / 2;
  json_ptr p = ok_json(d.s, "click",
                       d.args("\"x\":" + std::to_string(cx) + ",\"y\":" + std::to_string(cy)));
  CHECK(str(p->root, "method") == "pointer");
  CHECK(d.app.expect("added Extra").empty());
  CHECK(d.app.sync().empty());
  check_nothing_held(d.obs);
}

TEST_CASE("set_value sets an entry's text and a spin button's value, and refuses a button") {
  a11y_desk d;
  app_state st = d.state();
  const element& entry = st.named("text", "Name field");
  json_ptr r = ok_json(d.s, "set_value",
                       d.args(index_arg(entry.index) + ",\"value\":\"set by the test\""));
  CHECK(value_text(r->root, "value") == "set by the test");
  // Setting the whole text may first empty the entry: an "entry " line.
  for (const std::string& l : d.app.expect("entry set by the test")) CHECK(l == "entry ");

  const element& spin = st.named("spin button", "Count");
  json_ptr v = ok_json(d.s, "set_value", d.args(index_arg(spin.index) + ",\"value\":\"42\""));
  CHECK(value_text(v->root, "value") == "42");
  CHECK(d.app.expect("spin 42").empty());

  const element& apply = st.named("push button", "Apply");
  CHECK(contains(error_text(d.s, "set_value", d.args(index_arg(apply.index) + ",\"value\":\"x\"")),
                 "not settable"));
  CHECK(d.app.sync().empty());

  app_state after = d.state();
  CHECK(after.named("text", "Name field").value == "set by the test");
  CHECK(after.named("spin button", "Count").value == "42");
}

TEST_CASE("type_text and press_key type into the entry that has the focus") {
  a11y_desk d;
  app_state st = d.state();
  // A real click focuses the entry (its only action, "activate", does not).
  const element& entry = st.named("text", "Name field");
  REQUIRE(entry.frame);
  ok_json(d.s, "click",
          d.args("\"x\":" + std::to_string(entry.frame->x + entry.frame->w / 2) +
                 ",\"y\":" + std::to_string(entry.frame->y + entry.frame->h / 2)));
  d.app.expect("focus Name field");

  ok_json(d.s, "type_text", d.args("\"text\":\"abc\""));
  std::string last;
  wait_until([&] {
    auto line = d.app.program().read_line();
    INFO(d.app.program().log());
    REQUIRE(line);
    if (line->rfind("entry ", 0) == 0) last = line->substr(6);
    return last.size() >= 3 && last.substr(last.size() - 3) == "abc";
  }, "the entry's text to end with abc");

  app_state typed = d.state();
  REQUIRE(typed.focused);
  CHECK(*typed.focused == typed.named("text", "Name field").index);

  // Keys reach the application through X, and the round trip to it (its
  // answer comes after every X event it had) says they have been handled.
  ok_json(d.s, "press_key", d.args("\"key\":\"ctrl+a\""));
  // press_key gives the window the focus first, which the entry may report.
  for (const std::string& l : d.app.sync()) CHECK(l == "focus Name field");
  app_state selected = d.state();
  CHECK(selected.selected == std::optional<std::string>(last));
  // Typed text replaces the selection, as typing does.
  ok_json(d.s, "type_text", d.args("\"text\":\"xyz\""));
  d.app.expect("entry xyz");
  ok_json(d.s, "press_key", d.args("\"key\":\"BackSpace\""));
  d.app.expect("entry xy");
  check_nothing_held(d.obs);
}

TEST_CASE("perform_secondary_action runs a named action and lists the actions for an unknown one") {
  a11y_desk d;
  app_state st = d.state();
  const element& details = st.named("toggle button", "Details");
  ok_json(d.s, "perform_secondary_action", d.args(index_arg(details.index) + ",\"action\":\"activate\""));
  CHECK(d.app.expect("expanded Details 1").empty());

  std::string err = error_text(d.s, "perform_secondary_action",
                               d.args(index_arg(details.index) + ",\"action\":\"frobnicate\""));
  CHECK(contains(err, "activate"));
  CHECK(d.app.sync().empty());

  app_state after = d.state();
  CHECK(has(after.named("toggle button", "Details").states, "expanded"));
  const element& label = after.named("label", "Hidden details");
  REQUIRE(label.device);
  CHECK(label.device->w > 1);
}

TEST_CASE("a stale element index is refused, and an index whose element moved still reaches it") {
  a11y_desk d;
  app_state st = d.state();
  const element apply = st.named("push button", "Apply");
  const element remove = st.named("push button", "Remove Apply");
  const element enabled = st.named("check box", "Enabled");
  ok_json(d.s, "click", d.args(index_arg(remove.index)));
  CHECK(d.app.expect("removed Apply").empty());

  // Apply is gone: its old index must not reach whatever is there now.
  std::string err = error_text(d.s, "click", d.args(index_arg(apply.index)));
  CHECK((contains(err, "gone") || contains(err, "stale")));
  CHECK(contains(err, "get_app_state"));
  CHECK(d.app.sync().empty());

  // The check box is one place earlier in the tree now; its old index
  // still names it.
  json_ptr r = ok_json(d.s, "click", d.args(index_arg(enabled.index)));
  CHECK(str(r->root["element"], "name") == "Enabled");
  CHECK(d.app.expect("toggled Enabled 1").empty());
  CHECK(d.app.sync().empty());
  check_nothing_held(d.obs);
}

TEST_CASE("an application stopped with SIGSTOP: get_app_state fails within seconds, ping and screenshot are answered first") {
  a11y_desk d;
  d.app.program().signal(SIGSTOP);
  const int64_t start = now_ms();
  d.s.send(tool_call("\"state\"", "get_app_state", d.args()));
  d.s.send(rpc("\"ping\"", "ping"));
  d.s.send(tool_call("\"shot\"", "screenshot", "{}"));
  std::vector<json_ptr> others;
  json_ptr state = read_until(d.s, "\"state\"", others, 10000);
  const int64_t took = now_ms() - start;
  d.app.program().signal(SIGCONT);
  REQUIRE(state);
  INFO(state->text.substr(0, 600));
  CHECK(is_error(*state));
  CHECK(contains(text_of(*state), "not answer"));
  CHECK(took < 10000);
  std::vector<std::string> first;
  for (const json_ptr& o : others) first.push_back(id_of(*o));
  CHECK(has(first, "\"ping\""));
  CHECK(has(first, "\"shot\""));
  for (const json_ptr& o : others) {
    if (id_of(*o) == "\"shot\"") CHECK_FALSE(is_error(*o));
  }

  // Running again, it answers again.
  wait_until([&] {
    json_ptr r = d.s.call_tool("get_app_state", d.args());
    return !is_error(*r);
  }, "get_app_state to answer after SIGCONT");
}

// gtk3-widget-factory on a screen that holds all of its window (1366x741,
// seen on GTK 3.24.38), so that its image is all of it, unscaled, with the
// server, once the application lists its window.
struct factory_desk {
  bool bus = session_bus_set();
  xvfb x{1920, 1080};
  x_observer obs{x.display()};
  background_program factory{{"gtk3-widget-factory"}, x.display()};
  server_process s{x.display(), kA11yOn};

  factory_desk() {
    wait_listed(s, factory.pid(), {});
    // Its window comes after it registers.
    wait_until([&] {
      for (const listed_app& a : list_apps(s)) {
        if (a.pid == factory.pid()) return !a.windows.empty();
      }
      return false;
    }, "gtk3-widget-factory's window");
  }
  std::string args(std::string_view more = {}) const { return app_args(factory.pid(), more); }
  app_state state() { return get_state(s, args()); }
};

TEST_CASE("gtk3-widget-factory: a big tree with push buttons, and the image is its window") {
  factory_desk d;
  app_state st = d.state();
  INFO(st.text.substr(0, 4000));
  CHECK(st.elements.size() > 100);
  CHECK_FALSE(st.truncated);
  CHECK(std::any_of(st.elements.begin(), st.elements.end(),
                    [](const element& e) { return e.role == "push button"; }));
  REQUIRE(st.window);
  const xcb_window_t wid = xcb_window_t(std::stoul(st.window_id, nullptr, 16));
  CHECK(*st.window == x_area(d.obs, wid));
  CHECK(st.image_w == st.window->w);
  CHECK(st.image_h == st.window->h);
  CHECK(png_size(*st.response, 1) == std::pair<int, int>{st.image_w, st.image_h});

  app_state few = get_state(d.s, d.args("\"max_nodes\":10"));
  CHECK(few.elements.size() <= 10);
  CHECK(few.truncated);
}

TEST_CASE("gtk3-widget-factory: scroll_app scrolls a scroll pane by index") {
  factory_desk d;
  app_state st = d.state();
  INFO(st.text.substr(0, 6000));
  // The scroll pane on the screen that holds a text view (its Lorem ipsum is
  // longer than the pane; the tables' panes have nothing to scroll), and its
  // vertical scroll bar, at 0.
  const element* pane = nullptr;
  const element* bar = nullptr;
  for (size_t i = 0; i < st.elements.size() && bar == nullptr; ++i) {
    const element& p = st.elements[i];
    if (p.role != "scroll pane" || !p.frame || !has(p.states, "showing")) continue;
    const element* text = nullptr;
    const element* vertical = nullptr;
    for (size_t j = i + 1; j < st.elements.size() && st.elements[j].depth > p.depth; ++j) {
      const element& e = st.elements[j];
      if (e.role == "text" && e.depth == p.depth + 1) text = &e;
      if (e.role == "scroll bar" && e.device && has(e.states, "vertical") && e.value == "0") {
        vertical = &e;
      }
    }
    if (text != nullptr && vertical != nullptr) {
      pane = &p;
      bar = vertical;
    }
  }
  REQUIRE(bar != nullptr);
  json_ptr r = ok_json(d.s, "scroll_app", d.args(index_arg(pane->index) + ",\"pages\":1"));
  CHECK(str(r->root, "method") == "pointer");
  CHECK(contains(str(r->root, "note"), "5 wheel clicks down"));
  // GTK scrolls on its own time (smooth scrolling): poll its value.
  const int64_t bar_index = bar->index;
  wait_until([&] {
    app_state now = d.state();
    const element& b = now.elements.at(size_t(bar_index));
    return b.role == "scroll bar" && !b.value.empty() && std::stod(b.value) > 0;
  }, "the scroll bar to move");

  check_nothing_held(d.obs);
}

TEST_CASE("drag presses the pointer at one image pixel and lets go at another: the scale follows") {
  a11y_desk d;
  app_state st = d.state();
  const element& level = st.named("slider", "Level");
  REQUIRE(level.frame);
  CHECK(level.value == "50");
  // From its knob (at 50, the middle) to its right end, in the image's
  // pixels (the window's own session: frame, not device). A press in the
  // scale's margin, outside its trough, GTK would ignore.
  const area f = *level.frame;
  const int cy = f.y + f.h / 2;
  json_ptr r = ok_json(d.s, "drag", d.args("\"from_x\":" + std::to_string(f.x + f.w / 2) +
                                           ",\"from_y\":" + std::to_string(cy) +
                                           ",\"to_x\":" + std::to_string(f.x + f.w - 2) +
                                           ",\"to_y\":" + std::to_string(cy)));
  CHECK(str(r->root, "method") == "pointer");
  // The scale prints each value it passes: the drag ends at the top.
  d.app.expect("scale 100");
  check_nothing_held(d.obs);
}

TEST_CASE("bad a11y arguments: an unknown app names the apps there are, a bad index or no target is an error") {
  a11y_desk d;
  CHECK(contains(error_text(d.s, "get_app_state", R"({"app":"no-such-app"})"), "gtk_a11y.py"));
  CHECK(contains(error_text(d.s, "click", R"({"app":"no-such-app","element_index":1})"),
                 "gtk_a11y.py"));
  app_state st = d.state();
  error_text(d.s, "click", d.args(index_arg(int64_t(st.elements.size()) + 100)));
  error_text(d.s, "click", d.args(index_arg(-1)));
  error_text(d.s, "click", d.args());
  error_text(d.s, "set_value", d.args(index_arg(int64_t(st.elements.size()) + 100) +
                                      ",\"value\":\"x\""));
  error_text(d.s, "perform_secondary_action", d.args(index_arg(1)));
  CHECK(d.app.sync().empty());
  check_nothing_held(d.obs);
}

// find_text with the a11y toolset on: the applications' own labels first.
namespace {

const std::map<std::string, std::string> kA11yAndVision = {{"CU_TOOLSETS", "a11y,vision"}};

struct text_desk {
  bool bus = session_bus_set();
  xvfb x{1280, 800};
  x_observer obs{x.display()};
  gtk_app app{x.display()};
  server_process s{x.display(), kA11yAndVision};
  listed_app listed = wait_listed(s, app.pid(), kTitle);
};

}  // namespace

TEST_CASE("find_text answers from the accessibility tree: the button's box is where X says, and its center clicks it") {
  text_desk d;
  ok_call(d.s, "screenshot");
  CHECK(d.app.sync().empty());
  const area apply = d.app.geometry().at("Apply");
  json_ptr sc = ok_json(d.s, "find_text", R"({"text":"apply","exact":true})");
  INFO(sc->text);
  CHECK(str(sc->root, "backend") == "a11y");
  simdjson::dom::element first = sc->root["matches"].at(0);
  // The whole word first: "Apply" before "Remove Apply".
  CHECK(str(first, "text") == "Apply");
  CHECK(str(first, "role") == "push button");
  CHECK(json_area(first["device"]) == apply);
  simdjson::dom::array center;
  REQUIRE(first["center"].get(center) == simdjson::SUCCESS);
  ok_call(d.s, "left_click",
          "{\"coordinate\":[" + std::to_string(int64_t(center.at(0))) + "," +
              std::to_string(int64_t(center.at(1))) + "]}");
  CHECK(d.app.expect("clicked Apply").empty());
  check_nothing_held(d.obs);
}

TEST_CASE("find_text: a label another window covers is not answered from the tree, and OCR reads the rest") {
  text_desk d;
  CHECK(d.app.sync().empty());
  const area apply = d.app.geometry().at("Apply");
  // An application window of another program over the button.
  x_client other(d.x.display());
  other.create_app_window(apply.x - 10, apply.y - 10, apply.w + 20, apply.h + 20, {40, 40, 40});
  other.sync();
  ok_call(d.s, "screenshot");
  json_ptr sc = ok_json(d.s, "find_text", R"({"text":"Apply","exact":true})");
  INFO(sc->text);
  simdjson::dom::array matches;
  REQUIRE(sc->root["matches"].get(matches) == simdjson::SUCCESS);
  for (simdjson::dom::element m : matches) {
    const area box = json_area(m["device"]);
    const int cx = box.x + box.w / 2, cy = box.y + box.h / 2;
    CHECK_FALSE((cx >= apply.x && cx < apply.x + apply.w && cy >= apply.y && cy < apply.y + apply.h));
  }
  // "Remove Apply" is still shown, and found.
  CHECK(matches.size() >= 1);

  // No label says this: the pixels are read.
  json_ptr none = ok_json(d.s, "find_text", R"({"text":"zqxv nothing"})");
  CHECK(str(none->root, "backend") == "ocr");
}

TEST_CASE("find_text with the application stopped: OCR answers within its bound, and the tree again once it runs") {
  text_desk d;
  ok_call(d.s, "screenshot");
  // The same search answered by OCR with the application running (the tree
  // has no such text): what the OCR alone costs on this machine now, busy
  // or not.
  int64_t start = now_ms();
  json_ptr alone = ok_json(d.s, "find_text", R"({"text":"zqxv nothing"})");
  const int64_t ocr_alone = now_ms() - start;
  CHECK(str(alone->root, "backend") == "ocr");
  d.app.program().signal(SIGSTOP);
  start = now_ms();
  json_ptr r = ok_call(d.s, "find_text", R"({"text":"Remove Apply"})");
  const int64_t took = now_ms() - start;
  d.app.program().signal(SIGCONT);
  json_ptr sc = structured(*r);
  INFO(sc->text << "\ntook " << took << " ms, the OCR alone " << ocr_alone << " ms");
  CHECK(str(sc->root, "backend") == "ocr");
  // The tree's search gives up after one call's 300 ms, within its 1.5 s:
  // that, and a margin for the OCR's own variance, is all a stopped
  // application may add to the OCR's time.
  CHECK(took < ocr_alone + 2500);
  wait_until([&] {
    json_ptr again = d.s.call_tool("find_text", R"({"text":"Remove Apply"})");
    return !is_error(*again) && str(structured(*again)->root, "backend") == "a11y";
  }, "find_text to answer from the tree after SIGCONT");
}
