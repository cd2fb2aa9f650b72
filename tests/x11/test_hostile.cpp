// A hostile agent against the grants (docs/grants.md, "Attacks tested"):
// each case is an attack an agent can make with the tools alone, and
// checks its effect outside the server: the bytes a denied xterm's
// terminal got, the events a denied window received, the X server still
// there, pixels, a file's bytes. Real xterms named with -name (the
// application "granted", "other" or "mail") record what their windows
// receive (support/recording_xterm.h); small xcb clients make the windows
// a hostile program would: docks, nameless popups, flickering
// override-redirect windows, a window id reused.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xcb/shape.h>
#include <xcb/xcb.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/batch.h"
#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/recording_xterm.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kEnforce = {{"CU_GRANTS", "enforce"}};

void grant(server_process& s, const std::string& apps_json) {
  ok_call(s, "request_access", R"({"apps":)" + apps_json + R"(,"reason":"test"})");
}

// The X server answers a round trip, and its process is there.
void check_server_alive(const xvfb& x, x_observer& obs) {
  CHECK(::kill(x.pid(), 0) == 0);
  obs.sync();
  CHECK(xcb_connection_has_error(obs.connection()) == 0);
}

// Whether the keycode of keysym-less modifier name ("Alt_L") is down.
bool any_key_down(x_observer& obs) {
  auto* c = obs.connection();
  xcb_query_keymap_reply_t* k = xcb_query_keymap_reply(c, xcb_query_keymap(c), nullptr);
  REQUIRE(k != nullptr);
  bool down = false;
  for (uint8_t b : k->keys) down = down || b != 0;
  free(k);
  return down;
}

// A refused batch's texts, its summary and its failed step's, together.
std::string batch_error(server_process& s, const std::string& args) {
  json_ptr r = s.call_tool("computer_batch", args);
  REQUIRE(r);
  REQUIRE(is_error(*r));
  std::string out;
  for (size_t i = 0; i < 4; ++i) out += text_of(*r, i) + "\n";
  return out;
}

std::string call_line(const std::string& id, const std::string& tool, const std::string& args) {
  return R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"tools/call","params":{"name":")" +
         tool + R"(","arguments":)" + args + "}}";
}

void set_class(xcb_connection_t* c, xcb_window_t w, const std::string& name) {
  const std::string cls = name + '\0' + name + '\0';
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8,
                      uint32_t(cls.size()), cls.data());
}

xcb_atom_t intern(xcb_connection_t* c, const char* name) {
  xcb_intern_atom_reply_t* r =
      xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, uint16_t(strlen(name)), name), nullptr);
  REQUIRE(r != nullptr);
  xcb_atom_t a = r->atom;
  free(r);
  return a;
}

// A window of a hostile client: override-redirect (no manager needed),
// filled with colour, selecting the button presses it gets.
xcb_window_t hostile_window(x_client& cl, int x, int y, int w, int h, rgb colour,
                            bool map = true) {
  xcb_connection_t* c = cl.connection();
  xcb_window_t win = xcb_generate_id(c);
  const uint32_t values[] = {cl.screen()->black_pixel, 1,
                             XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_KEY_PRESS |
                                 XCB_EVENT_MASK_EXPOSURE};
  xcb_create_window(c, XCB_COPY_FROM_PARENT, win, cl.screen()->root, int16_t(x), int16_t(y),
                    uint16_t(w), uint16_t(h), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                    cl.screen()->root_visual,
                    XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
  if (map) {
    xcb_map_window(c, win);
    cl.sync();
    cl.fill(win, 0, 0, w, h, colour);
  }
  cl.sync();
  return win;
}

// A hostile window (as above) named name by its WM_CLASS before it is
// mapped, filled with colour.
xcb_window_t named_window(x_client& cl, int x, int y, int w, int h, rgb colour,
                          const std::string& name) {
  xcb_window_t win = hostile_window(cl, x, y, w, h, colour, false);
  set_class(cl.connection(), win, name);
  xcb_map_window(cl.connection(), win);
  cl.sync();
  cl.fill(win, 0, 0, w, h, colour);
  cl.sync();
  return win;
}

// How many button presses the client's windows have been sent so far.
int presses_received(x_client& cl) {
  cl.sync();
  int n = 0;
  while (xcb_generic_event_t* ev = xcb_poll_for_event(cl.connection())) {
    if ((ev->response_type & 0x7f) == XCB_BUTTON_PRESS) ++n;
    free(ev);
  }
  return n;
}

bool all_black(const rgb_image& img, int x0, int y0, int x1, int y1);

// Whether a screenshot through s is black from (x0, y0) to (x1, y1).
bool shows_nothing(server_process& s, int x0, int y0, int x1, int y1) {
  json_ptr shot = s.call_tool("screenshot");
  REQUIRE(shot);
  REQUIRE_FALSE(is_error(*shot));
  return all_black(image_of(*shot), x0, y0, x1, y1);
}

// The names in dir, sorted, joined by spaces; empty when none.
std::string read_file_list(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// Types "ok" into term (which holds the focus) through s and waits for
// it: the keys term had received, the barrier's included, once it came.
std::string after_barrier(server_process& s, const recording_xterm& term) {
  ok_call(s, "type", R"({"text":"ok"})");
  term.wait_for(
      [](const std::vector<sent>& r) { return keys_of(r).find("ok") != std::string::npos; },
      "the barrier's typing");
  return keys_of(term.received());
}

// The look number of a screenshot made with the marks toolset.
int64_t look_of(const json_line& r) {
  simdjson::dom::element e;
  REQUIRE(r.root["result"]["structuredContent"].get(e) == simdjson::SUCCESS);
  return num(e, "look");
}

// Whether any image of the answer has a pixel of colour c.
bool any_image_has(const json_line& r, rgb c) {
  simdjson::dom::array content;
  REQUIRE(r.root["result"]["content"].get(content) == simdjson::SUCCESS);
  for (simdjson::dom::element b : content) {
    std::string_view type, data, mime;
    if (b["type"].get(type) != simdjson::SUCCESS || type != "image") continue;
    REQUIRE(b["data"].get(data) == simdjson::SUCCESS);
    REQUIRE(b["mimeType"].get(mime) == simdjson::SUCCESS);
    const rgb_image img = mime == "image/png" ? decode_png_base64(data) : decode_jpeg_base64(data);
    // Near it: a JPEG moves colours a little.
    auto near = [](int a, int b) { return std::abs(a - b) <= 24; };
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) {
        const rgb p = img.at(x, y);
        if (near(p[0], c[0]) && near(p[1], c[1]) && near(p[2], c[2])) return true;
      }
    }
  }
  return false;
}

