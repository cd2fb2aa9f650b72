// The toolsets and the windows toolset against a real Xvfb, with and
// without a window manager (openbox), on real clients (xterm, xclock and a
// GTK3 program, tests/x11/data/gtk_windows.py). Every change a tool makes is
// checked through X itself (the test's own connection: geometry, focus,
// properties, whether the window and its process still exist), not through
// the tool's own answer.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "build_config.h"
#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"
#include "support/tool_names.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kWindowsOn = {{"CU_TOOLSETS", "windows"}};

json_ptr ok_json(server_process& s, std::string_view tool, std::string_view args = "{}") {
  json_ptr r = s.call_tool(tool, args);
  INFO(tool << " " << args << " answered " << r->text.substr(0, 800));
  REQUIRE_FALSE(is_error(*r));
  simdjson::dom::object sc;
  REQUIRE(r->root["result"]["structuredContent"].get(sc) == simdjson::SUCCESS);
  // The text block says the same as structuredContent.
  json_ptr text = parse_json(text_of(*r));
  CHECK(simdjson::minify(text->root) == simdjson::minify(sc));
  return text;
}

std::string window_args(xcb_window_t w, std::string_view more = {}) {
  std::string s = "{\"window\":\"" + hex(w) + "\"";
  if (!more.empty()) s.append(",").append(more);
  return s + "}";
}

// The array under key (empty when there is none).
simdjson::dom::array array_at(simdjson::dom::element e, const char* key) {
  simdjson::dom::array a;
  if (e[key].get(a) != simdjson::SUCCESS) return {};
  return a;
}

// The entry of list_windows' answer for window w (the test fails without).
simdjson::dom::element entry(const json_line& list, xcb_window_t w) {
  const std::string id = hex(w);
  for (simdjson::dom::element e : array_at(list.root, "windows")) {
    std::string_view got;
    if (e["id"].get(got) == simdjson::SUCCESS && got == id) return e;
  }
  INFO(list.text);
  FAIL("list_windows does not list " << id);
  return {};
}

bool flag(simdjson::dom::element e, const char* k) {
  INFO("the boolean " << k);
  REQUIRE(e.is_object());
  bool v = false;
  REQUIRE(e[k].get(v) == simdjson::SUCCESS);
  return v;
}

// The atoms of a window's _NET_WM_STATE, by name.
std::vector<std::string> net_wm_state(x_observer& obs, xcb_window_t w) {
  xcb_connection_t* c = obs.connection();
  auto* r = xcb_get_property_reply(
      c, xcb_get_property(c, 0, w, obs.atom("_NET_WM_STATE"), XCB_ATOM_ATOM, 0, 64), nullptr);
  std::vector<std::string> out;
  if (r == nullptr) return out;
  auto* atoms = static_cast<const xcb_atom_t*>(xcb_get_property_value(r));
  for (int i = 0; i < xcb_get_property_value_length(r) / 4; ++i) {
    auto* n = xcb_get_atom_name_reply(c, xcb_get_atom_name(c, atoms[i]), nullptr);
    if (n) out.emplace_back(xcb_get_atom_name_name(n), size_t(xcb_get_atom_name_name_length(n)));
    free(n);
  }
  free(r);
  return out;
}

bool has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The GTK3 program's two windows, once both are viewable.
struct gtk_program {
  gtk_program(x_observer& obs, const std::string& display, const std::string& tag,
              bool refuse_close = false) {
    // Debian's python3, which has the GObject bindings (python3-gi).
    std::vector<std::string> argv = {
        "/usr/bin/python3", std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_windows.py",
        tag};
    if (refuse_close) argv.push_back("--refuse-close");
    program.emplace(argv, display);
    wait_until([&] {
      INFO(program->log());
      REQUIRE(program->running());
      main = obs.client_named("cu-gtk-main-" + tag);
      dialog = obs.client_named("cu-gtk-dialog-" + tag);
      return main != XCB_NONE && dialog != XCB_NONE;
    }, "the GTK windows");
  }
  std::optional<background_program> program;
  xcb_window_t main = XCB_NONE, dialog = XCB_NONE;
};

