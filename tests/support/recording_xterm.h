// An xterm that records what its window receives, for the grants' tests
// (x11-grants, x11-hostile): its terminal turns on any-event mouse
// tracking in raw mode and copies every byte it sends (keys as typed,
// presses, releases and motion as ESC [ M b x y) to a file, so what the
// window got is read from the window's own output, not from the server's
// answers.
#pragma once

#include <sys/stat.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/harness.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

namespace cu::test {

// What an xterm in mouse tracking mode sent: a mouse report's button byte
// minus 32 (0-2 press, 3 release, +32 motion, +64 wheel), or a key's byte.
struct sent {
  bool mouse = false;
  int code = 0;
};

inline std::vector<sent> parse_sent(const std::string& bytes) {
  std::vector<sent> out;
  for (size_t i = 0; i < bytes.size();) {
    if (bytes.compare(i, 3, "\x1b[M") == 0 && i + 6 <= bytes.size()) {
      out.push_back({true, static_cast<unsigned char>(bytes[i + 3]) - 32});
      i += 6;
    } else {
      out.push_back({false, static_cast<unsigned char>(bytes[i])});
      ++i;
    }
  }
  return out;
}

inline int presses(const std::vector<sent>& s) {
  int n = 0;
  for (const sent& e : s) n += e.mouse && e.code >= 0 && e.code <= 2 ? 1 : 0;
  return n;
}

inline int releases(const std::vector<sent>& s) {
  int n = 0;
  for (const sent& e : s) n += e.mouse && e.code == 3 ? 1 : 0;
  return n;
}

inline std::string keys_of(const std::vector<sent>& s) {
  std::string out;
  for (const sent& e : s) {
    if (!e.mouse) out += char(e.code);
  }
  return out;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string temp_dir() {
  char tmpl[] = "/tmp/cu-grants-XXXXXX";
  char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}

// An xterm named (WM_CLASS instance and title) name at x, y whose terminal
// reports everything its window receives into a file.
class recording_xterm {
 public:
  recording_xterm(x_observer& obs, const std::string& display, const std::string& name, int x,
                  int y)
      : dir_(temp_dir()), out_(dir_ + "/out") {
    const std::string ready = dir_ + "/ready";
    // Any-event tracking (DECSET 1003) in raw mode: every key, press,
    // release and motion reaches cat as bytes at once.
    const std::string script = "printf '\\033[?1003h'; stty raw -echo; touch '" + ready +
                               "'; exec cat > '" + out_ + "'";
    program_.emplace(std::vector<std::string>{"xterm", "-name", name, "-title", name,
                                              "-geometry", "60x12+" + std::to_string(x) + "+" +
                                                               std::to_string(y),
                                              "-e", "sh", "-c", script},
                     display);
    wait_until([&] { return access(ready.c_str(), F_OK) == 0; }, "the xterm's script");
    wait_until([&] { return (window_ = obs.client_named(name)) != XCB_NONE; }, "the xterm's window");
    // The script's printf reached xterm before ready was made; a round
    // trip through it (its window's geometry) is not needed for that.
  }
  ~recording_xterm() {
    program_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)!system(cmd.c_str());
  }

  xcb_window_t window() const { return window_; }
  std::vector<sent> received() const { return parse_sent(read_file(out_)); }
  // Waits until the terminal has sent what pred looks for.
  template <class F>
  void wait_for(F pred, const char* what) const {
    wait_until([&] { return pred(received()); }, what);
  }

 private:
  std::string dir_, out_;
  std::optional<background_program> program_;
  xcb_window_t window_ = XCB_NONE;
};

// The centre of a window's own area, in root pixels (the screen is
// 1366x768: image and root pixels are the same).
inline std::string centre_of(x_observer& obs, xcb_window_t w) {
  const area a = x_area(obs, w);
  std::string out = "[";
  out += std::to_string(a.x + a.w / 2);
  out += ',';
  out += std::to_string(a.y + a.h / 2);
  out += ']';
  return out;
}

inline std::pair<int, int> pointer_at(x_observer& obs) {
  auto* c = obs.connection();
  xcb_query_pointer_reply_t* q = xcb_query_pointer_reply(c, xcb_query_pointer(c, obs.root()), nullptr);
  REQUIRE(q != nullptr);
  std::pair<int, int> p{q->root_x, q->root_y};
  free(q);
  return p;
}

// No key is down on the display and no button is pressed.
inline void check_nothing_held(x_observer& obs) {
  auto* c = obs.connection();
  xcb_query_pointer_reply_t* q = xcb_query_pointer_reply(c, xcb_query_pointer(c, obs.root()), nullptr);
  REQUIRE(q != nullptr);
  CHECK((q->mask & 0x1f00) == 0);
  free(q);
  xcb_query_keymap_reply_t* k = xcb_query_keymap_reply(c, xcb_query_keymap(c), nullptr);
  REQUIRE(k != nullptr);
  for (uint8_t b : k->keys) CHECK(b == 0);
  free(k);
}

}  // namespace cu::test