bool all_black(const rgb_image& img, int x0, int y0, int x1, int y1) {
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      if (img.at(x, y) != rgb{0, 0, 0}) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("keys that reach the X server itself are never sent, in any mode, split across calls or not") {
  const std::string mode = GENERATE("open", "enforce");
  INFO("CU_GRANTS=" << mode);
  xvfb x(1366, 768);
  x_observer obs(x.display());
  recording_xterm term(obs, x.display(), "granted", 40, 60);
  obs.set_input_focus(term.window());
  server_process s(x.display(), {{"CU_GRANTS", mode}});
  ok_call(s, "screenshot");
  grant(s, R"(["granted"])");
  for (const char* keys :
       {"Terminate_Server", "XF86LogGrabInfo", "XF86LogWindowTree", "XF86Next_VMode",
        "XF86Prev_VMode", "XF86Switch_VT_2", "XF86Ungrab", "XF86ClearGrab", "Pointer_Button1",
        "Pointer_EnableKeys", "MouseKeys_Enable", "StickyKeys_Enable", "ctrl+alt+BackSpace",
        "ctrl+alt+F1", "ctrl+alt+F12", "ctrl+alt+KP_Multiply", "ctrl+alt+KP_Divide",
        "ctrl+alt+KP_Add", "ctrl+alt+KP_Subtract", "shift+Terminate_Server", "a Terminate_Server"}) {
    INFO(keys);
    const std::string k = std::string(R"({"text":")") + keys + "\"";
    CHECK(contains(error_text(s, "key", k + "}"), "never sends it"));
    CHECK(contains(error_text(s, "hold_key", k + R"(,"duration":0.2})"), "never sends it"));
    CHECK(is_error(*s.call_tool("left_click", R"({"coordinate":[700,600],)" + k.substr(1) + "}")));
    CHECK(contains(batch_error(s,
                              R"({"actions":[{"name":"key","arguments":)" + k + "}}]}"),
                   "never sends it"));
  }
  // Split across calls: Ctrl+Alt held by one, BackSpace and F1 from others
  // while it lasts (open mode has no systemKeyCombos to ask for).
  if (mode == "open") {
    s.send(call_line("hold", "hold_key", R"({"text":"ctrl+alt","duration":3})"));
    wait_until([&] { return any_key_down(obs); }, "ctrl+alt to be held");
    for (const char* k : {"BackSpace", "F1", "KP_Multiply", "KP_Divide"}) {
      INFO(k);
      CHECK(contains(error_text(s, "key", std::string(R"({"text":")") + k + "\"}"),
                     "never sends them"));
    }
    json_ptr hold = s.read_response("\"hold\"", 10000);
    REQUIRE(hold);
    CHECK_FALSE(is_error(*hold));
  }
  check_server_alive(x, obs);
  check_nothing_held(obs);
  // Nothing typed reached the terminal: the barrier is the only text.
  CHECK(after_barrier(s, term) == "ok");
}

TEST_CASE("a click's or scroll's text takes modifiers only: no keys reach the focused window through it") {
  // The focus is on a denied terminal; the clicks are on the desktop,
  // which is allowed. Keys in their text would go to the terminal.
  xvfb x(1366, 768);
  x_observer obs(x.display());
  recording_xterm mail(obs, x.display(), "mail", 40, 60);
  obs.set_input_focus(mail.window());
  server_process s(x.display(), {{"CU_DENY_APPS", "mail"}});
  ok_call(s, "screenshot");
  for (const char* text : {"t", "space", "slash", "Return", "ctrl+t", "shift+a", "shift t",
                           "BackSpace", "KP_Enter", "Escape"}) {
    INFO(text);
    const std::string t = std::string(R"("text":")") + text + "\"";
    for (const char* tool : {"left_click", "right_click", "double_click", "middle_click",
                             "triple_click"}) {
      CHECK(contains(error_text(s, tool, R"({"coordinate":[1200,700],)" + t + "}"),
                     "modifier keys only"));
    }
    CHECK(contains(error_text(s, "scroll",
                              R"({"coordinate":[1200,700],"scroll_direction":"down","scroll_amount":1,)" +
                                  t + "}"),
                   "modifier keys only"));
    CHECK(contains(batch_error(s,
                              R"({"actions":[{"name":"left_click","arguments":{"coordinate":[1200,700],)" +
                                  t + "}}]}"),
                   "modifier keys only"));
  }
  // Modifiers are still modifiers.
  ok_call(s, "left_click", R"({"coordinate":[1200,700],"text":"shift"})");
  ok_call(s, "left_click", R"({"coordinate":[1200,700],"text":"ctrl+lshift+altgr"})");
  check_nothing_held(obs);
  // The barrier: another server, without the deny list, types into the
  // terminal; what it got before is nothing.
  server_process open(x.display());
  obs.set_input_focus(mail.window());
  ok_call(open, "type", R"({"text":"Z"})");
  mail.wait_for([](const std::vector<sent>& r) { return !keys_of(r).empty(); },
                "the barrier's typing");
  CHECK(keys_of(mail.received()) == "Z");
}

TEST_CASE("each key is judged as it goes out: a focus that moves to a window not granted mid-call stops the call there") {
  const bool with_wm = GENERATE(false, true);
  INFO((with_wm ? "under openbox" : "without a window manager"));
  xvfb x(1366, 768);
  x_observer obs(x.display());
  std::optional<background_program> wm;
  if (with_wm) start_openbox(obs, wm, x.display());
  recording_xterm granted(obs, x.display(), "granted", 40, 60);
  recording_xterm other(obs, x.display(), "other", 700, 60);
  // A pace a test can act within: 2000 characters take 10 s at least.
  server_process s(x.display(), {{"CU_GRANTS", "enforce"}, {"CU_TYPE_DELAY_MS", "5"}});
  ok_call(s, "screenshot");
  grant(s, R"(["granted"])");

  for (const std::string tool : {"type", "key"}) {
    INFO(tool);
    obs.set_input_focus(granted.window());
    const size_t before = keys_of(granted.received()).size();
    if (tool == "type") {
      s.send(call_line("long", "type", R"({"text":")" + std::string(2000, 'a') + "\"}"));
    } else {
      s.send(call_line("long", "key", R"({"text":"a","repeat":1000})"));
    }
    granted.wait_for([&](const std::vector<sent>& r) { return keys_of(r).size() >= before + 10; },
                     "the first keys to reach the granted terminal");
    obs.set_input_focus(other.window());
    json_ptr r = s.read_response("\"long\"", 30000);
    REQUIRE(r);
    REQUIRE(is_error(*r));
    const std::string text = text_of(*r);
    INFO(text);
    CHECK(contains(text, tool == "type" ? "keystroke(s), then: typing was refused"
                                        : "chord(s), then: pressing keys was refused"));
    CHECK(contains(text, R"(the keyboard focus is on a window of "other")"));
    check_nothing_held(obs);
  }
  // The barrier: other granted and typed into; what it got before is nothing.
  grant(s, R"(["other"])");
  obs.set_input_focus(other.window());
  ok_call(s, "type", R"({"text":"Z"})");
  other.wait_for([](const std::vector<sent>& r) { return !keys_of(r).empty(); },
                 "the barrier's typing");
  CHECK(keys_of(other.received()) == "Z");
}