std::vector<std::string> tool_names(server_process& s) {
  json_ptr r = s.request("tools/list");
  std::vector<std::string> names;
  simdjson::dom::element result = r->root["result"];
  for (simdjson::dom::element t : array_at(result, "tools")) {
    names.emplace_back(t["name"].get_string().value());
  }
  return names;
}

// A client of the test's own that makes windows and writes the root's
// client lists, as any client on the display may.
class window_maker {
 public:
  explicit window_maker(const std::string& display) {
    int screen = 0;
    conn_ = xcb_connect(display.c_str(), &screen);
    REQUIRE(xcb_connection_has_error(conn_) == 0);
    root_ = xcb_setup_roots_iterator(xcb_get_setup(conn_)).data->root;
  }
  ~window_maker() { xcb_disconnect(conn_); }
  window_maker(const window_maker&) = delete;
  window_maker& operator=(const window_maker&) = delete;

  struct spec {
    std::string title;  // WM_NAME and WM_CLASS; none of them when empty.
    bool override_redirect = false;
    bool map = true;
    xcb_window_t parent = XCB_NONE;  // The root when None.
  };

  // A 40x30 InputOutput window at (x, y); no round trip (sync() waits).
  xcb_window_t window(int x, int y, const spec& sp) {
    xcb_window_t w = xcb_generate_id(conn_);
    const uint32_t values[] = {0xffffff, sp.override_redirect ? 1u : 0u};
    xcb_create_window(conn_, XCB_COPY_FROM_PARENT, w, sp.parent != XCB_NONE ? sp.parent : root_,
                      int16_t(x), int16_t(y), 40, 30, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT, values);
    if (!sp.title.empty()) {
      xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                          uint32_t(sp.title.size()), sp.title.data());
      const std::string cls = sp.title + '\0' + "CuPlanted" + '\0';
      xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8,
                          uint32_t(cls.size()), cls.data());
    }
    if (sp.map) xcb_map_window(conn_, w);
    return w;
  }

  // Replaces the root's WINDOW list property name with ids.
  void plant(const char* name, const std::vector<xcb_window_t>& ids) {
    auto* a = xcb_intern_atom_reply(conn_, xcb_intern_atom(conn_, 0, uint16_t(strlen(name)), name),
                                    nullptr);
    REQUIRE(a != nullptr);
    xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, root_, a->atom, XCB_ATOM_WINDOW, 32,
                        uint32_t(ids.size()), ids.data());
    free(a);
    sync();
  }

  void sync() { free(xcb_get_input_focus_reply(conn_, xcb_get_input_focus(conn_), nullptr)); }

 private:
  xcb_connection_t* conn_ = nullptr;
  xcb_window_t root_ = XCB_NONE;
};

bool exists(x_observer& obs, xcb_window_t w) {
  xcb_connection_t* c = obs.connection();
  auto* g = xcb_get_geometry_reply(c, xcb_get_geometry(c, w), nullptr);
  free(g);
  return g != nullptr;
}

// The server's own window: the desktop thread's, which it names.
xcb_window_t server_window(x_observer& obs) {
  for (xcb_window_t w : obs.top_levels()) {
    if (obs.title(w) == "computer-use-mcp") return w;
  }
  return XCB_NONE;
}

}  // namespace

