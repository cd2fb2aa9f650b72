// Owns: what the X11 input tests observe the server's input with: a probe
// window that records every key, button and motion event it receives and
// reads back the keyboard and pointer state, and an xterm that collects what
// the server types into it.
// Thread affinity: the test thread.
#pragma once

#include <sys/types.h>
#include <xcb/xcb.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/harness.h"

namespace cu::test {

// Core protocol masks, spelled once.
inline constexpr uint16_t kShiftMask = XCB_MOD_MASK_SHIFT;
inline constexpr uint16_t kControlMask = XCB_MOD_MASK_CONTROL;
inline constexpr uint16_t kMod1Mask = XCB_MOD_MASK_1;  // Alt on the default keymap.
inline constexpr uint16_t kButton1Mask = XCB_BUTTON_MASK_1;
inline constexpr uint16_t kAllButtonsMask = 0x1f00;

// Keysyms the tests look for.
inline constexpr uint32_t kXK_a = 0x61;
inline constexpr uint32_t kXK_Return = 0xff0d;
inline constexpr uint32_t kXK_Tab = 0xff09;
inline constexpr uint32_t kXK_Escape = 0xff1b;
inline constexpr uint32_t kXK_Delete = 0xffff;
inline constexpr uint32_t kXK_Prior = 0xff55;
inline constexpr uint32_t kXK_Next = 0xff56;
inline constexpr uint32_t kXK_Shift_L = 0xffe1, kXK_Shift_R = 0xffe2;
inline constexpr uint32_t kXK_Control_L = 0xffe3, kXK_Control_R = 0xffe4;
inline constexpr uint32_t kXK_Meta_L = 0xffe7, kXK_Meta_R = 0xffe8;
inline constexpr uint32_t kXK_Alt_L = 0xffe9, kXK_Alt_R = 0xffea;
inline constexpr uint32_t kXK_Super_L = 0xffeb, kXK_Super_R = 0xffec;

// One event as the probe window saw it. For key events detail is the
// keycode, for button events the button; motion has detail 0.
struct input_event {
  uint8_t type = 0;  // XCB_KEY_PRESS, XCB_BUTTON_RELEASE, XCB_MOTION_NOTIFY, ...
  uint8_t detail = 0;
  int x = 0, y = 0;            // In the probe window.
  int root_x = 0, root_y = 0;  // On the screen.
  uint16_t state = 0;          // Modifiers and buttons just before the event.
  uint32_t time = 0;           // Server milliseconds.
};

// A short readable form of an event ("ButtonPress 1 at (3,4) state 0x4").
std::string describe(const input_event& e);
std::string describe(const std::vector<input_event>& events);

// The device point that image point (x, y) of a 1366x768 screenshot of a
// 1920x1080 screen maps to: floor((x + 0.5) * 1920 / 1366) and likewise y.
int device_x(int image_x);
int device_y(int image_y);

// An X client of its own with an override-redirect window that selects key,
// button and pointer-motion events and holds the input focus.
class input_probe {
 public:
  // A window covering the whole screen.
  explicit input_probe(const std::string& display);
  input_probe(const std::string& display, int x, int y, int width, int height);
  ~input_probe();
  input_probe(const input_probe&) = delete;
  input_probe& operator=(const input_probe&) = delete;

  // Gives the keyboard focus to the probe window again.
  void focus();

  // Makes a round trip, so every event the X server generated before this
  // call has arrived, and appends them all to events(). Events the probe did
  // not ask for (MappingNotify, Expose, ...) are dropped.
  void sync();
  const std::vector<input_event>& events() const { return events_; }
  // sync(), then hands over the events collected so far and forgets them.
  std::vector<input_event> take();
  void clear() { events_.clear(); }

  // The keycodes the X server considers down (QueryKeymap).
  std::vector<uint8_t> keys_down();
  // The pointer's button bits (QueryPointer mask & 0x1f00).
  uint16_t buttons_mask();
  // The pointer's position on the screen.
  std::pair<int, int> pointer();

  // The keysyms bound to a keycode, from the core keyboard mapping as it is
  // now (fetched fresh, since the server may rebind spare keycodes).
  std::vector<uint32_t> keysyms_of(uint8_t keycode);
  // The keysym the keycode gives in the first column (no Shift, group 1).
  uint32_t keysym_of(uint8_t keycode);
  // Whether any column of the keycode's mapping is one of these keysyms.
  bool keycode_has(uint8_t keycode, std::initializer_list<uint32_t> keysyms);

  xcb_connection_t* connection() const { return conn_; }
  xcb_window_t window() const { return window_; }
  xcb_window_t root() const { return root_; }

 private:
  void open(const std::string& display, int x, int y, int width, int height);

  xcb_connection_t* conn_ = nullptr;
  xcb_window_t root_ = 0;
  xcb_window_t window_ = 0;
  std::vector<input_event> events_;
};

// The events of these types, in order.
std::vector<input_event> of_types(const std::vector<input_event>& events,
                                  std::initializer_list<uint8_t> types);
// Key presses and releases; button presses and releases.
std::vector<input_event> keys(const std::vector<input_event>& events);
std::vector<input_event> buttons(const std::vector<input_event>& events);

// No key is down on the display and no pointer button is pressed.
void check_nothing_pressed(input_probe& probe);

// Polls (with a deadline) until one of the keys down is bound to one of the
// keysyms: the tool's response may be written before its input job has run.
bool wait_key_down(input_probe& probe, std::initializer_list<uint32_t> keysyms,
                   int timeout_ms = 2000);

// An image point as a JSON coordinate "[x,y]", and as the server writes the
// device pixel it maps to: "(X, Y)".
std::string coord(int x, int y);
std::string at(int x, int y);

// A 1920x1080 Xvfb, a full-screen probe window holding the focus, and the
// server with a coordinate session from one screenshot.
struct session {
  explicit session(std::map<std::string, std::string> env = {});
  xvfb x;
  input_probe probe;
  server_process s;
};

// Quotes a string as a JSON string literal (UTF-8 passed through).
std::string json_string(std::string_view s);

// The number of Unicode code points in a UTF-8 string.
size_t code_points(std::string_view utf8);

// An xterm running `cat > OUT` in a fresh temp directory, with the keyboard
// focus on its window. The server types into it; what arrives on the tty is
// what the test reads back.
class xterm_typist {
 public:
  // Starts xterm (LC_ALL=C.UTF-8, UTF-8 mode) and returns once its shell is
  // running, its window is viewable and it has the input focus.
  explicit xterm_typist(const std::string& display);
  ~xterm_typist();
  xterm_typist(const xterm_typist&) = delete;
  xterm_typist& operator=(const xterm_typist&) = delete;

  // Types text + "\n" through the server's `type` tool, then ends the input
  // with the `key` tool's ctrl+d, waits for xterm to exit and returns what
  // cat wrote. Fails the test when either call is an error or the type
  // result does not count the code points.
  std::string type_and_collect(server_process& s, const std::string& text,
                               int timeout_ms = 180000);

  // Gives the keyboard focus to xterm's window.
  void focus();
  xcb_window_t window() const { return window_; }

 private:
  pid_t pid_ = -1;
  std::string dir_;
  xcb_connection_t* conn_ = nullptr;
  xcb_window_t window_ = 0;
};

}  // namespace cu::test