TEST_CASE("system key combos split across hold_key and key are judged with everything held") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  recording_xterm granted(obs, x.display(), "granted", 40, 60);
  obs.set_input_focus(granted.window());
  server_process s(x.display(), kEnforce);
  ok_call(s, "screenshot");
  grant(s, R"(["granted"])");
  for (auto [held, then] : std::vector<std::pair<const char*, const char*>>{
           {"alt", "Tab"}, {"ctrl", "alt+t"}, {"alt", "F4"}, {"ctrl+shift", "Escape"},
           {"alt", "space"}}) {
    INFO(held << " held, then " << then);
    s.send(call_line("hold", "hold_key", std::string(R"({"text":")") + held +
                                             R"(","duration":2})"));
    wait_until([&] { return any_key_down(obs); }, "the hold");
    const std::string text = error_text(s, "key", std::string(R"({"text":")") + then + "\"}");
    CHECK(contains(text, "system key combo"));
    CHECK(contains(text, "systemKeyCombos: true"));
    // A click's modifiers alike.
    if (std::string(held) == "alt") {
      CHECK(contains(error_text(s, "left_click", R"({"coordinate":)" +
                                                    centre_of(obs, granted.window()) +
                                                    R"(,"text":"ctrl"})"),
                     "system key combo"));
    }
    json_ptr hold = s.read_response("\"hold\"", 10000);
    REQUIRE(hold);
    CHECK_FALSE(is_error(*hold));
    check_nothing_held(obs);
  }
  // No key but the barrier reached the terminal (a Tab, an ESC, a 't').
  CHECK(after_barrier(s, granted) == "ok");
}