TEST_CASE("toolsets: the default lists the 24, windows adds six after them (all: vision's four, a11y's nine, gamepad's six and marks' one too), unknown names stop the server") {
  xvfb x(640, 480);
  {
    server_process s(x.display());
    CHECK(tool_names(s) == tool_names_of("computer"));
    // A tool of a toolset that is off answers as an unknown tool.
    CHECK(contains(error_text(s, "list_windows"), "Unknown tool: \"list_windows\""));
  }
  for (const char* on : {"windows", "all", " computer , windows "}) {
    CAPTURE(on);
    server_process s(x.display(), {{"CU_TOOLSETS", on}});
    std::vector<std::string> names = tool_names(s);
    // The 24, then windows' six; all adds vision's, a11y's when it is
    // built (libatspi), gamepad's and marks'.
    std::vector<std::string> expected = tool_names_of("computer");
    for (const std::string& n : tool_names_of("windows")) expected.push_back(n);
    if (std::string_view(on) == "all") {
      for (const std::string& n : tool_names_of("vision")) expected.push_back(n);
      if (CU_HAVE_A11Y) {
        for (const std::string& n : tool_names_of("a11y")) expected.push_back(n);
      }
      for (const std::string& n : tool_names_of("gamepad")) expected.push_back(n);
      for (const std::string& n : tool_names_of("marks")) expected.push_back(n);
    }
    CHECK(names == expected);
  }
  for (const char* bad : {"bogus", "computer,", "Windows"}) {
    CAPTURE(bad);
    server_process s(x.display(), {{"CU_TOOLSETS", bad}});
    s.expect_exit_status(2);
    REQUIRE(s.wait_exit() == 2);
    CHECK(contains(s.stderr_text(), "CU_TOOLSETS:"));
    CHECK(contains(s.stderr_text(), "the toolsets are computer, windows, vision, a11y, gamepad, marks, or all"));
  }
}

TEST_CASE("without a window manager list_windows shows what X says of xterm, xclock and a GTK3 program") {
  xvfb x(1920, 1080);
  x_observer obs(x.display());
  xterm_window term(x.display(), "cu-list-term", 30, 40);
  background_program clock({"xclock", "-geometry", "200x200+900+100"}, x.display());
  wait_until([&] { return !obs.windows_with_class("XClock").empty(); }, "xclock");
  const xcb_window_t clock_w = obs.windows_with_class("XClock")[0];
  gtk_program gtk(obs, x.display(), "list");
  server_process s(x.display(), kWindowsOn);

  json_ptr list = ok_json(s, "list_windows");
  CHECK(list->root["window_manager"].is_null());
  for (xcb_window_t w : {term.top_level(), clock_w, gtk.main, gtk.dialog}) {
    CAPTURE(hex(w));
    simdjson::dom::element e = entry(*list, w);
    REQUIRE(e.is_object());
    CHECK(std::string(e["title"].get_string().value()) == obs.title(w));
    auto cls = obs.wm_class(w);
    REQUIRE(cls);
    CHECK(std::string(e["instance"].get_string().value()) == cls->first);
    CHECK(std::string(e["class"].get_string().value()) == cls->second);
    CHECK(uint32_t(num(e, "pid")) == obs.net_wm_pid(w).value_or(0));
    CHECK(json_area(e["device"]) == x_area(obs, w));
    // 1920x1080 is shown as 1366x768: image = device * 1366 / 1920, outwards.
    area img = json_area(e["image"]);
    area dev = x_area(obs, w);
    CHECK(img.x == dev.x * 1366 / 1920);
    CHECK(img.y == dev.y * 768 / 1080);
    CHECK(flag(e, "viewable"));
    CHECK_FALSE(flag(e, "minimized"));
  }
  CHECK(uint32_t(num(entry(*list, term.top_level()), "pid")) == uint32_t(term.pid()));
  CHECK(std::string(entry(*list, gtk.dialog)["type"].get_string().value()) == "dialog");
  CHECK(std::string(entry(*list, gtk.dialog)["transient_for"].get_string().value()) ==
        hex(gtk.main));
  CHECK(entry(*list, gtk.main)["transient_for"].is_null());
  CHECK(std::string(entry(*list, gtk.main)["type"].get_string().value()) == "normal");

  // Filters: by app (class, instance or title) and by title.
  json_ptr clocks = ok_json(s, "list_windows", R"({"app":"CLOCK"})");
  REQUIRE(array_at(clocks->root, "windows").size() == 1);
  CHECK(entry(*clocks, clock_w).is_object());
  json_ptr titled = ok_json(s, "list_windows", R"({"title":"cu-gtk-dialog"})");
  REQUIRE(array_at(titled->root, "windows").size() == 1);
  CHECK(entry(*titled, gtk.dialog).is_object());

  // focus_window without a manager sets the input focus itself.
  json_ptr focused = ok_json(s, "focus_window", window_args(term.top_level()));
  CHECK(flag(focused->root, "focused"));
  CHECK(std::string(focused->root["via"].get_string().value()) == "x11");
  CHECK(obs.top_level_of(obs.input_focus()) == term.top_level());
  json_ptr by_app = ok_json(s, "focus_window", R"({"app":"cu-gtk-main-list"})");
  CHECK(std::string(by_app->root["window"].get_string().value()) == hex(gtk.main));
  CHECK(obs.top_level_of(obs.input_focus()) == gtk.main);

  // Move and resize through ConfigureWindow; X says where it went.
  json_ptr moved = ok_json(s, "set_window_geometry",
                           window_args(clock_w, R"("x":300,"y":250,"width":150,"height":120,"units":"device")"));
  CHECK((x_area(obs, clock_w) == area{300, 250, 150, 120}));
  CHECK(json_area(moved->root["device"]) == x_area(obs, clock_w));
  // In image units (the default): 1366x768 pixels of a 1920x1080 screen.
  ok_json(s, "set_window_geometry", window_args(clock_w, R"("x":683,"y":384)"));
  CHECK(x_area(obs, clock_w).x == 960);
  CHECK(x_area(obs, clock_w).y == 540);

  // Minimize without a manager unmaps; normal maps it again.
  json_ptr min = ok_json(s, "set_window_state", window_args(clock_w, R"("state":"minimized")"));
  CHECK(flag(min->root, "minimized"));
  CHECK_FALSE(obs.viewable(clock_w));
  ok_json(s, "set_window_state", window_args(clock_w, R"("state":"normal")"));
  CHECK(obs.viewable(clock_w));
  CHECK(contains(error_text(s, "set_window_state", window_args(clock_w, R"("state":"maximized")")),
                 "needs a window manager"));

  // close_window: WM_DELETE_WINDOW; xclock quits, and its process ends.
  json_ptr closed = ok_json(s, "close_window", window_args(clock_w));
  CHECK(flag(closed->root, "closed"));
  CHECK(std::string(closed->root["via"].get_string().value()) == "wm_delete_window");
  wait_until([&] { return !clock.running(); }, "xclock to exit");
  CHECK(contains(error_text(s, "focus_window", window_args(clock_w)), "no window " + hex(clock_w)));
}

