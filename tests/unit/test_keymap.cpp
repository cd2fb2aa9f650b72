// Tests for src/x11/keymap.h: which key and modifiers produce a keysym, on
// keymaps compiled from the system's XKB data the way an X server would
// have them (no display needed).
#include "x11/keymap.h"

#include <xkbcommon/xkbcommon.h>

#include <catch2/catch.hpp>

#include <memory>

using cu::key_layout;
using cu::key_stroke;

namespace {

constexpr uint8_t kShift = 0x01, kLock = 0x02, kMod5 = 0x80;

// The modifier mapping Xvfb (evdev rules) reports for these layouts.
cu::modifier_map evdev_modmap() {
  cu::modifier_map m;
  m[0] = {50, 62};             // Shift_L, Shift_R
  m[1] = {66};                 // Caps_Lock
  m[2] = {37, 105};            // Control_L, Control_R
  m[3] = {64, 108, 205};       // Alt_L, Alt_R, Meta_L
  m[4] = {77};                 // Num_Lock
  m[6] = {133, 134, 206, 207};  // Super_L, Super_R, Super_L, Hyper_L
  m[7] = {92, 203};            // ISO_Level3_Shift, Mode_switch
  return m;
}

struct keymap_fixture {
  explicit keymap_fixture(const char* layout) {
    ctx.reset(xkb_context_new(XKB_CONTEXT_NO_FLAGS));
    REQUIRE(ctx);
    xkb_rule_names names{"evdev", "pc105", layout, "", ""};
    keymap.reset(xkb_keymap_new_from_names(ctx.get(), &names, XKB_KEYMAP_COMPILE_NO_FLAGS));
    REQUIRE(keymap);
  }
  key_layout layout(uint8_t locked = 0) const {
    return key_layout::build(keymap.get(), locked, 0, evdev_modmap());
  }
  struct ctx_unref {
    void operator()(xkb_context* c) const { xkb_context_unref(c); }
  };
  struct keymap_unref {
    void operator()(xkb_keymap* k) const { xkb_keymap_unref(k); }
  };
  std::unique_ptr<xkb_context, ctx_unref> ctx;
  std::unique_ptr<xkb_keymap, keymap_unref> keymap;
};

}  // namespace

TEST_CASE("on a US layout letters, capitals and symbols have their keys and shift levels") {
  keymap_fixture f("us");
  key_layout l = f.layout();
  CHECK(l.find(XKB_KEY_a) == key_stroke{38, 0});
  CHECK(l.find(XKB_KEY_A) == key_stroke{38, kShift});
  CHECK(l.find(XKB_KEY_at) == key_stroke{11, kShift});
  CHECK(l.find(XKB_KEY_Return) == key_stroke{36, 0});
  CHECK(l.find(XKB_KEY_space) == key_stroke{65, 0});
  CHECK(l.modifier_key(0) == 50);
  CHECK(l.modifier_key(2) == 37);
}

TEST_CASE("on a German layout y and z swap and @ and the euro sign are AltGr levels") {
  keymap_fixture f("de");
  key_layout l = f.layout();
  CHECK(l.find(XKB_KEY_y) == key_stroke{52, 0});
  CHECK(l.find(XKB_KEY_z) == key_stroke{29, 0});
  CHECK(l.find(XKB_KEY_at) == key_stroke{24, kMod5});
  CHECK(l.find(XKB_KEY_EuroSign) == key_stroke{26, kMod5});
  CHECK(l.find(XKB_KEY_ssharp) == key_stroke{20, 0});
  CHECK(l.modifier_key(7) == 92);
}

TEST_CASE("a character the layout lacks is not found, so a spare keycode is needed") {
  keymap_fixture f("us");
  key_layout l = f.layout();
  CHECK_FALSE(l.find(XKB_KEY_eacute));
  CHECK_FALSE(l.find(0x010065e5u));
  CHECK_FALSE(l.unused_keycodes().empty());
  for (uint8_t kc : l.unused_keycodes()) CHECK(l.base_keysym(kc) == XKB_KEY_NoSymbol);
}

TEST_CASE("with Caps Lock locked the lookup still gives the requested case") {
  keymap_fixture f("us");
  key_layout l = f.layout(kLock);
  // Caps Lock turns a into A, so a needs shift to cancel it, and A none.
  CHECK(l.find(XKB_KEY_A) == key_stroke{38, 0});
  CHECK(l.find(XKB_KEY_a) == key_stroke{38, kShift});
  // Digits are unaffected by Caps Lock.
  CHECK(l.find(XKB_KEY_1) == key_stroke{10, 0});
}

TEST_CASE("a keysym spelled as Unicode finds the key of its legacy spelling") {
  keymap_fixture f("de");
  key_layout l = f.layout();
  CHECK(l.find(0x010020acu) == key_stroke{26, kMod5});  // U+20AC is EuroSign.
}

TEST_CASE("modifier keys resolve to their own keycodes") {
  keymap_fixture f("us");
  key_layout l = f.layout();
  CHECK(l.find(XKB_KEY_Shift_L) == key_stroke{50, 0});
  CHECK(l.find(XKB_KEY_Control_L) == key_stroke{37, 0});
  CHECK(l.is_modifier(50));
  CHECK_FALSE(l.is_modifier(38));
}

TEST_CASE("a modifier keysym also listed on a shifted level of another key resolves to the modifier key") {
  // Regression: Xvfb's keymap lists Alt_L as the second level of keycode
  // 204 too; "alt" then pressed Shift along with it.
  keymap_fixture f("us");
  key_layout l = f.layout();
  CHECK(l.find(XKB_KEY_Alt_L) == key_stroke{64, 0});
  CHECK(l.find(XKB_KEY_Super_L) == key_stroke{133, 0});
}