TEST_CASE("a denied program's window typed a dock is still denied") {
  // Class names in other cases than the deny list's, and both types that
  // make a window part of the desktop.
  const auto [name, kind] = GENERATE(std::pair<const char*, const char*>{"mail", "DOCK"},
                                     std::pair<const char*, const char*>{"Mail", "DESKTOP"},
                                     std::pair<const char*, const char*>{"keepassxc", "DOCK"});
  INFO(name << " typed " << kind);
  xvfb x(1366, 768);
  x_observer obs(x.display());
  x_client mail(x.display());
  xcb_window_t dock = hostile_window(mail, 100, 100, 300, 200, {250, 40, 40}, false);
  set_class(mail.connection(), dock, name);
  const xcb_atom_t type = intern(mail.connection(), "_NET_WM_WINDOW_TYPE");
  const xcb_atom_t dock_type =
      intern(mail.connection(), (std::string("_NET_WM_WINDOW_TYPE_") + kind).c_str());
  xcb_change_property(mail.connection(), XCB_PROP_MODE_REPLACE, dock, type, XCB_ATOM_ATOM, 32, 1,
                      &dock_type);
  xcb_map_window(mail.connection(), dock);
  mail.sync();
  mail.fill(dock, 0, 0, 300, 200, {250, 40, 40});
  mail.sync();
  for (const std::string mode : {"open", "enforce"}) {
    INFO("CU_GRANTS=" << mode);
    server_process s(x.display(), {{"CU_GRANTS", mode}, {"CU_DENY_APPS", "mail,KeePassXC"}});
    CHECK(shows_nothing(s, 110, 110, 390, 290));
    CHECK(contains(error_text(s, "left_click", R"({"coordinate":[200,200]})"), "CU_DENY_APPS"));
  }
  CHECK(presses_received(mail) == 0);
}

TEST_CASE("a denied program's nameless popup stays denied under any number of windows above it") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  x_client mail(x.display());
  // The program's named window, and a popup that names nothing: it is the
  // program's by the client that made it.
  xcb_window_t named = hostile_window(mail, 0, 700, 40, 40, {10, 10, 10}, false);
  set_class(mail.connection(), named, "mail");
  xcb_map_window(mail.connection(), named);
  xcb_window_t popup = hostile_window(mail, 300, 200, 200, 150, {40, 200, 40});
  (void)popup;
  // 100 windows of another client stacked above both, away from the popup.
  x_client junk(x.display());
  for (int i = 0; i < 100; ++i) {
    xcb_window_t w = hostile_window(junk, 800 + (i % 10) * 50, 300 + (i / 10) * 40, 40, 30,
                                    {20, 20, 200}, false);
    set_class(junk.connection(), w, "junk");
    xcb_map_window(junk.connection(), w);
  }
  junk.sync();
  server_process s(x.display(), {{"CU_DENY_APPS", "mail"}});
  CHECK(shows_nothing(s, 300, 200, 500, 350));
  CHECK(contains(error_text(s, "left_click", R"({"coordinate":[400,275]})"), "CU_DENY_APPS"));
  CHECK(presses_received(mail) == 0);
}

TEST_CASE("no click lands on a denied window flickering over a granted one (the server is held from judgement to press)") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  recording_xterm granted(obs, x.display(), "granted", 40, 60);
  const std::string at = centre_of(obs, granted.window());
  const area a = x_area(obs, granted.window());
  // Pacing off: the flickering window keeps the screen from ever going
  // quiet, and each click would wait CU_PACE_MAX_MS for it.
  server_process s(x.display(), {{"CU_DENY_APPS", "mail"}, {"CU_PACE_QUIET_MS", "0"}});
  ok_call(s, "screenshot");
  // A denied override-redirect window over the terminal's centre, mapped
  // and unmapped as fast as the X server takes it.
  x_client mail(x.display());
  xcb_window_t flicker =
      hostile_window(mail, a.x + a.w / 2 - 20, a.y + a.h / 2 - 20, 40, 40, {200, 0, 0}, false);
  set_class(mail.connection(), flicker, "mail");
  mail.sync();
  std::atomic<bool> stop{false};
  std::atomic<int> cycles{0};
  std::thread flickering([&] {
    xcb_connection_t* c = mail.connection();
    // Mapped half of every 0.7 ms (the attack's own timing), each change
    // a round trip so that it has happened before the next.
    while (!stop) {
      xcb_map_window(c, flicker);
      free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr));
      std::this_thread::sleep_for(std::chrono::microseconds(350));
      xcb_unmap_window(c, flicker);
      free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr));
      std::this_thread::sleep_for(std::chrono::microseconds(350));
      ++cycles;
    }
  });
  int allowed = 0, refused = 0;
  for (int i = 0; i < 75; ++i) {
    json_ptr r = s.call_tool("left_click", R"({"coordinate":)" + at + "}");
    REQUIRE(r);
    if (is_error(*r)) {
      CHECK(contains(text_of(*r), "CU_DENY_APPS"));
      ++refused;
    } else {
      ++allowed;
    }
  }
  stop = true;
  flickering.join();
  INFO(allowed << " clicks allowed, " << refused << " refused, " << cycles << " map cycles");
  // The attack ran: the window was over the point at some judgements
  // (half of the time it is mapped; all 75 allowed would be 2^-75).
  CHECK(refused > 0);
  CHECK(presses_received(mail) == 0);
  // Every allowed click reached the terminal: its presses are counted.
  granted.wait_for([&](const std::vector<sent>& r) { return presses(r) >= allowed; },
                   "the allowed clicks to reach the terminal");
  check_nothing_held(obs);
}