TEST_CASE("under openbox the windows tools go through EWMH, and X shows every change") {
  xvfb x(1920, 1080);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  start_openbox(obs, wm, x.display());
  xterm_window term_program(x.display(), "cu-wm-term", 100, 100);
  // Under a reparenting manager, the xterm's own window is inside a frame.
  struct {
    xcb_window_t w;
    xcb_window_t top_level() const { return w; }
  } term{obs.client_named("cu-wm-term")};
  REQUIRE(term.w != XCB_NONE);
  gtk_program gtk(obs, x.display(), "wm", /*refuse_close=*/true);
  server_process s(x.display(), kWindowsOn);

  json_ptr list = ok_json(s, "list_windows");
  INFO(list->text);
  std::string_view wm_name;
  REQUIRE(list->root["window_manager"].get(wm_name) == simdjson::SUCCESS);
  CHECK(wm_name == "Openbox");
  simdjson::dom::element e = entry(*list, term.top_level());
  std::vector<uint32_t> extents = obs.cardinals(term.top_level(), "_NET_FRAME_EXTENTS");
  REQUIRE(extents.size() == 4);
  CHECK(num(e["frame_extents"], "left") == extents[0]);
  CHECK(num(e["frame_extents"], "top") == extents[2]);
  CHECK(num(e, "desktop") == obs.cardinals(term.top_level(), "_NET_WM_DESKTOP").at(0));
  CHECK(json_area(e["device"]) == x_area(obs, term.top_level()));

  // Focus: the manager makes it active.
  json_ptr focused = ok_json(s, "focus_window", window_args(term.top_level()));
  CHECK(flag(focused->root, "focused"));
  CHECK(std::string(focused->root["via"].get_string().value()) == "ewmh");
  CHECK(obs.window_property(obs.root(), "_NET_ACTIVE_WINDOW") == term.top_level());
  json_ptr again = ok_json(s, "list_windows");
  CHECK(flag(entry(*again, term.top_level()), "focused"));
  CHECK(std::string(again->root["active"].get_string().value()) == hex(term.top_level()));

  // Move: the window's own area lands where asked, whatever the frame.
  json_ptr moved = ok_json(s, "set_window_geometry",
                           window_args(gtk.main, R"("x":500,"y":300,"units":"device")"));
  CHECK(std::string(moved->root["via"].get_string().value()) == "ewmh");
  CHECK(x_area(obs, gtk.main).x == 500);
  CHECK(x_area(obs, gtk.main).y == 300);
  ok_json(s, "set_window_geometry", window_args(gtk.main, R"("width":420,"height":310,"units":"device")"));
  CHECK(x_area(obs, gtk.main).w == 420);
  CHECK(x_area(obs, gtk.main).h == 310);
  // Far off screen: the manager keeps it on screen, and the answer says so.
  json_ptr clamped = ok_json(s, "set_window_geometry",
                             window_args(gtk.main, R"("x":30000,"units":"device")"));
  CHECK(json_area(clamped->root["device"]) == x_area(obs, gtk.main));
  CHECK(x_area(obs, gtk.main).x < 1920);
  CHECK(contains(clamped->root["note"].get_string().value(), "adjusted"));

  // States, each read back from _NET_WM_STATE and the window's geometry,
  // which has followed the state by the time the answer comes (openbox
  // sets the state first and resizes a few ms later).
  const area restored = x_area(obs, term.top_level());
  json_ptr max = ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"maximized")"));
  CHECK(flag(max->root, "maximized"));
  CHECK(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_MAXIMIZED_VERT"));
  CHECK(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_MAXIMIZED_HORZ"));
  CHECK(x_area(obs, term.top_level()).w > restored.w);
  CHECK(x_area(obs, term.top_level()).h > restored.h);
  ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"normal")"));
  CHECK_FALSE(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_MAXIMIZED_VERT"));
  CHECK(x_area(obs, term.top_level()) == restored);
  ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"fullscreen")"));
  CHECK(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_FULLSCREEN"));
  CHECK((x_area(obs, term.top_level()) == area{0, 0, 1920, 1080}));
  ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"fullscreen","enable":false)"));
  CHECK_FALSE(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_FULLSCREEN"));
  ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"above")"));
  CHECK(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_ABOVE"));
  json_ptr min = ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"minimized")"));
  CHECK(flag(min->root, "minimized"));
  CHECK(has(net_wm_state(obs, term.top_level()), "_NET_WM_STATE_HIDDEN"));
  CHECK_FALSE(obs.viewable(term.top_level()));
  ok_json(s, "set_window_state", window_args(term.top_level(), R"("state":"minimized","enable":false)"));
  CHECK(obs.viewable(term.top_level()));

  // Close: a program that refuses (unsaved work) stays; force disconnects it.
  json_ptr refused = ok_json(s, "close_window", window_args(gtk.main));
  CHECK_FALSE(flag(refused->root, "closed"));
  CHECK(std::string(refused->root["via"].get_string().value()) == "ewmh");
  CHECK(contains(gtk.program->log(), "delete-requested"));
  CHECK(gtk.program->running());
  json_ptr forced = ok_json(s, "close_window", window_args(gtk.main, R"("force":true)"));
  CHECK(flag(forced->root, "closed"));
  CHECK(flag(forced->root, "forced"));
  wait_until([&] { return !gtk.program->running(); }, "the GTK program to exit");
}

