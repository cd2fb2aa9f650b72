// Owns: the pure text side of keyboard input. Key sequences in xdotool
// syntax ("ctrl+s", "alt+Tab", "ctrl+a Delete") become chords of keysyms,
// and text to type becomes the keysyms that produce it. Nothing here talks
// to X: which keycode and modifiers produce a keysym is the keymap's job.
// Thread affinity: none; pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cu {

using keysym_t = uint32_t;

// Bounds that keep every request's cost small and known in advance (the
// input actor serializes everyone's input, so one long call delays all
// others). A request over a bound is refused before anything is pressed.
// The most keys held together in one chord, a hold_key or a click's
// modifiers: far more than any real shortcut needs, and within the spare
// keycodes a keymap has for keysyms it lacks.
inline constexpr size_t kMaxChordKeys = 16;
// The most chords one key call taps (its chords times repeat).
inline constexpr size_t kMaxKeyTaps = 1000;
// The most characters one type call types: a minute at the reference's
// 12 ms per character (CU_TYPE_DELAY_MS=12), about where hosts time a call
// out anyway. At the default pace 5000 ASCII characters take well under a
// second; characters the layout lacks cost up to 100 ms per batch of
// keycodes rebound (about 26 s at worst with the 19 spare keycodes of Xvfb).
inline constexpr size_t kMaxTypeCharacters = 5000;

// Keys pressed together: pressed in order, released in reverse order.
struct key_chord {
  std::vector<keysym_t> keys;
  bool operator==(const key_chord&) const = default;
};

// One key name: an alias models send (enter, esc, cmd, super, win, meta,
// ctrl, control, alt, option, pgup, pgdn, del, ...), a single character
// ("a", "A", "é", "+"), or an X keysym name, matched exactly first and then
// case-insensitively ("Return", "return", "F5", "XF86AudioMute").
result<keysym_t> parse_key_name(std::string_view name);

// A key sequence: chords separated by whitespace, the keys of a chord joined
// by '+'. A literal plus is written "plus" or as an empty name between two
// '+' ("ctrl++"). The error names the offending key and the whole text.
// Malformed UTF-8, control characters other than the whitespace separators
// (a NUL would otherwise cut a key name short) and chords of more than
// kMaxChordKeys keys are refused.
result<std::vector<key_chord>> parse_key_sequence(std::string_view text);

// What typing one character presses.
struct typed_char {
  keysym_t sym = 0;
  char32_t code_point = 0;  // The character itself; '\n' for Return.
  bool operator==(const typed_char&) const = default;
};

// The keystrokes that type text, one per character: "\n", "\r" and "\r\n"
// are Return, "\t" is Tab; other control characters cannot be typed and are
// an error naming the first one. *characters receives the text's length in
// code points.
result<std::vector<typed_char>> keystrokes_for_text(std::string_view utf8, size_t* characters);

// Whether chord is a system key combo (docs/grants.md): one the window
// manager or the session acts on rather than the focused application, which
// needs the systemKeyCombos grant when grants are enforced. Any chord with
// Super, Hyper or Meta; Ctrl+Alt with anything; Alt with Tab, Escape, space
// or a function key; Ctrl+Escape; Print and Sys_Req; and the XF86 keys of
// power, session and display (XF86PowerOff, XF86LogOff, XF86Switch_VT_1...).
// XF86Close, XF86RotateWindows and Execute count as well: window managers
// bind them to closing, rotating and running.
bool is_system_combo(const key_chord& chord);

// Whether sym acts on the X server itself rather than on any window, so
// that this server never sends it, in any mode (docs/grants.md, "Keys the
// server never sends"): Terminate_Server (kills the X server), the virtual
// terminal switches (XF86Switch_VT_1..12), the grab breakers (XF86Ungrab,
// XF86ClearGrab), the server's log dumps (XF86LogGrabInfo,
// XF86LogWindowTree), the video mode switches (XF86Next_VMode,
// XF86Prev_VMode), and the XKB keysyms that turn on keyboard controls or
// press pointer buttons (MouseKeys, StickyKeys, SlowKeys, ..., Pointer_*):
// a key bound to one of those clicks where the pointer is or changes how
// every later key behaves, whatever window has the focus.
bool is_server_key(keysym_t sym);

// Whether the keys held together reach the X server itself: any server key,
// or Ctrl+Alt with a key the default keymap turns into one (F1..F12: the
// virtual terminals; BackSpace: Terminate_Server; KP_Divide, KP_Multiply,
// KP_Add, KP_Subtract: the grab breakers and video modes).
bool is_server_chord(const std::vector<keysym_t>& held);

// Whether sym is a modifier a click or scroll may hold: Shift, Control,
// Alt, Super, Meta, Hyper (either side) and AltGr (ISO_Level3_Shift).
bool is_modifier_key(keysym_t sym);

}  // namespace cu
