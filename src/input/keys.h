// Owns: the pure text side of keyboard input. Key sequences in xdotool
// syntax ("ctrl+s", "alt+Tab", "ctrl+a Delete") become chords of keysyms,
// and text to type becomes the keysyms that produce it. Nothing here talks
// to X: which keycode and modifiers produce a keysym is the keymap's job.
// Thread affinity: none; pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cu {

using keysym_t = uint32_t;

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

}  // namespace cu