TEST_CASE("list_displays names the RandR monitors and the one switch_display chose") {
  xvfb x(1920, 1080);
  REQUIRE(run_program({"xrandr", "--setmonitor", "cu-left", "960/254x1080/286+0+0", "none"},
                      x.display()).status == 0);
  REQUIRE(run_program({"xrandr", "--setmonitor", "cu-right", "960/254x1080/286+960+0", "none"},
                      x.display()).status == 0);
  server_process s(x.display(), kWindowsOn);
  json_ptr d = ok_json(s, "list_displays");
  CHECK(std::string(d->root["chosen"].get_string().value()) == "auto");
  CHECK(num(d->root["screen"], "width") == 1920);
  bool right_seen = false;
  for (simdjson::dom::element m : array_at(d->root, "displays")) {
    if (m["name"].get_string().value() == "cu-right") {
      right_seen = true;
      CHECK((json_area(m["device"]) == area{960, 0, 960, 1080}));
    }
  }
  CHECK(right_seen);
  REQUIRE_FALSE(is_error(*s.call_tool("switch_display", R"({"display":"cu-right"})")));
  json_ptr after = ok_json(s, "list_displays");
  CHECK(std::string(after->root["chosen"].get_string().value()) == "cu-right");
  for (simdjson::dom::element m : array_at(after->root, "displays")) {
    CHECK(flag(m, "chosen") == (m["name"].get_string().value() == "cu-right"));
  }
}