TEST_CASE("trace parts are never opened through a planted link, and a directory others can write is refused") {
  xvfb x(640, 480);
  char tmpl[] = "/tmp/cu-hostile-trace-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string victim = dir + "-victim";
  {
    int fd = ::open(victim.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "precious", 8) == 8);
    ::close(fd);
  }
  {
    server_process s(x.display(), {{"CU_TRACE_DIR", dir}, {"CU_TRACE_MAX_BYTES", "65536"},
                                   {"CU_IMAGE_FORMAT", "png"}});
    ok_call(s, "screenshot");
    // The first part is there; a link planted at every later part's name.
    std::string first;
    wait_until([&] {
      std::string out = read_file_list(dir);
      if (out.empty()) return false;
      first = out;
      return true;
    }, "the first trace part");
    REQUIRE(first.ends_with(".html"));
    const std::string stem = first.substr(0, first.size() - 5);
    for (int part = 2; part <= 6; ++part) {
      const std::string link = dir + "/" + stem + "." + std::to_string(part) + ".html";
      REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
    }
    x_client painter(x.display());
    xcb_window_t w = painter.create_window(0, 0, 640, 480, {0, 0, 0});
    for (uint32_t i = 0; i < 12; ++i) {
      painter.paint_noise(w, 640, 480, i + 1);
      ok_call(s, "screenshot");
    }
  }
  CHECK(read_file(victim) == "precious");
  // Group- or world-writable: refused, nothing written there.
  const std::string open_dir = dir + "-open";
  REQUIRE(mkdir(open_dir.c_str(), 0700) == 0);
  REQUIRE(chmod(open_dir.c_str(), 0777) == 0);
  {
    server_process s(x.display(), {{"CU_TRACE_DIR", open_dir}});
    ok_call(s, "screenshot");
    CHECK(contains(s.stderr_text(), "refusing the trace directory"));
  }
  CHECK(read_file_list(open_dir).empty());
  const std::string cmd = "rm -rf '" + dir + "' '" + victim + "' '" + open_dir + "'";
  (void)!system(cmd.c_str());
}

TEST_CASE("_meta that is not an object is refused, not served as a legacy request") {
  xvfb x(640, 480);
  server_process s(x.display());
  for (const char* meta : {"null", "[]", "\"x\"", "1", "true"}) {
    INFO(meta);
    s.send(std::string(R"({"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"cursor_position","arguments":{},"_meta":)") +
           meta + "}}");
    json_ptr r = s.read_response("\"m\"");
    REQUIRE(r);
    CHECK(contains(r->text, "-32602"));
    CHECK(contains(r->text, "_meta must be an object"));
  }
}

TEST_CASE("focus_window by app never matches the words of a withheld title") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  x_client mail(x.display());
  xcb_window_t w = mail.create_app_window(100, 100, 300, 200, {200, 200, 40});
  set_class(mail.connection(), w, "mail");
  const std::string title = "quarterly secret plans";
  xcb_change_property(mail.connection(), XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME,
                      XCB_ATOM_STRING, 8, uint32_t(title.size()), title.data());
  mail.sync();
  for (const std::string mode : {"enforce", "open"}) {
    INFO("CU_GRANTS=" << mode);
    server_process s(x.display(), {{"CU_GRANTS", mode}, {"CU_DENY_APPS", "mail"},
                                   {"CU_TOOLSETS", "windows"}});
    // Words of the title and a word that is nowhere get the same answer
    // (open_application's, refused or not found, with the word in it).
    auto answer = [&](const char* tool, const std::string& word) {
      json_ptr r = s.call_tool(tool, R"({"app":")" + word + "\"}");
      REQUIRE(r);
      std::string text = (is_error(*r) ? "error: " : "ok: ") + text_of(*r);
      for (size_t at; (at = text.find(word)) != std::string::npos;) text.replace(at, word.size(), "WORD");
      return text;
    };
    const std::string focus_none = answer("focus_window", "zzzz");
    const std::string open_none = answer("open_application", "zzzz");
    CHECK(contains(focus_none, "no window matches"));
    for (const char* word : {"secret", "plans", "quarterly secret plans"}) {
      INFO(word);
      CHECK(answer("focus_window", word) == focus_none);
      CHECK(answer("open_application", word) == open_none);
    }
    // Its application's name is no secret: refused by it, as before.
    CHECK(contains(error_text(s, "focus_window", R"({"app":"mail"})"), "CU_DENY_APPS"));
  }
}

