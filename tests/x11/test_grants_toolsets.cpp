// The grants in the toolsets (docs/grants.md, "Toolsets"), against a real
// Xvfb with and without a window manager (openbox): two xterms, one started
// as `xterm -name granted` and one as `xterm -name other`, and a server with
// CU_GRANTS=enforce that was granted "granted". Every refusal is checked by
// what X says afterwards (the window's area, state, focus and existence,
// read on the test's own connection), never by the tool's answer alone.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

// An xterm whose WM_CLASS instance is name and whose title is "cu-" name,
// running a shell that only waits; once its client window is viewable.
struct named_xterm {
  named_xterm(x_observer& obs, const std::string& display, const std::string& name, int x,
              int y)
      : program({"xterm", "-name", name, "-T", "cu-" + name, "-geometry",
                 "60x8+" + std::to_string(x) + "+" + std::to_string(y), "-e", "sh", "-c",
                 "exec cat > /dev/null"},
                display) {
    wait_until([&] {
      INFO(program.log());
      REQUIRE(program.running());
      window = obs.client_named("cu-" + name);
      return window != XCB_NONE;
    }, "the xterm's window");
  }
  background_program program;
  xcb_window_t window = XCB_NONE;
};

std::string window_args(xcb_window_t w, std::string_view more = {}) {
  std::string s = "{\"window\":\"" + hex(w) + "\"";
  if (!more.empty()) s.append(",").append(more);
  return s + "}";
}

// list_windows' entry for w (the test fails without).
simdjson::dom::element entry(const json_line& list, xcb_window_t w) {
  simdjson::dom::array windows;
  REQUIRE(list.root["result"]["structuredContent"]["windows"].get(windows) == simdjson::SUCCESS);
  for (simdjson::dom::element e : windows) {
    std::string_view id;
    if (e["id"].get(id) == simdjson::SUCCESS && id == hex(w)) return e;
  }
  INFO(list.text);
  FAIL("list_windows does not list " << hex(w));
  return {};
}

// The desktop of one case: the screen, optionally openbox, the two xterms
// and the enforcing server, granted "granted".
struct desk {
  explicit desk(bool with_wm, std::map<std::string, std::string> env = {})
      : x(1024, 768), obs(x.display()) {
    if (with_wm) start_openbox(obs, wm, x.display());
    granted.emplace(obs, x.display(), "granted", 20, 20);
    other.emplace(obs, x.display(), "other", 500, 300);
    env["CU_GRANTS"] = "enforce";
    env["CU_TOOLSETS"] = "all";
    s.emplace(x.display(), env);
    grant_reply = ok_call(*s, "request_access", R"({"apps":["granted"],"reason":"the test"})");
  }
  xvfb x;
  x_observer obs;
  std::optional<background_program> wm;
  std::optional<named_xterm> granted, other;
  std::optional<server_process> s;
  json_ptr grant_reply;
};