TEST_CASE("the windows tools refuse bad arguments with a message naming them, changing nothing") {
  xvfb x(640, 480);
  x_observer obs(x.display());
  xterm_window term(x.display(), "cu-bad-term", 10, 10);
  const area before = x_area(obs, term.top_level());
  server_process s(x.display(), kWindowsOn);
  for (const char* bad : {R"({})", R"({"window":""})", R"({"window":"0"})",
                          R"({"window":"0xZZ"})", R"({"window":"0x20000000"})",
                          R"({"window":12})", R"({"window":"-5"})"}) {
    CAPTURE(bad);
    CHECK(contains(error_text(s, "close_window", bad), "Invalid argument \"window\""));
    CHECK(contains(error_text(s, "set_window_geometry", bad), "\"window\""));
  }
  const std::string root = window_args(obs.root());
  CHECK(contains(error_text(s, "close_window", root), "list_windows gives the ids"));
  CHECK(contains(error_text(s, "set_window_geometry", window_args(term.top_level())),
                 "needs at least one of"));
  CHECK(contains(error_text(s, "set_window_geometry", window_args(term.top_level(), R"("width":0)")),
                 "Invalid argument \"width\""));
  CHECK(contains(error_text(s, "set_window_geometry",
                            window_args(term.top_level(), R"("x":1,"units":"inches")")),
                 "Invalid argument \"units\""));
  CHECK(contains(error_text(s, "set_window_state", window_args(term.top_level(), R"("state":"tiny")")),
                 "Invalid argument \"state\""));
  CHECK(contains(error_text(s, "set_window_state",
                            window_args(term.top_level(), R"("state":"normal","enable":false)")),
                 "Invalid argument \"enable\""));
  CHECK(contains(error_text(s, "focus_window", R"({})"), "exactly one of"));
  CHECK(contains(error_text(s, "focus_window", window_args(term.top_level(), R"("app":"xterm")")),
                 "exactly one of"));
  CHECK(contains(error_text(s, "focus_window", R"({"app":"no-such-app-here"})"),
                 "no window matches"));
  CHECK(contains(error_text(s, "list_windows", R"({"app":5})"), "Invalid argument \"app\""));
  CHECK(x_area(obs, term.top_level()) == before);
  CHECK(obs.viewable(term.top_level()));
}