TEST_CASE("open_application of a wrapper that runs a denied program ends what it started") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  // uxterm is a shell script that runs xterm: its name says nothing of
  // what it runs until xterm's window shows.
  server_process s(x.display(), {{"CU_DENY_APPS", "xterm"}});
  const std::string text = error_text(s, "open_application", R"({"app":"uxterm"})");
  INFO(text);
  CHECK(contains(text, "CU_DENY_APPS"));
  CHECK(contains(text, "was ended with its process group"));
  const size_t at = text.find("pid ");
  REQUIRE(at != std::string::npos);
  const pid_t pid = pid_t(std::stol(text.substr(at + 4)));
  wait_until([&] { return ::kill(pid, 0) != 0; }, "the started program to be gone");
  wait_until([&] { return obs.windows_with_class("XTerm").empty(); }, "xterm's window to go");
}

TEST_CASE("open_application of a link to, or a script run by, a denied program starts nothing") {
  xvfb x(1366, 768);
  char tmpl[] = "/tmp/cu-hostile-launch-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string bin = dir + "/bin", real = dir + "/real";
  REQUIRE(mkdir(bin.c_str(), 0755) == 0);
  REQUIRE(mkdir(real.c_str(), 0755) == 0);
  auto write_program = [](const std::string& path, const std::string& text) {
    FILE* f = fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    fputs(text.c_str(), f);
    fclose(f);
    REQUIRE(chmod(path.c_str(), 0755) == 0);
  };
  // "inbox" is a link to a program whose file is called "mail"; "notes" a
  // Python script; "memo" the same through env -S. Each leaves a file
  // behind if it ever runs.
  write_program(real + "/mail", "#!/bin/sh\ntouch '" + dir + "/ran-mail'\n");
  REQUIRE(symlink((real + "/mail").c_str(), (bin + "/inbox").c_str()) == 0);
  write_program(bin + "/notes",
                "#!/usr/bin/python3\nopen('" + dir + "/ran-notes', 'w').close()\n");
  write_program(bin + "/memo",
                "#!/usr/bin/env -S python3 -u\nopen('" + dir + "/ran-memo', 'w').close()\n");
  const char* path = getenv("PATH");
  server_process s(x.display(), {{"CU_DENY_APPS", "mail,python3"},
                                 {"PATH", bin + ":" + (path != nullptr ? path : "/usr/bin:/bin")}});
  for (const char* app : {"inbox", "notes", "memo"}) {
    INFO(app);
    const std::string text = error_text(s, "open_application", R"({"app":")" + std::string(app) + "\"}");
    INFO(text);
    CHECK(contains(text, "CU_DENY_APPS"));
    CHECK(contains(text, "nothing was started"));
  }
  // The server answered each before starting it: none ran.
  CHECK(read_file_list(dir) == "bin real");
  const std::string cmd = "rm -rf '" + dir + "'";
  (void)!system(cmd.c_str());
}

TEST_CASE("captures identify windows afresh: a WM_CLASS changed to a denied name, and a window id reused by a denied client, are hidden") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  server_process s(x.display(), {{"CU_DENY_APPS", "mail"}});
  auto shows = [&](int x0, int y0, int x1, int y1) { return !shows_nothing(s, x0, y0, x1, y1); };
  {
    // The class changes after the server has seen the window; the program
    // draws again (the capture cache is kept only while nothing draws).
    x_client app(x.display());
    xcb_window_t w = named_window(app, 100, 100, 200, 150, {250, 40, 40}, "granted");
    CHECK(shows(110, 110, 290, 240));
    set_class(app.connection(), w, "mail");
    app.fill(w, 0, 0, 200, 150, {250, 40, 41});
    app.sync();
    CHECK_FALSE(shows(110, 110, 290, 240));
  }
  // A granted client's window, seen by the server; the client goes, and the
  // next client X accepts gets its resource base back and makes a denied
  // window with the same id at the same place.
  xcb_window_t first = XCB_NONE;
  {
    x_client granted(x.display());
    first = named_window(granted, 500, 100, 200, 150, {40, 40, 250}, "granted");
    CHECK(shows(510, 110, 690, 240));
  }
  x_client mail(x.display());
  xcb_window_t again = named_window(mail, 500, 100, 200, 150, {40, 40, 250}, "mail");
  CHECK(again == first);
  CHECK_FALSE(shows(510, 110, 690, 240));
}

TEST_CASE("a WM_CLASS turned to a denied name with no drawing is hidden from the next capture, zoom and look") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  server_process s(x.display(), {{"CU_DENY_APPS", "mail"}, {"CU_TOOLSETS", "marks"}});
  x_client app(x.display());
  xcb_window_t w = named_window(app, 100, 100, 200, 150, {250, 40, 40}, "granted");
  // Seen, kept for reuse (a screenshot and a zoom of the window's place),
  // and a look to compare the next with.
  json_ptr first = ok_call(s, "screenshot");
  CHECK_FALSE(all_black(image_of(*first), 110, 110, 290, 240));
  json_ptr zoomed = ok_call(s, "zoom", R"({"region":[100,100,300,250]})");
  CHECK_FALSE(all_black(image_of(*zoomed), 0, 0, 100, 100));
  const int64_t look = look_of(*first);
  // The class changes; nothing is drawn anywhere after that.
  set_class(app.connection(), w, "mail");
  app.sync();
  json_ptr since = ok_call(s, "screenshot", R"({"since":)" + std::to_string(look) + "}");
  // Crops of what either look hid, or the whole image: none shows the
  // window's colour.
  INFO(since->text.substr(0, 400));
  REQUIRE(image_count(*since) >= 1);
  CHECK_FALSE(any_image_has(*since, {250, 40, 40}));
  json_ptr shot = ok_call(s, "screenshot");
  CHECK(all_black(image_of(*shot), 110, 110, 290, 240));
  json_ptr zoom = ok_call(s, "zoom", R"({"region":[100,100,300,250]})");
  const rgb_image zimg = image_of(*zoom);
  CHECK(all_black(zimg, 20, 20, zimg.width - 20, zimg.height - 20));
  // And back: granted again, shown again, with no drawing either.
  set_class(app.connection(), w, "granted");
  app.sync();
  CHECK_FALSE(all_black(image_of(*ok_call(s, "screenshot")), 110, 110, 290, 240));
}

