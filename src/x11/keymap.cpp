#include "x11/keymap.h"

// xcb's XKB header names a member "explicit", which C++ reserves.
#define explicit explicit_
#include <xcb/xkb.h>
#undef explicit
#include <xkbcommon/xkbcommon-x11.h>
#include <xkbcommon/xkbcommon.h>

#include <algorithm>
#include <bit>
#include <memory>

namespace cu {
namespace {

struct state_deleter {
  void operator()(xkb_state* s) const { xkb_state_unref(s); }
};

// Keysyms whose key, pressed, sets its modifier (as opposed to locking it).
bool sets_modifier(keysym_t sym) {
  switch (sym) {
    case XKB_KEY_Shift_L:
    case XKB_KEY_Shift_R:
    case XKB_KEY_Control_L:
    case XKB_KEY_Control_R:
    case XKB_KEY_Alt_L:
    case XKB_KEY_Alt_R:
    case XKB_KEY_Meta_L:
    case XKB_KEY_Meta_R:
    case XKB_KEY_Super_L:
    case XKB_KEY_Super_R:
    case XKB_KEY_Hyper_L:
    case XKB_KEY_Hyper_R:
    case XKB_KEY_ISO_Level3_Shift:
    case XKB_KEY_ISO_Level5_Shift:
      return true;
    default:
      return false;
  }
}

}  // namespace

key_layout key_layout::build(xkb_keymap* km, uint8_t locked_mods, uint32_t group,
                             const modifier_map& modmap) {
  key_layout l;
  l.locked_ = locked_mods;
  l.group_ = group;
  xkb_keycode_t lo = std::max<xkb_keycode_t>(8, xkb_keymap_min_keycode(km));
  xkb_keycode_t hi = std::min<xkb_keycode_t>(255, xkb_keymap_max_keycode(km));

  auto layout_of = [&](xkb_keycode_t kc) -> xkb_layout_index_t {
    xkb_layout_index_t n = xkb_keymap_num_layouts_for_key(km, kc);
    // A key with fewer groups than the active one wraps, as XKB does.
    return n == 0 ? 0 : group % n;
  };
  for (xkb_keycode_t kc = lo; kc <= hi; ++kc) {
    const xkb_keysym_t* syms = nullptr;
    if (xkb_keymap_num_layouts_for_key(km, kc) > 0 &&
        xkb_keymap_key_get_syms_by_level(km, kc, layout_of(kc), 0, &syms) > 0) {
      l.base_[kc] = syms[0];
    }
  }

  // The key for each modifier: one whose own keysym sets it (Shift_L rather
  // than a lock or an odd extra key in the same row).
  for (size_t bit = 0; bit < 8; ++bit) {
    for (uint8_t kc : modmap[bit]) {
      if (kc == 0) continue;
      l.modifier_keys_[kc / 64] |= uint64_t{1} << (kc % 64);
      if (l.mod_keys_[bit] == 0 && sets_modifier(l.base_[kc])) l.mod_keys_[bit] = kc;
    }
  }

  // Modifiers that select shift levels and that a key press can set: Shift,
  // and whichever real modifiers carry ISO_Level3_Shift and ISO_Level5_Shift
  // (AltGr levels). Control and Alt never select a level for typing.
  uint8_t level_mods = l.mod_keys_[0] != 0 ? 0x01 : 0;
  for (size_t bit = 1; bit < 8; ++bit) {
    keysym_t s = l.mod_keys_[bit] != 0 ? l.base_[l.mod_keys_[bit]] : 0;
    if (s == XKB_KEY_ISO_Level3_Shift || s == XKB_KEY_ISO_Level5_Shift) {
      level_mods |= uint8_t(1u << bit);
    }
  }
  std::vector<uint8_t> combos;
  for (unsigned m = 0; m < 256; ++m) {
    if ((m & ~unsigned(level_mods)) == 0) combos.push_back(uint8_t(m));
  }
  std::stable_sort(combos.begin(), combos.end(),
                   [](uint8_t a, uint8_t b) { return std::popcount(a) < std::popcount(b); });

  // Modifier keys themselves (a chord's "shift", "alt") are their own
  // keys, entered first: a keymap may also list Alt_L on a second level of
  // some other key (Xvfb's keycode 204), which must not win with Shift.
  for (xkb_keycode_t kc = lo; kc <= hi; ++kc) {
    if (l.is_modifier(uint8_t(kc)) && l.base_[kc] != XKB_KEY_NoSymbol) {
      l.strokes_.try_emplace(l.base_[kc], key_stroke{uint8_t(kc), 0});
    }
  }

  // Ask xkbcommon what each key produces with each combination held on top
  // of the locked modifiers: exactly what a client will compute from the
  // event's state, Caps Lock and group included.
  std::unique_ptr<xkb_state, state_deleter> st(xkb_state_new(km));
  for (uint8_t mods : combos) {
    xkb_state_update_mask(st.get(), mods & ~locked_mods, 0, locked_mods, 0, 0, group);
    for (xkb_keycode_t kc = lo; kc <= hi; ++kc) {
      if (l.is_modifier(uint8_t(kc))) continue;
      xkb_keysym_t sym = xkb_state_key_get_one_sym(st.get(), kc);
      if (sym == XKB_KEY_NoSymbol) continue;
      l.strokes_.try_emplace(sym, key_stroke{uint8_t(kc), uint8_t(mods & ~locked_mods)});
    }
  }

  for (xkb_keycode_t kc = lo; kc <= hi; ++kc) {
    if (l.is_modifier(uint8_t(kc))) continue;
    bool empty = true;
    xkb_layout_index_t layouts = xkb_keymap_num_layouts_for_key(km, kc);
    for (xkb_layout_index_t g = 0; g < layouts && empty; ++g) {
      xkb_level_index_t levels = xkb_keymap_num_levels_for_key(km, kc, g);
      for (xkb_level_index_t lv = 0; lv < levels && empty; ++lv) {
        const xkb_keysym_t* syms = nullptr;
        if (xkb_keymap_key_get_syms_by_level(km, kc, g, lv, &syms) > 0) empty = false;
      }
    }
    if (empty) l.unused_.push_back(uint8_t(kc));
  }
  return l;
}

std::optional<key_stroke> key_layout::find(keysym_t sym) const {
  auto it = strokes_.find(sym);
  if (it != strokes_.end()) return it->second;
  // The same character under its other keysym spelling (a keymap may list
  // U+20AC where we asked for EuroSign, or the reverse).
  uint32_t cp = xkb_keysym_to_utf32(sym);
  if (cp != 0) {
    keysym_t alt = (sym & 0xff000000u) == 0x01000000u ? xkb_utf32_to_keysym(cp) : 0x01000000u | cp;
    if (alt != sym) {
      it = strokes_.find(alt);
      if (it != strokes_.end()) return it->second;
    }
  }
  return std::nullopt;
}

keysym_t key_layout::base_keysym(uint8_t keycode) const { return base_[keycode]; }

x11_keyboard::~x11_keyboard() {
  if (keymap != nullptr) xkb_keymap_unref(keymap);
}

x11_keyboard::x11_keyboard(x11_keyboard&& o) noexcept
    : device_id(o.device_id), keymap(o.keymap), modmap(std::move(o.modmap)) {
  o.keymap = nullptr;
}

x11_keyboard& x11_keyboard::operator=(x11_keyboard&& o) noexcept {
  if (this != &o) {
    if (keymap != nullptr) xkb_keymap_unref(keymap);
    device_id = o.device_id;
    keymap = o.keymap;
    modmap = std::move(o.modmap);
    o.keymap = nullptr;
  }
  return *this;
}

result<int32_t> x11_setup_xkb(xcb_connection_t* c) {
  uint16_t major = 0, minor = 0;
  uint8_t base_event = 0, base_error = 0;
  if (!xkb_x11_setup_xkb_extension(c, XKB_X11_MIN_MAJOR_XKB_VERSION,
                                   XKB_X11_MIN_MINOR_XKB_VERSION,
                                   XKB_X11_SETUP_XKB_EXTENSION_NO_FLAGS, &major, &minor,
                                   &base_event, &base_error)) {
    return make_error(errc::x_failed, "the X server lacks the XKB extension");
  }
  int32_t device = xkb_x11_get_core_keyboard_device_id(c);
  if (device < 0) return make_error(errc::x_failed, "the X server reports no core keyboard");
  constexpr uint16_t kEvents =
      XCB_XKB_EVENT_TYPE_NEW_KEYBOARD_NOTIFY | XCB_XKB_EVENT_TYPE_MAP_NOTIFY;
  constexpr uint16_t kMapParts =
      XCB_XKB_MAP_PART_KEY_TYPES | XCB_XKB_MAP_PART_KEY_SYMS | XCB_XKB_MAP_PART_MODIFIER_MAP |
      XCB_XKB_MAP_PART_EXPLICIT_COMPONENTS | XCB_XKB_MAP_PART_KEY_ACTIONS |
      XCB_XKB_MAP_PART_VIRTUAL_MODS | XCB_XKB_MAP_PART_VIRTUAL_MOD_MAP;
  xcb_xkb_select_events_details_t details{};
  details.affectNewKeyboard = XCB_XKB_NKN_DETAIL_KEYCODES;
  details.newKeyboardDetails = XCB_XKB_NKN_DETAIL_KEYCODES;
  xcb_xkb_select_events_aux(c, xcb_xkb_id_t(device), kEvents, 0, 0, kMapParts, kMapParts,
                            &details);
  return device;
}

result<x11_keyboard> x11_load_keyboard(xcb_connection_t* c, xkb_context* ctx, int32_t device_id) {
  x11_keyboard kb;
  kb.device_id = device_id;
  auto cookie = xcb_get_modifier_mapping(c);
  kb.keymap = xkb_x11_keymap_new_from_device(ctx, c, device_id, XKB_KEYMAP_COMPILE_NO_FLAGS);
  std::unique_ptr<xcb_get_modifier_mapping_reply_t, decltype(&free)> mm(
      xcb_get_modifier_mapping_reply(c, cookie, nullptr), &free);
  if (kb.keymap == nullptr || !mm) {
    return make_error(errc::x_failed, "cannot read the keyboard mapping from the X server");
  }
  const xcb_keycode_t* codes = xcb_get_modifier_mapping_keycodes(mm.get());
  for (size_t bit = 0; bit < 8; ++bit) {
    for (size_t k = 0; k < mm->keycodes_per_modifier; ++k) {
      xcb_keycode_t kc = codes[bit * mm->keycodes_per_modifier + k];
      if (kc != 0) kb.modmap[bit].push_back(kc);
    }
  }
  return kb;
}

result<std::pair<uint8_t, uint32_t>> x11_keyboard_state(xcb_connection_t* c, int32_t device_id) {
  std::unique_ptr<xcb_xkb_get_state_reply_t, decltype(&free)> st(
      xcb_xkb_get_state_reply(c, xcb_xkb_get_state(c, xcb_xkb_device_spec_t(device_id)), nullptr),
      &free);
  if (!st) return make_error(errc::x_unavailable, "cannot read the keyboard state");
  return std::pair<uint8_t, uint32_t>{st->lockedMods, st->group};
}

bool is_keymap_change(xcb_connection_t* c, const xcb_generic_event_t* ev) {
  uint8_t type = ev->response_type & 0x7f;
  if (type == XCB_MAPPING_NOTIFY) return true;
  const xcb_query_extension_reply_t* xkb = xcb_get_extension_data(c, &xcb_xkb_id);
  if (xkb == nullptr || !xkb->present || type != xkb->first_event) return false;
  // All XKB events share one event code; the subtype is in the second byte.
  uint8_t xkb_type = reinterpret_cast<const uint8_t*>(ev)[1];
  return xkb_type == XCB_XKB_NEW_KEYBOARD_NOTIFY || xkb_type == XCB_XKB_MAP_NOTIFY;
}

}  // namespace cu