TEST_CASE("a client list another client plants lists no root, no window of the server's own and no override-redirect window, and every tool taking a window refuses them, changing nothing") {
  xvfb x(640, 480);
  x_observer obs(x.display());
  window_maker planter(x.display());
  server_process s(x.display(), kWindowsOn);
  ok_json(s, "list_windows");  // The desktop thread is connected: its window exists.
  const xcb_window_t own = server_window(obs);
  REQUIRE(own != XCB_NONE);
  const xcb_window_t app = planter.window(20, 20, {.title = "cu-planted-app"});
  const xcb_window_t popup =
      planter.window(200, 20, {.title = "cu-planted-popup", .override_redirect = true});
  const xcb_window_t inner = planter.window(5, 5, {.title = "cu-planted-inner", .parent = app});
  const xcb_window_t junk = planter.window(300, 300, {.title = "", .map = false});
  const std::vector<xcb_window_t> planted = {obs.root(), own, popup, inner, junk, app, app};
  planter.plant("_NET_CLIENT_LIST", planted);
  planter.plant("_NET_CLIENT_LIST_STACKING", planted);

  // Listed: the application's window, once.
  json_ptr list = ok_json(s, "list_windows");
  CHECK(array_at(list->root, "windows").size() == 1);
  CHECK(entry(*list, app).is_object());

  const area popup_before = x_area(obs, popup), app_before = x_area(obs, app);
  const area inner_before = x_area(obs, inner);
  const xcb_window_t focus_before = obs.input_focus();
  struct refusal {
    xcb_window_t w;
    const char* why;
  };
  for (const refusal& r : {refusal{obs.root(), "root window"},
                           refusal{own, "this server's own window"},
                           refusal{popup, "override-redirect"},
                           refusal{inner, "not a top-level window"},
                           refusal{junk, "neither WM_CLASS nor WM_STATE"}}) {
    CAPTURE(hex(r.w));
    CHECK(contains(error_text(s, "focus_window", window_args(r.w)), r.why));
    CHECK(contains(error_text(s, "set_window_geometry",
                              window_args(r.w, R"("x":1,"y":1,"width":3,"height":3,"units":"device")")),
                   r.why));
    CHECK(contains(error_text(s, "set_window_state", window_args(r.w, R"("state":"minimized")")),
                   r.why));
    CHECK(contains(error_text(s, "close_window", window_args(r.w, R"("force":true)")), r.why));
    CHECK(contains(error_text(s, "screenshot", window_args(r.w)), r.why));
    CHECK(contains(error_text(s, "zoom", window_args(r.w, R"("region":[0,0,4,4])")), r.why));
  }

  // Nothing changed: the server's window and connection are there (it still
  // answers through them), and every other window is as it was.
  CHECK(exists(obs, own));
  CHECK(server_window(obs) == own);
  CHECK(entry(*ok_json(s, "list_windows"), app).is_object());
  CHECK(x_area(obs, popup) == popup_before);
  CHECK(x_area(obs, app) == app_before);
  CHECK(x_area(obs, inner) == inner_before);
  CHECK(obs.viewable(popup));
  CHECK(obs.viewable(inner));
  CHECK_FALSE(obs.viewable(junk));
  CHECK(obs.input_focus() == focus_before);
}

TEST_CASE("list_windows lists 100 of 1200 windows by default, the focused one and the topmost, and says how many it left out") {
  xvfb x(640, 480);
  x_observer obs(x.display());
  window_maker planter(x.display());
  std::vector<xcb_window_t> made;
  for (int i = 0; i < 1200; ++i) {
    made.push_back(planter.window(i % 600, i % 450, {.title = "cu-many-" + std::to_string(i)}));
  }
  planter.sync();
  // The lowest window holds the focus: it is kept although 1199 are above it.
  obs.set_input_focus(made[0]);
  server_process s(x.display(), kWindowsOn);

  json_ptr list = ok_json(s, "list_windows");
  simdjson::dom::array windows = array_at(list->root, "windows");
  REQUIRE(windows.size() == 100);
  CHECK(flag(list->root, "truncated"));
  CHECK(num(list->root, "omitted") == 1100);
  CHECK(contains(std::string(list->root["note"].get_string().value()), "1100 of 1200"));
  CHECK(flag(entry(*list, made[0]), "focused"));
  // Bottom to top: the focused window, then the 99 topmost in their order.
  std::vector<std::string> ids;
  for (simdjson::dom::element e : windows) ids.emplace_back(e["id"].get_string().value());
  std::vector<std::string> want = {hex(made[0])};
  for (size_t i = made.size() - 99; i < made.size(); ++i) want.push_back(hex(made[i]));
  CHECK(ids == want);

  json_ptr most = ok_json(s, "list_windows", R"({"max_windows":1000})");
  CHECK(array_at(most->root, "windows").size() == 1000);
  CHECK(num(most->root, "omitted") == 200);
  json_ptr few = ok_json(s, "list_windows", R"({"title":"cu-many-1199"})");
  CHECK(array_at(few->root, "windows").size() == 1);
  CHECK_FALSE(flag(few->root, "truncated"));
  CHECK(num(few->root, "omitted") == 0);
  CHECK(contains(error_text(s, "list_windows", R"({"max_windows":0})"),
                 "Invalid argument \"max_windows\""));
  CHECK(contains(error_text(s, "list_windows", R"({"max_windows":1001})"),
                 "Invalid argument \"max_windows\""));
}