TEST_CASE("wait_for_change and wait_until_stable say nothing of what a denied window draws") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  server_process s(x.display(), {{"CU_DENY_APPS", "mail"}, {"CU_TOOLSETS", "vision"}});
  // Application windows (not override-redirect, with WM_CLASS): what a
  // watch of a window may name.
  x_client mail(x.display());
  xcb_window_t denied = mail.create_app_window(100, 100, 200, 150, {250, 40, 40});
  set_class(mail.connection(), denied, "mail");
  x_client app(x.display());
  xcb_window_t granted = app.create_app_window(600, 100, 200, 150, {40, 200, 40});
  set_class(app.connection(), granted, "granted");
  mail.sync();
  app.sync();
  ok_call(s, "screenshot");
  // A watch of the denied window itself is refused: its size and its
  // drawing are what the deny list hides.
  const std::string refused =
      error_text(s, "wait_for_change", R"({"window":")" + hex(denied) + R"(","timeout":1})");
  INFO(refused);
  CHECK(contains(refused, "was refused"));
  CHECK(contains(refused, "CU_DENY_APPS"));
  // The screen watched while only the denied window draws: no change.
  std::atomic<bool> stop{false};
  auto animate = [&] {
    x_client painter(x.display());
    for (int i = 0; !stop.load(); ++i) {
      painter.fill(denied, 0, 0, 200, 150, i % 2 ? rgb{250, 40, 40} : rgb{40, 40, 250});
      painter.sync();
      usleep(20000);  // An animation's pace, not a sync.
    }
  };
  {
    std::thread t(animate);
    json_ptr r = s.call_tool("wait_for_change", R"({"timeout":1.5})");
    json_ptr st = s.call_tool("wait_until_stable", R"({"quiet_ms":300,"timeout":5})");
    stop = true;
    t.join();
    REQUIRE(r);
    INFO(r->text);
    CHECK(is_error(*r));
    CHECK(contains(text_of(*r), "no change within"));
    REQUIRE(st);
    INFO(st->text);
    CHECK_FALSE(is_error(*st));
    CHECK(contains(st->text, R"("stable":true)"));
    CHECK(contains(st->text, R"("changed":false)"));
  }
  // Drawing in both: the change answered is the granted window's alone.
  std::vector<json_ptr> others;
  start_watching(s, "\"w\"", "wait_for_change", R"({"timeout":20})", others);
  for (int i = 0; i < 10; ++i) mail.fill(denied, 0, 0, 200, 150, i % 2 ? rgb{1, 2, 3} : rgb{3, 2, 1});
  mail.sync();
  app.fill(granted, 20, 30, 40, 50, {10, 20, 30});
  app.sync();
  json_ptr r = read_until(s, "\"w\"", others, 20000);
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  CHECK(contains(r->text, R"("device":{"x":620,"y":130,"width":40,"height":50})"));
}

TEST_CASE("a redacted trace holds no typed, held, pressed or clipboard text, in arguments, answers or errors") {
  xvfb x(640, 480);
  char tmpl[] = "/tmp/cu-hostile-redact-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  {
    server_process s(x.display(), {{"CU_TRACE_DIR", dir}, {"CU_TRACE_REDACT_TEXT", "1"}});
    ok_call(s, "screenshot");
    ok_call(s, "request_access",
            R"({"apps":[],"reason":"test","clipboardRead":true,"clipboardWrite":true})");
    // An unknown key's name, echoed by the error.
    error_text(s, "key", R"({"text":"ctrl+SECRETKEYNAME"})");
    error_text(s, "hold_key", R"({"text":"SECRETHOLD","duration":0.1})");
    // A text longer than the echo, cut short in the error.
    error_text(s, "key", R"({"text":"SECRETLONG)" + std::string(200, 'x') + "\"}");
    // Modifiers that are not, echoed by the error.
    error_text(s, "left_click", R"({"coordinate":[10,10],"text":"SECRETCLICK"})");
    // The clipboard's text, in read_clipboard's answer.
    ok_call(s, "write_clipboard", R"({"text":"SECRETCLIPBOARD"})");
    json_ptr read = ok_call(s, "read_clipboard");
    CHECK(contains(text_of(*read), "SECRETCLIPBOARD"));
    json_ptr batch = s.call_tool(
        "computer_batch", R"({"actions":[{"name":"hold_key","arguments":{"text":"SECRETBATCH","duration":0.1}}]})");
    REQUIRE(batch);
  }
  const std::string names = read_file_list(dir);
  REQUIRE_FALSE(names.empty());
  size_t at = 0;
  std::string all;
  while (at < names.size()) {
    size_t end = names.find(' ', at);
    if (end == std::string::npos) end = names.size();
    all += read_file(dir + "/" + names.substr(at, end - at));
    at = end + 1;
  }
  CHECK(contains(all, "[redacted"));
  CHECK_FALSE(contains(all, "SECRET"));
  const std::string cmd = "rm -rf '" + dir + "'";
  (void)!system(cmd.c_str());
}

