// Enforced grants and input (docs/grants.md): with CU_GRANTS=enforce, the
// pointer and keyboard reach only windows of the applications request_access
// granted. Two real xterms side by side, "granted" and "other", each running
// a script that turns on xterm's any-event mouse tracking and copies what the
// terminal sends (keys as typed, every press, release and motion as
// ESC [ M b x y) to a file: what a window received is read from its own
// output, not from the server's answers. Each case runs without a window
// manager and under openbox.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/recording_xterm.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

// The scene: a 1366x768 screen, openbox or no manager, the two xterms.
struct scene {
  explicit scene(bool with_wm) : x(1366, 768), obs(x.display()) {
    if (with_wm) start_openbox(obs, wm, x.display());
    granted.emplace(obs, x.display(), "granted", 40, 60);
    other.emplace(obs, x.display(), "other", 700, 60);
  }
  xvfb x;
  x_observer obs;
  std::optional<background_program> wm;
  std::optional<recording_xterm> granted, other;
};

const std::map<std::string, std::string> kEnforce = {{"CU_GRANTS", "enforce"}};

// A coordinate session, so clicks have an image to refer to.
void start(server_process& s) { ok_call(s, "screenshot"); }

void grant(server_process& s, const std::string& apps_json) {
  ok_call(s, "request_access", R"({"apps":)" + apps_json + R"(,"reason":"test"})");
}

// Grants other, clicks it and waits for that click to reach it: everything
// the server sent before has reached the xterm by then.
void barrier_click(scene& sc, server_process& s) {
  grant(s, R"(["granted","other"])");
  ok_call(s, "left_click", R"({"coordinate":)" + centre_of(sc.obs, sc.other->window()) + "}");
  sc.other->wait_for([](const std::vector<sent>& r) { return releases(r) >= 1; },
                     "the barrier click to reach the other xterm");
}

}  // namespace

TEST_CASE("pointer input on a window not granted is refused with nothing pressed, and none reaches it") {
  const bool with_wm = GENERATE(false, true);
  INFO((with_wm ? "under openbox" : "without a window manager"));
  scene sc(with_wm);
  server_process s(sc.x.display(), kEnforce);
  start(s);
  const json_ptr access =
      ok_call(s, "request_access", R"({"apps":["granted"],"reason":"test"})");
  CHECK(contains(text_of(*access), R"("grantedApplications":["granted"])"));
  CHECK(contains(text_of(*access), R"("screenshotFiltering":true)"));

  const std::string other = centre_of(sc.obs, sc.other->window());
  const std::string granted = centre_of(sc.obs, sc.granted->window());
  const auto pointer_before = pointer_at(sc.obs);
  for (const char* tool : {"left_click", "right_click", "middle_click", "double_click",
                           "triple_click", "mouse_move", "left_mouse_down"}) {
    INFO(tool);
    const std::string text = error_text(s, tool, R"({"coordinate":)" + other + "}");
    CHECK(contains(text, "was refused"));
    CHECK(contains(text, R"(a window of "other", which is not granted)"));
    CHECK(contains(text, R"(request_access with apps ["other"])"));
    CHECK(pointer_at(sc.obs) == pointer_before);
    check_nothing_held(sc.obs);
  }
  CHECK(contains(error_text(s, "scroll",
                            R"({"coordinate":)" + other +
                                R"(,"scroll_direction":"down","scroll_amount":3})"),
                 "the scroll was refused"));
  CHECK(contains(error_text(s, "left_click_drag",
                            R"({"start_coordinate":)" + granted + R"(,"coordinate":)" + other + "}"),
                 "the drag's end was refused"));
  CHECK(contains(error_text(s, "left_click_drag",
                            R"({"start_coordinate":)" + other + R"(,"coordinate":)" + granted + "}"),
                 "the drag's start was refused"));
  CHECK(pointer_at(sc.obs) == pointer_before);
  check_nothing_held(sc.obs);

  // The granted one takes a click.
  ok_call(s, "left_click", R"({"coordinate":)" + granted + "}");
  sc.granted->wait_for([](const std::vector<sent>& r) { return releases(r) >= 1; },
                       "the click to reach the granted xterm");
  // A left_mouse_up moved onto the other window releases where it is, and is refused.
  ok_call(s, "left_mouse_down", R"({"coordinate":)" + granted + "}");
  CHECK(contains(error_text(s, "left_mouse_up", R"({"coordinate":)" + other + "}"),
                 "the release was refused"));
  check_nothing_held(sc.obs);

  barrier_click(sc, s);
  const std::vector<sent> got = sc.other->received();
  INFO("the other xterm received " << got.size() << " reports");
  CHECK(presses(got) == 1);
  CHECK(releases(got) == 1);
  CHECK(keys_of(got).empty());
  const std::vector<sent> mine = sc.granted->received();
  CHECK(presses(mine) == 2);
  CHECK(releases(mine) == 2);
}