void windows_toolset_keeps_to_the_grant(bool with_wm) {
  desk d(with_wm);
  server_process& s = *d.s;
  const xcb_window_t other = d.other->window, granted = d.granted->window;
  const area other_before = x_area(d.obs, other);
  d.obs.set_input_focus(granted);
  const xcb_window_t focus_before = d.obs.input_focus();

  // Each action on the window not granted is refused, names it, says how
  // to grant it, and changes nothing X shows.
  for (auto [tool, args] : std::initializer_list<std::pair<const char*, std::string>>{
           {"set_window_geometry", window_args(other, R"("x":5,"y":5,"width":200,"height":100,"units":"device")")},
           {"set_window_state", window_args(other, R"("state":"minimized")")},
           {"set_window_state", window_args(other, R"("state":"maximized")")},
           {"focus_window", window_args(other)},
           {"focus_window", R"({"app":"other"})"},
           {"close_window", window_args(other, R"("force":true)")}}) {
    INFO(tool << " " << args);
    const std::string text = error_text(s, tool, args);
    CHECK(contains(text, "was refused"));
    CHECK(contains(text, "\"other\""));
    CHECK(contains(text, "request_access with apps [\"other\"]"));
  }
  d.obs.sync();
  CHECK(x_area(d.obs, other) == other_before);
  CHECK(d.obs.viewable(other));
  CHECK(d.obs.input_focus() == focus_before);
  CHECK(d.obs.client_named("cu-other") == other);

  // list_windows lists it, its title withheld and marked not granted.
  json_ptr list = ok_call(s, "list_windows");
  simdjson::dom::element o = entry(*list, other), g = entry(*list, granted);
  CHECK(std::string_view(o["title"].get_string().value()) == "");
  CHECK_FALSE(o["granted"].get_bool().value());
  CHECK(std::string_view(o["instance"].get_string().value()) == "other");
  CHECK(std::string_view(g["title"].get_string().value()) == "cu-granted");
  CHECK(g["granted"].get_bool().value());
  // A title filter does not search a withheld title.
  json_ptr filtered = ok_call(s, "list_windows", R"({"title":"cu-other"})");
  CHECK(contains(filtered->text, "\"windows\":[]"));

  // open_application: a name not granted, and a granted name, which focuses.
  const std::string refused = error_text(s, "open_application", R"({"app":"other"})");
  CHECK(contains(refused, "request_access with apps [\"other\"]"));
  d.obs.sync();
  CHECK(d.obs.input_focus() == focus_before);

  // The granted window takes every action.
  ok_call(s, "set_window_geometry",
                           window_args(granted, R"("x":40,"y":50,"units":"device")"));
  area now = x_area(d.obs, granted);
  CHECK(now.x == 40);
  CHECK(now.y == 50);
  ok_call(s, "focus_window", window_args(granted));
  ok_call(s, "open_application", R"({"app":"granted"})");
  ok_call(s, "close_window", window_args(granted, R"("force":true)"));
  wait_until([&] { return d.obs.client_named("cu-granted") == XCB_NONE; }, "the granted xterm closed");
  CHECK(d.obs.client_named("cu-other") == other);
}

}  // namespace

TEST_CASE("without a window manager the windows toolset acts only on the granted xterm") {
  windows_toolset_keeps_to_the_grant(false);
}

TEST_CASE("under openbox the windows toolset acts only on the granted xterm") {
  windows_toolset_keeps_to_the_grant(true);
}

TEST_CASE("the operator's deny list beats request_access in the windows toolset and open_application") {
  desk d(false, {{"CU_DENY_APPS", "granted"}});
  server_process& s = *d.s;
  CHECK(contains(d.grant_reply->text, "\"deniedApplications\":[\"granted\"]"));
  const xcb_window_t w = d.granted->window;
  const area before = x_area(d.obs, w);
  const std::string text =
      error_text(s, "set_window_geometry", window_args(w, R"("x":300,"units":"device")"));
  CHECK(contains(text, "CU_DENY_APPS"));
  CHECK(contains(text, "\"granted\""));
  CHECK(contains(error_text(s, "close_window", window_args(w, R"("force":true)")), "CU_DENY_APPS"));
  CHECK(contains(error_text(s, "open_application", R"({"app":"granted"})"), "CU_DENY_APPS"));
  d.obs.sync();
  CHECK(x_area(d.obs, w) == before);
  CHECK(d.obs.client_named("cu-granted") == w);
}

TEST_CASE("the gamepad refuses while a window not granted holds the keyboard focus") {
  desk d(false);
  server_process& s = *d.s;
  d.obs.set_input_focus(d.other->window);
  const std::string text = error_text(s, "gamepad_button", R"({"button":"a"})");
  CHECK(contains(text, "keyboard focus"));
  CHECK(contains(text, "\"other\""));
  // Reading the controller's state touches no application.
  json_ptr state = s.call_tool("gamepad_state");
  CHECK_FALSE(contains(state->text, "was refused"));
}
