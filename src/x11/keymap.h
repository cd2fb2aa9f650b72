// Owns: the keyboard as the X server maps it. Which keycode, with which
// modifiers held, produces a keysym under the current layout (XKB group) and
// locked modifiers; which key sets each modifier; which keycodes are unused
// and may be borrowed for a keysym the layout lacks. Built with xkbcommon,
// so the lookup follows the same XKB rules the server and clients apply,
// for any layout (AltGr levels included).
// Thread affinity: key_layout is a plain value; load_key_layout runs on the
// thread that owns the connection (the input actor).
#pragma once

#include <xcb/xcb.h>

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "util/result.h"

struct xkb_context;
struct xkb_keymap;

namespace cu {

using keysym_t = uint32_t;

// What to press for a keysym: the key, with these real modifiers (X mask
// bits: Shift 0x01 ... Mod5 0x80) held while it goes down.
struct key_stroke {
  uint8_t keycode = 0;
  uint8_t mods = 0;
  bool operator==(const key_stroke&) const = default;
};

// The core modifier mapping: for each of the 8 real modifiers (Shift, Lock,
// Control, Mod1..Mod5), the keycodes that set it.
using modifier_map = std::array<std::vector<uint8_t>, 8>;

class key_layout {
 public:
  key_layout() = default;

  // Builds the lookup for keymap km as it behaves with these locked
  // modifiers and this effective group.
  static key_layout build(xkb_keymap* km, uint8_t locked_mods, uint32_t group,
                          const modifier_map& modmap);

  // The cheapest stroke producing sym (fewest modifiers, then the lowest
  // keycode), or nothing when the layout has no key for it.
  std::optional<key_stroke> find(keysym_t sym) const;

  // The key to press for modifier bit (0..7), or 0 when no key sets it.
  uint8_t modifier_key(int bit) const { return mod_keys_[size_t(bit)]; }

  // Whether keycode is in the modifier mapping.
  bool is_modifier(uint8_t keycode) const { return (modifier_keys_[keycode / 64] >> (keycode % 64)) & 1; }

  // Keycodes with no keysym in any group or level and no modifier: the
  // spare keys a missing keysym can be bound to for a moment.
  const std::vector<uint8_t>& unused_keycodes() const { return unused_; }

  // The keysym keycode produces with no modifiers in the layout's group.
  keysym_t base_keysym(uint8_t keycode) const;

  uint8_t locked_mods() const { return locked_; }
  uint32_t group() const { return group_; }

 private:
  std::unordered_map<keysym_t, key_stroke> strokes_;
  std::array<keysym_t, 256> base_{};
  std::array<uint8_t, 8> mod_keys_{};
  std::array<uint64_t, 4> modifier_keys_{};
  std::vector<uint8_t> unused_;
  uint8_t locked_ = 0;
  uint32_t group_ = 0;
};

// The keyboard of an X connection: its XKB keymap, modifier mapping and
// current locked modifiers and group, loaded through xkbcommon-x11.
struct x11_keyboard {
  int32_t device_id = -1;
  xkb_keymap* keymap = nullptr;  // Owned; released by the destructor.
  modifier_map modmap;

  x11_keyboard() = default;
  ~x11_keyboard();
  x11_keyboard(x11_keyboard&& o) noexcept;
  x11_keyboard& operator=(x11_keyboard&& o) noexcept;
  x11_keyboard(const x11_keyboard&) = delete;
  x11_keyboard& operator=(const x11_keyboard&) = delete;
};

// Sets up XKB on c (once per connection) and selects the events that say the
// keymap changed (XkbNewKeyboardNotify, XkbMapNotify), so callers can watch
// for them with is_keymap_change.
result<int32_t> x11_setup_xkb(xcb_connection_t* c);

// Loads the keyboard of device_id (from x11_setup_xkb).
result<x11_keyboard> x11_load_keyboard(xcb_connection_t* c, xkb_context* ctx, int32_t device_id);

// The locked modifiers and effective group right now (one round trip).
result<std::pair<uint8_t, uint32_t>> x11_keyboard_state(xcb_connection_t* c, int32_t device_id);

// Whether event ev (from c's queue) says the keymap or modifier mapping
// changed: a core MappingNotify or an XKB new-keyboard or map notify.
bool is_keymap_change(xcb_connection_t* c, const xcb_generic_event_t* ev);

}  // namespace cu