TEST_CASE("keys and typing are refused while the focus is on a window not granted") {
  const bool with_wm = GENERATE(false, true);
  INFO((with_wm ? "under openbox" : "without a window manager"));
  scene sc(with_wm);
  server_process s(sc.x.display(), kEnforce);
  start(s);
  grant(s, R"(["granted"])");

  sc.obs.set_input_focus(sc.other->window());
  for (auto [tool, args] : std::vector<std::pair<const char*, const char*>>{
           {"type", R"({"text":"abc"})"},
           {"key", R"({"text":"a"})"},
           {"hold_key", R"({"text":"a","duration":0.1})"}}) {
    INFO(tool);
    const std::string text = error_text(s, tool, args);
    CHECK(contains(text, R"(the keyboard focus is on a window of "other")"));
    CHECK(contains(text, R"(request_access with apps ["other"])"));
    check_nothing_held(sc.obs);
  }

  sc.obs.set_input_focus(sc.granted->window());
  ok_call(s, "type", R"({"text":"hi"})");
  sc.granted->wait_for([](const std::vector<sent>& r) { return keys_of(r) == "hi"; },
                       "the granted xterm to get the typing");

  // The barrier: other granted and typed into; what it got before is nothing.
  grant(s, R"(["other"])");
  sc.obs.set_input_focus(sc.other->window());
  ok_call(s, "type", R"({"text":"Z"})");
  sc.other->wait_for([](const std::vector<sent>& r) { return !keys_of(r).empty(); },
                     "the other xterm to get the barrier's typing");
  CHECK(keys_of(sc.other->received()) == "Z");
}