TEST_CASE("list_windows stays under its byte bound when every title is 4 KiB of control characters") {
  xvfb x(640, 480);
  x_observer obs(x.display());
  window_maker planter(x.display());
  // Each title is 24 KiB once JSON escapes it (\u0001); 100 of them would be 2.4 MiB.
  for (int i = 0; i < 100; ++i) planter.window(i, i, {.title = std::string(4096, '\x01')});
  planter.sync();
  server_process s(x.display(), kWindowsOn);
  json_ptr r = s.call_tool("list_windows");
  REQUIRE_FALSE(is_error(*r));
  // The text block and structuredContent each hold the list once (512 KiB
  // at most), the text's escapes escaped once more.
  CHECK(r->text.size() < 1280 * 1024);
  json_ptr list = ok_json(s, "list_windows");
  const size_t listed = array_at(list->root, "windows").size();
  CHECK(listed > 15);
  CHECK(listed < 30);
  CHECK(flag(list->root, "truncated"));
  CHECK(size_t(num(list->root, "omitted")) == 100 - listed);
}

namespace {

std::string text_at(simdjson::dom::element e, const char* key) {
  std::string_view v;
  INFO("the string " << key);
  REQUIRE(e[key].get(v) == simdjson::SUCCESS);
  return std::string(v);
}

}  // namespace

TEST_CASE("window_at answers the topmost shown window at a point, what X stacks there, and null over the bare desktop") {
  // 640x480 is captured at its own size, so image pixels are root pixels.
  xvfb x(640, 480);
  x_observer obs(x.display());
  window_maker planter(x.display());
  // Two 40x30 windows overlapping at (30..39, 20..29): the later is on top.
  const xcb_window_t lower = planter.window(10, 10, {.title = "cu-at-lower"});
  const xcb_window_t upper = planter.window(30, 20, {.title = "cu-at-upper"});
  const xcb_window_t hidden = planter.window(200, 200, {.title = "cu-at-hidden", .map = false});
  planter.sync();
  server_process s(x.display(), kWindowsOn);

  json_ptr overlap = ok_json(s, "window_at", R"({"coordinate":[35,25]})");
  CHECK(text_at(overlap->root["window"], "id") == hex(upper));
  CHECK(num(overlap->root["point"], "x") == 35);
  json_ptr only_lower = ok_json(s, "window_at", R"({"coordinate":[15,15]})");
  CHECK(text_at(only_lower->root["window"], "id") == hex(lower));
  CHECK(text_at(only_lower->root["window"], "title") == "cu-at-lower");
  CHECK(num(only_lower->root["window"]["device"], "width") == 40);
  // An unmapped window is not there to be at a point.
  json_ptr desktop = ok_json(s, "window_at", R"({"coordinate":[210,210]})");
  CHECK(desktop->root["window"].is_null());
  CHECK(obs.title(hidden) == "cu-at-hidden");

  // The stacking order is X's: raising the lower window puts it on top.
  const uint32_t above = XCB_STACK_MODE_ABOVE;
  xcb_configure_window(obs.connection(), lower, XCB_CONFIG_WINDOW_STACK_MODE, &above);
  free(xcb_get_input_focus_reply(obs.connection(), xcb_get_input_focus(obs.connection()),
                                 nullptr));
  json_ptr raised = ok_json(s, "window_at", R"({"coordinate":[35,25]})");
  CHECK(text_at(raised->root["window"], "id") == hex(lower));

  CHECK(contains(error_text(s, "window_at", R"({"coordinate":[1]})"),
                 "Invalid argument \"coordinate\""));
  CHECK(contains(error_text(s, "window_at", "{}"), "coordinate"));
}
