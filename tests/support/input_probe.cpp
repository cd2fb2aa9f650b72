#include "support/input_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

namespace cu::test {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

void round_trip(xcb_connection_t* c) {
  free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const char* type_name(uint8_t type) {
  switch (type) {
    case XCB_KEY_PRESS: return "KeyPress";
    case XCB_KEY_RELEASE: return "KeyRelease";
    case XCB_BUTTON_PRESS: return "ButtonPress";
    case XCB_BUTTON_RELEASE: return "ButtonRelease";
    case XCB_MOTION_NOTIFY: return "MotionNotify";
    default: return "Event";
  }
}

}  // namespace

std::string describe(const input_event& e) {
  char buf[160];
  snprintf(buf, sizeof buf, "%s %u at (%d,%d) state 0x%x time %u", type_name(e.type),
           unsigned(e.detail), e.root_x, e.root_y, unsigned(e.state), unsigned(e.time));
  return buf;
}

std::string describe(const std::vector<input_event>& events) {
  std::string out;
  for (const input_event& e : events) out.append(describe(e)).append("\n");
  return out.empty() ? "(no events)" : out;
}

int device_x(int image_x) { return (2 * image_x + 1) * 1920 / (2 * 1366); }
int device_y(int image_y) { return (2 * image_y + 1) * 1080 / (2 * 768); }

input_probe::input_probe(const std::string& display) { open(display, 0, 0, 0, 0); }

input_probe::input_probe(const std::string& display, int x, int y, int width, int height) {
  open(display, x, y, width, height);
}

void input_probe::open(const std::string& display, int x, int y, int width, int height) {
  int screen_number = 0;
  conn_ = xcb_connect(display.c_str(), &screen_number);
  if (xcb_connection_has_error(conn_)) {
    xcb_disconnect(conn_);
    fail("input_probe cannot connect to " + display);
  }
  auto it = xcb_setup_roots_iterator(xcb_get_setup(conn_));
  for (int i = 0; i < screen_number; ++i) xcb_screen_next(&it);
  xcb_screen_t* screen = it.data;
  root_ = screen->root;
  if (width <= 0 || height <= 0) {
    x = y = 0;
    width = screen->width_in_pixels;
    height = screen->height_in_pixels;
  }
  window_ = xcb_generate_id(conn_);
  const uint32_t events = XCB_EVENT_MASK_KEY_PRESS | XCB_EVENT_MASK_KEY_RELEASE |
                          XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_BUTTON_RELEASE |
                          XCB_EVENT_MASK_POINTER_MOTION;
  // Values in the order of their mask bits: back pixel, override redirect,
  // event mask.
  uint32_t values[] = {screen->black_pixel, 1, events};
  xcb_create_window(conn_, XCB_COPY_FROM_PARENT, window_, root_, int16_t(x), int16_t(y),
                    uint16_t(width), uint16_t(height), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                    screen->root_visual,
                    XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
  // An override-redirect window is viewable as soon as MapWindow has been
  // processed, which precedes SetInputFocus on the same connection.
  xcb_map_window(conn_, window_);
  focus();
  clear();
}

input_probe::~input_probe() {
  if (conn_ != nullptr) xcb_disconnect(conn_);
}

void input_probe::focus() {
  xcb_set_input_focus(conn_, XCB_INPUT_FOCUS_POINTER_ROOT, window_, XCB_CURRENT_TIME);
  sync();
}

void input_probe::sync() {
  round_trip(conn_);
  while (xcb_generic_event_t* ev = xcb_poll_for_event(conn_)) {
    uint8_t type = ev->response_type & 0x7f;
    if (type >= XCB_KEY_PRESS && type <= XCB_MOTION_NOTIFY) {
      // Key, button and motion events share one layout.
      auto* k = reinterpret_cast<xcb_key_press_event_t*>(ev);
      input_event e;
      e.type = type;
      e.detail = k->detail;
      e.x = k->event_x;
      e.y = k->event_y;
      e.root_x = k->root_x;
      e.root_y = k->root_y;
      e.state = k->state;
      e.time = k->time;
      events_.push_back(e);
    }
    free(ev);
  }
}

std::vector<input_event> input_probe::take() {
  sync();
  std::vector<input_event> out;
  out.swap(events_);
  return out;
}

std::vector<uint8_t> input_probe::keys_down() {
  std::vector<uint8_t> down;
  xcb_query_keymap_reply_t* r = xcb_query_keymap_reply(conn_, xcb_query_keymap(conn_), nullptr);
  if (r == nullptr) fail("QueryKeymap failed");
  for (int code = 0; code < 256; ++code) {
    if (r->keys[code / 8] & (1u << (code % 8))) down.push_back(uint8_t(code));
  }
  free(r);
  return down;
}

uint16_t input_probe::buttons_mask() {
  xcb_query_pointer_reply_t* r = xcb_query_pointer_reply(conn_, xcb_query_pointer(conn_, root_), nullptr);
  if (r == nullptr) fail("QueryPointer failed");
  uint16_t mask = r->mask & kAllButtonsMask;
  free(r);
  return mask;
}

std::pair<int, int> input_probe::pointer() {
  xcb_query_pointer_reply_t* r = xcb_query_pointer_reply(conn_, xcb_query_pointer(conn_, root_), nullptr);
  if (r == nullptr) fail("QueryPointer failed");
  std::pair<int, int> p{r->root_x, r->root_y};
  free(r);
  return p;
}

std::vector<uint32_t> input_probe::keysyms_of(uint8_t keycode) {
  std::vector<uint32_t> out;
  xcb_get_keyboard_mapping_reply_t* r = xcb_get_keyboard_mapping_reply(
      conn_, xcb_get_keyboard_mapping(conn_, keycode, 1), nullptr);
  if (r == nullptr) return out;
  const xcb_keysym_t* syms = xcb_get_keyboard_mapping_keysyms(r);
  int n = xcb_get_keyboard_mapping_keysyms_length(r);
  out.assign(syms, syms + n);
  free(r);
  return out;
}

uint32_t input_probe::keysym_of(uint8_t keycode) {
  std::vector<uint32_t> syms = keysyms_of(keycode);
  return syms.empty() ? 0 : syms[0];
}

bool input_probe::keycode_has(uint8_t keycode, std::initializer_list<uint32_t> keysyms) {
  for (uint32_t s : keysyms_of(keycode)) {
    for (uint32_t want : keysyms) {
      if (s == want) return true;
    }
  }
  return false;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += "\"";
  return out;
}

size_t code_points(std::string_view utf8) {
  size_t n = 0;
  for (char ch : utf8) {
    if ((static_cast<unsigned char>(ch) & 0xc0) != 0x80) ++n;
  }
  return n;
}

xterm_typist::xterm_typist(const std::string& display) {
  char tmpl[] = "/tmp/cu-xterm-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) fail("mkdtemp failed");
  dir_ = tmpl;
  // xterm exports its window as WINDOWID; the shell hands it over through a
  // file that appears atomically once the shell runs.
  const std::string script = "printf %s \"$WINDOWID\" > READY.tmp && mv READY.tmp READY; exec cat > OUT";
  const std::string log = dir_ + "/xterm.log";
  pid_ = fork();
  if (pid_ < 0) fail("fork failed");
  if (pid_ == 0) {
    if (chdir(dir_.c_str()) != 0) _exit(126);
    setenv("DISPLAY", display.c_str(), 1);
    setenv("LC_ALL", "C.UTF-8", 1);
    unsetenv("XMODIFIERS");
    int devnull = ::open("/dev/null", O_RDONLY);
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(devnull, 0);
    dup2(out, 1);
    dup2(out, 2);
    execlp("xterm", "xterm", "-u8", "-geometry", "120x20+0+0", "-e", "sh", "-c", script.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  // Waiting on another process is unavoidable here: poll with a deadline.
  const int64_t deadline = now_ms() + 30000;
  std::string id;
  for (;;) {
    struct stat st;
    if (stat((dir_ + "/READY").c_str(), &st) == 0) {
      id = read_file(dir_ + "/READY");
      break;
    }
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      fail("xterm exited before its shell ran: " + read_file(log));
    }
    if (now_ms() > deadline) fail("xterm did not start: " + read_file(log));
    usleep(10000);
  }
  window_ = xcb_window_t(strtoul(id.c_str(), nullptr, 10));
  if (window_ == 0) fail("xterm gave no WINDOWID");
  conn_ = xcb_connect(display.c_str(), nullptr);
  if (xcb_connection_has_error(conn_)) fail("xterm_typist cannot connect to " + display);
  for (;;) {
    xcb_get_window_attributes_reply_t* a = xcb_get_window_attributes_reply(
        conn_, xcb_get_window_attributes(conn_, window_), nullptr);
    bool viewable = a != nullptr && a->map_state == XCB_MAP_STATE_VIEWABLE;
    free(a);
    if (viewable) break;
    if (now_ms() > deadline) fail("xterm's window never became viewable");
    usleep(10000);
  }
  focus();
}

xterm_typist::~xterm_typist() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (conn_ != nullptr) xcb_disconnect(conn_);
  std::string cmd = "rm -rf '" + dir_ + "'";
  int ignored = system(cmd.c_str());
  (void)ignored;
}

void xterm_typist::focus() {
  xcb_set_input_focus(conn_, XCB_INPUT_FOCUS_POINTER_ROOT, window_, XCB_CURRENT_TIME);
  round_trip(conn_);
}

std::string xterm_typist::type_and_collect(server_process& s, const std::string& text,
                                           int timeout_ms) {
  static int next = 1;
  const std::string with_newline = text + "\n";
  const std::string type_id = "\"typist-" + std::to_string(next++) + "\"";
  s.send(R"({"jsonrpc":"2.0","id":)" + type_id +
         R"(,"method":"tools/call","params":{"name":"type","arguments":{"text":)" +
         json_string(with_newline) + "}}}");
  json_ptr typed = s.read_response(type_id, timeout_ms);
  REQUIRE(typed);
  INFO(typed->text.substr(0, 400));
  REQUIRE_FALSE(is_error(*typed));
  const std::string expect = "typed " + std::to_string(code_points(with_newline)) + " character";
  CHECK(text_of(*typed).rfind(expect, 0) == 0);

  json_ptr eof = s.call_tool("key", R"({"text":"ctrl+d"})");
  REQUIRE_FALSE(is_error(*eof));

  // cat sees EOF and exits, and xterm with it.
  const int64_t deadline = now_ms() + 20000;
  for (;;) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    if (now_ms() > deadline) {
      FAIL("xterm did not exit after ctrl+d; cat got so far:\n" << read_file(dir_ + "/OUT"));
    }
    usleep(10000);
  }
  return read_file(dir_ + "/OUT");
}

std::vector<input_event> of_types(const std::vector<input_event>& events,
                                  std::initializer_list<uint8_t> types) {
  std::vector<input_event> out;
  for (const input_event& e : events) {
    if (std::find(types.begin(), types.end(), e.type) != types.end()) out.push_back(e);
  }
  return out;
}

std::vector<input_event> keys(const std::vector<input_event>& events) {
  return of_types(events, {XCB_KEY_PRESS, XCB_KEY_RELEASE});
}

std::vector<input_event> buttons(const std::vector<input_event>& events) {
  return of_types(events, {XCB_BUTTON_PRESS, XCB_BUTTON_RELEASE});
}

void check_nothing_pressed(input_probe& probe) {
  CHECK(probe.keys_down().empty());
  CHECK(probe.buttons_mask() == 0);
}

// Built with append: GCC 12 warns falsely (-Wrestrict) on "(" + to_string().
std::string coord(int x, int y) {
  std::string s = "[";
  s.append(std::to_string(x)).append(",").append(std::to_string(y)).append("]");
  return s;
}

std::string at(int x, int y) {
  std::string s = "(";
  s.append(std::to_string(device_x(x))).append(", ").append(std::to_string(device_y(y)));
  return s.append(")");
}

session::session(std::map<std::string, std::string> env)
    : probe(x.display()), s(x.display(), std::move(env)) {
  auto shot = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*shot));
  REQUIRE(image_of(*shot).width == 1366);
  probe.take();
}

bool wait_key_down(input_probe& probe, std::initializer_list<uint32_t> keysyms,
                   int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    for (uint8_t code : probe.keys_down()) {
      if (probe.keycode_has(code, keysyms)) return true;
    }
    if (now_ms() > deadline) return false;
    usleep(5000);
  }
}

}  // namespace cu::test