TEST_CASE("system key combos need the systemKeyCombos grant while grants are enforced") {
  scene sc(false);
  server_process s(sc.x.display(), kEnforce);
  start(s);
  grant(s, R"(["granted"])");
  sc.obs.set_input_focus(sc.granted->window());
  for (const char* combo : {"alt+tab", "super", "super+e", "ctrl+alt+t", "alt+F4", "ctrl+Escape",
                            "Print", "ctrl+alt+Delete"}) {
    INFO(combo);
    const std::string text =
        error_text(s, "key", std::string(R"({"text":")") + combo + R"("})");
    CHECK(contains(text, "system key combo"));
    CHECK(contains(text, "systemKeyCombos: true"));
    // A click holding one, and a hold of one, alike.
    CHECK(contains(error_text(s, "hold_key",
                              std::string(R"({"text":")") + combo + R"(","duration":0.1})"),
                   "systemKeyCombos"));
  }
  CHECK(contains(error_text(s, "left_click",
                            R"({"coordinate":)" + centre_of(sc.obs, sc.granted->window()) +
                                R"(,"text":"super"})"),
                 "systemKeyCombos"));
  check_nothing_held(sc.obs);
  // Ordinary chords are not system combos.
  ok_call(s, "key", R"({"text":"ctrl+a shift+Tab alt+b"})");
  ok_call(s, "request_access", R"({"apps":[],"reason":"test","systemKeyCombos":true})");
  ok_call(s, "key", R"({"text":"ctrl+alt+u"})");
  check_nothing_held(sc.obs);
  sc.granted->wait_for([](const std::vector<sent>& r) { return keys_of(r).size() >= 4; },
                       "the granted xterm to get the keys");
}

TEST_CASE("a batch stops at the step a grant refuses, and the steps after it never run") {
  const bool with_wm = GENERATE(false, true);
  INFO((with_wm ? "under openbox" : "without a window manager"));
  scene sc(with_wm);
  server_process s(sc.x.display(), kEnforce);
  start(s);
  grant(s, R"(["granted"])");
  const std::string granted = centre_of(sc.obs, sc.granted->window());
  const std::string other = centre_of(sc.obs, sc.other->window());
  const json_ptr r = s.call_tool(
      "computer_batch",
      R"({"actions":[{"name":"left_click","arguments":{"coordinate":)" + granted +
          R"(}},{"name":"left_click","arguments":{"coordinate":)" + other +
          R"(}},{"name":"left_click","arguments":{"coordinate":)" + granted + R"(}}]})");
  INFO(r->text.substr(0, 1500));
  REQUIRE(is_error(*r));
  CHECK(contains(text_of(*r), R"("succeeded":1,"failed":1,"skipped":1,"stopped_at":1)"));
  CHECK(contains(r->text, R"(a window of \"other\", which is not granted)"));
  barrier_click(sc, s);
  CHECK(presses(sc.other->received()) == 1);
  CHECK(presses(sc.granted->received()) == 1);
}

TEST_CASE("the operator's deny list beats request_access, enforcing or not") {
  const bool enforce = GENERATE(false, true);
  INFO((enforce ? "CU_GRANTS=enforce" : "CU_GRANTS=open"));
  scene sc(false);
  std::map<std::string, std::string> env = {{"CU_DENY_APPS", " Other ,keepassxc"}};
  if (enforce) env["CU_GRANTS"] = "enforce";
  server_process s(sc.x.display(), env);
  start(s);
  const json_ptr access =
      ok_call(s, "request_access", R"({"apps":["granted","other"],"reason":"test"})");
  CHECK(contains(text_of(*access), R"("grantedApplications":["granted"])"));
  CHECK(contains(text_of(*access), R"("deniedApplications":["other"])"));
  CHECK(contains(text_of(*access), R"("screenshotFiltering":true)"));
  const std::string text = error_text(
      s, "left_click", R"({"coordinate":)" + centre_of(sc.obs, sc.other->window()) + "}");
  CHECK(contains(text, "CU_DENY_APPS"));
  ok_call(s, "left_click", R"({"coordinate":)" + centre_of(sc.obs, sc.granted->window()) + "}");
  sc.granted->wait_for([](const std::vector<sent>& r) { return releases(r) >= 1; },
                       "the click to reach the granted xterm");
  CHECK(presses(sc.other->received()) == 0);
}

TEST_CASE("the desktop takes input when enforcing unless CU_GRANTS_DESKTOP=deny") {
  scene sc(false);
  // The screen's lower part holds no window: the root is there.
  {
    server_process s(sc.x.display(), kEnforce);
    start(s);
    ok_call(s, "left_click", R"({"coordinate":[600,700]})");
  }
  server_process s(sc.x.display(), {{"CU_GRANTS", "enforce"}, {"CU_GRANTS_DESKTOP", "deny"}});
  start(s);
  CHECK(contains(error_text(s, "left_click", R"({"coordinate":[600,700]})"),
                 "its point is on the desktop"));
  check_nothing_held(sc.obs);
}

TEST_CASE("open grants, the default, refuse nothing") {
  scene sc(false);
  server_process s(sc.x.display());
  start(s);
  const json_ptr access = ok_call(s, "request_access", R"({"apps":[],"reason":"test"})");
  CHECK(contains(text_of(*access), R"("screenshotFiltering":false)"));
  ok_call(s, "left_click", R"({"coordinate":)" + centre_of(sc.obs, sc.other->window()) + "}");
  sc.other->wait_for([](const std::vector<sent>& r) { return releases(r) >= 1; },
                     "the click to reach the other xterm");
}

TEST_CASE("the operator's allow list is all request_access grants, and a policy file pre-approves grants") {
  scene sc(false);
  {
    // CU_ALLOW_APPS: the agent cannot grant itself anything else.
    server_process s(sc.x.display(), {{"CU_GRANTS", "enforce"}, {"CU_ALLOW_APPS", "Granted"}});
    start(s);
    const json_ptr access =
        ok_call(s, "request_access", R"({"apps":["granted","other"],"reason":"test"})");
    CHECK(contains(text_of(*access), R"("grantedApplications":["granted"])"));
    CHECK(contains(text_of(*access), R"("deniedApplications":["other"])"));
    CHECK(contains(error_text(s, "left_click",
                              R"({"coordinate":)" + centre_of(sc.obs, sc.other->window()) + "}"),
                   "not granted"));
  }
  // CU_GRANTS_FILE: an allow list, a deny list and grants approved from the
  // start, for an unattended run that never calls request_access.
  const std::string dir = temp_dir();
  const std::string policy = dir + "/policy.json";
  {
    std::ofstream out(policy);
    out << R"({"allow":["granted","mousepad"],"deny":["other"],)"
           R"("approved":{"apps":["granted"],"clipboardRead":true}})";
  }
  {
    server_process s(sc.x.display(), {{"CU_GRANTS", "enforce"}, {"CU_GRANTS_FILE", policy}});
    start(s);
    const json_ptr listed = ok_call(s, "list_granted_applications");
    CHECK(contains(text_of(*listed), R"("applications":["granted"])"));
    CHECK(contains(text_of(*listed), R"("clipboardRead":true)"));
    ok_call(s, "left_click", R"({"coordinate":)" + centre_of(sc.obs, sc.granted->window()) + "}");
    sc.granted->wait_for([](const std::vector<sent>& r) { return releases(r) >= 1; },
                         "the pre-approved click to reach the granted xterm");
    CHECK(contains(error_text(s, "left_click",
                              R"({"coordinate":)" + centre_of(sc.obs, sc.other->window()) + "}"),
                   "CU_DENY_APPS"));
    const json_ptr access =
        ok_call(s, "request_access", R"({"apps":["other","xterm","mousepad"],"reason":"test"})");
    CHECK(contains(text_of(*access), R"("grantedApplications":["granted","mousepad"])"));
    CHECK(contains(text_of(*access), R"("deniedApplications":["other","xterm"])"));
  }
  CHECK(presses(sc.other->received()) == 0);
  // A policy file that cannot be what the operator meant stops the server.
  for (auto [content, says] : std::vector<std::pair<std::string, std::string>>{
           {"{", "is not valid JSON"},
           {R"({"allow":"granted"})", "must be an array of names"},
           {R"({"alow":["granted"]})", "unknown key \"alow\""},
           {R"({"deny":["x"],"approved":{"apps":["x"]}})", "is approved and denied"},
           {R"({"allow":["a"],"approved":{"apps":["b"]}})", "is approved but not allowed"},
           {R"({"approved":{"clipboardRead":"yes"}})", "must be true or false"}}) {
    INFO(content);
    {
      std::ofstream out(policy);
      out << content;
    }
    server_process s(sc.x.display(), {{"CU_GRANTS_FILE", policy}});
    s.expect_exit_status(2);
    REQUIRE(s.wait_exit() == 2);
    CHECK(contains(s.stderr_text(), says));
  }
  {
    server_process s(sc.x.display(), {{"CU_GRANTS_FILE", dir + "/missing.json"}});
    s.expect_exit_status(2);
    REQUIRE(s.wait_exit() == 2);
    CHECK(contains(s.stderr_text(), "cannot be read"));
  }
  const std::string cmd = "rm -rf '" + dir + "'";
  (void)!system(cmd.c_str());
}

TEST_CASE("a CU_GRANTS the server does not know stops it at start rather than run open") {
  xvfb x(640, 480);
  for (const char* var : {"CU_GRANTS", "CU_GRANTS_DESKTOP"}) {
    INFO(var);
    server_process s(x.display(), {{var, "enforced"}});
    s.expect_exit_status(2);
    REQUIRE(s.wait_exit() == 2);
    CHECK(contains(s.stderr_text(), std::string(var) + "=\"enforced\""));
  }
}

TEST_CASE("a granted GTK program's popup menu takes clicks, and the program sees them") {
  const bool with_wm = GENERATE(false, true);
  INFO((with_wm ? "under openbox" : "without a window manager"));
  xvfb x(1366, 768);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  if (with_wm) start_openbox(obs, wm, x.display());
  recording_xterm other(obs, x.display(), "other", 700, 60);
  background_program app({"/usr/bin/python3",
                          std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_popup.py",
                          "cu-popup"},
                         x.display());
  xcb_window_t w = XCB_NONE;
  wait_until([&] { return contains(app.log(), "ready") && (w = obs.client_named("cu-popup")); },
             "the GTK program's window");
  server_process s(x.display(), kEnforce);
  start(s);
  grant(s, R"(["cu-popup"])");
  const area a = x_area(obs, w);
  // A right-click in the program's window pops its menu, an override-redirect
  // window that GTK names after the program.
  ok_call(s, "right_click",
          R"({"coordinate":[)" + std::to_string(a.x + 60) + "," + std::to_string(a.y + 60) + "]}");
  wait_until([&] { return contains(app.log(), "menu-shown"); }, "the menu to be shown");
  // The menu opens at the pointer, its first item just below and right of it.
  ok_call(s, "left_click",
          R"({"coordinate":[)" + std::to_string(a.x + 90) + "," + std::to_string(a.y + 70) + "]}");
  wait_until([&] { return contains(app.log(), "activated First"); },
             "the program to see its menu item chosen");
  // The xterm beside it stays out of reach.
  CHECK(contains(error_text(s, "left_click",
                            R"({"coordinate":)" + centre_of(obs, other.window()) + "}"),
                 R"(a window of "other")"));
}

TEST_CASE("the clipboard an application not granted owns is not read") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  background_program app({"/usr/bin/python3",
                          std::string(getenv("CU_SOURCE_DIR")) + "/tests/x11/data/gtk_popup.py",
                          "cu-secret", "--copy", "hunter2"},
                         x.display());
  wait_until([&] { return contains(app.log(), "ready"); }, "the GTK program to own the clipboard");
  server_process s(x.display(), kEnforce);
  ok_call(s, "request_access", R"({"apps":["granted"],"reason":"test","clipboardRead":true})");
  const std::string text = error_text(s, "read_clipboard");
  CHECK(contains(text, "read_clipboard was refused"));
  CHECK(contains(text, R"(a window of "cu-secret")"));
  CHECK_FALSE(contains(text, "hunter2"));
  grant(s, R"(["cu-secret"])");
  const json_ptr r = ok_call(s, "read_clipboard");
  CHECK(contains(text_of(*r), "hunter2"));
}