TEST_CASE("a shaped granted window over a denied one shows nothing of it through its holes") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  x_client mail(x.display());
  xcb_window_t below = hostile_window(mail, 100, 100, 400, 300, {250, 40, 40}, false);
  set_class(mail.connection(), below, "mail");
  xcb_map_window(mail.connection(), below);
  mail.sync();
  mail.fill(below, 0, 0, 400, 300, {250, 40, 40});
  mail.sync();
  // A ring: the window's bounding shape leaves a 200x100 hole in its middle.
  x_client granted(x.display());
  xcb_window_t ring = hostile_window(granted, 100, 100, 400, 300, {40, 200, 40}, false);
  set_class(granted.connection(), ring, "granted");
  const xcb_rectangle_t parts[] = {{0, 0, 400, 100}, {0, 200, 400, 100}, {0, 100, 100, 100},
                                   {300, 100, 100, 100}};
  xcb_shape_rectangles(granted.connection(), XCB_SHAPE_SO_SET, XCB_SHAPE_SK_BOUNDING,
                       XCB_CLIP_ORDERING_UNSORTED, ring, 0, 0, 4, parts);
  xcb_map_window(granted.connection(), ring);
  granted.sync();
  granted.fill(ring, 0, 0, 400, 300, {40, 200, 40});
  granted.sync();
  for (const std::string mode : {"open", "enforce"}) {
    INFO("CU_GRANTS=" << mode);
    server_process s(x.display(), {{"CU_GRANTS", mode}, {"CU_DENY_APPS", "mail"}});
    if (mode == "enforce") ok_call(s, "request_access", R"({"apps":["granted"],"reason":"test"})");
    for (const char* tool : {"screenshot", "zoom"}) {
      INFO(tool);
      json_ptr shot = std::string(tool) == "screenshot"
                          ? s.call_tool("screenshot")
                          : s.call_tool("zoom", R"({"region":[0,0,683,384]})");
      REQUIRE(shot);
      REQUIRE_FALSE(is_error(*shot));
      const rgb_image img = image_of(*shot);
      // zoom of the top-left quarter at the screenshot's size: twice as big.
      const int k = std::string(tool) == "zoom" ? img.width / 683 : 1;
      INFO("image " << img.width << "x" << img.height);
      CHECK(all_black(img, 210 * k, 210 * k, 390 * k, 290 * k));  // The hole.
      CHECK(img.at(150 * k, 150 * k) == rgb{40, 200, 40});         // The ring.
    }
  }
}

TEST_CASE("a focused window whose WM_CLASS turns to a denied name mid-type takes no key after the change") {
  xvfb x(1366, 768);
  x_observer obs(x.display());
  x_client app(x.display());
  xcb_window_t w = hostile_window(app, 100, 100, 300, 200, {40, 200, 40}, false);
  set_class(app.connection(), w, "granted");
  xcb_map_window(app.connection(), w);
  app.sync();
  obs.set_input_focus(w);
  server_process s(x.display(), {{"CU_GRANTS", "enforce"}, {"CU_DENY_APPS", "mail"},
                                 {"CU_TYPE_DELAY_MS", "5"}});
  ok_call(s, "screenshot");
  grant(s, R"(["granted"])");
  s.send(call_line("long", "type", R"({"text":")" + std::string(2000, 'a') + "\"}"));
  xcb_connection_t* c = app.connection();
  int before = 0;
  while (before < 10) {
    xcb_generic_event_t* ev = xcb_wait_for_event(c);
    REQUIRE(ev != nullptr);
    if ((ev->response_type & 0x7f) == XCB_KEY_PRESS) ++before;
    free(ev);
  }
  const std::string cls = std::string("mail") + '\0' + "mail" + '\0';
  const xcb_void_cookie_t changed =
      xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8,
                          uint32_t(cls.size()), cls.data());
  xcb_flush(c);
  json_ptr r = s.read_response("\"long\"", 30000);
  REQUIRE(r);
  REQUIRE(is_error(*r));
  CHECK(contains(text_of(*r), "then: typing was refused"));
  CHECK(contains(text_of(*r), "CU_DENY_APPS"));
  app.sync();
  // Events carry the sequence of the last request of this client the server
  // had processed: one at or past the change's came after it.
  int after = 0;
  while (xcb_generic_event_t* ev = xcb_poll_for_event(c)) {
    if ((ev->response_type & 0x7f) == XCB_KEY_PRESS &&
        uint16_t(ev->sequence - uint16_t(changed.sequence)) < 0x8000) {
      ++after;
    }
    free(ev);
  }
  CHECK(after == 0);
  check_nothing_held(obs);
}
