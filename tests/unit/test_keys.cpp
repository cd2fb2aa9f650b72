// Tests for src/input/keys.h: xdotool key syntax, aliases and the
// keystrokes that type text.
#include "input/keys.h"

#include <xkbcommon/xkbcommon-keysyms.h>

#include <catch2/catch.hpp>

#include <vector>

using cu::key_chord;
using cu::keysym_t;
using cu::parse_key_name;
using cu::parse_key_sequence;

namespace {

std::vector<key_chord> chords(std::string_view text) {
  auto r = parse_key_sequence(text);
  REQUIRE(r.ok());
  return *r;
}

key_chord chord(std::initializer_list<keysym_t> keys) { return key_chord{keys}; }

std::string error_of(std::string_view text) {
  auto r = parse_key_sequence(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == cu::errc::invalid_argument);
  CHECK(r.err().message.find('\n') == std::string::npos);
  return r.err().message;
}

}  // namespace

TEST_CASE("a chord joins keysym names with plus, pressed in order") {
  CHECK(chords("ctrl+s") == std::vector{chord({XKB_KEY_Control_L, XKB_KEY_s})});
  CHECK(chords("alt+Tab") == std::vector{chord({XKB_KEY_Alt_L, XKB_KEY_Tab})});
  CHECK(chords("ctrl+shift+Escape") ==
        std::vector{chord({XKB_KEY_Control_L, XKB_KEY_Shift_L, XKB_KEY_Escape})});
  CHECK(chords("Return") == std::vector{chord({XKB_KEY_Return})});
}

TEST_CASE("keysym names match exactly first, then case-insensitively") {
  CHECK(*parse_key_name("F5") == XKB_KEY_F5);
  CHECK(*parse_key_name("f5") == XKB_KEY_F5);
  CHECK(*parse_key_name("BACKSPACE") == XKB_KEY_BackSpace);
  CHECK(*parse_key_name("XF86AudioMute") == XKB_KEY_XF86AudioMute);
  CHECK(*parse_key_name("xf86audiomute") == XKB_KEY_XF86AudioMute);
  CHECK(*parse_key_name("KP_Enter") == XKB_KEY_KP_Enter);
}

TEST_CASE("the aliases models send name the keys they mean") {
  CHECK(*parse_key_name("enter") == XKB_KEY_Return);
  CHECK(*parse_key_name("esc") == XKB_KEY_Escape);
  CHECK(*parse_key_name("cmd") == XKB_KEY_Super_L);
  CHECK(*parse_key_name("super") == XKB_KEY_Super_L);
  CHECK(*parse_key_name("win") == XKB_KEY_Super_L);
  CHECK(*parse_key_name("meta") == XKB_KEY_Super_L);
  CHECK(*parse_key_name("ctrl") == XKB_KEY_Control_L);
  CHECK(*parse_key_name("Control") == XKB_KEY_Control_L);
  CHECK(*parse_key_name("alt") == XKB_KEY_Alt_L);
  CHECK(*parse_key_name("option") == XKB_KEY_Alt_L);
  CHECK(*parse_key_name("pgup") == XKB_KEY_Prior);
  CHECK(*parse_key_name("PgDn") == XKB_KEY_Next);
  CHECK(*parse_key_name("del") == XKB_KEY_Delete);
  CHECK(*parse_key_name("space") == XKB_KEY_space);
  CHECK(*parse_key_name("up") == XKB_KEY_Up);
}

TEST_CASE("a single character names the key that types it, case included") {
  CHECK(*parse_key_name("a") == XKB_KEY_a);
  CHECK(*parse_key_name("A") == XKB_KEY_A);
  CHECK(*parse_key_name("1") == XKB_KEY_1);
  CHECK(*parse_key_name("/") == XKB_KEY_slash);
  CHECK(*parse_key_name("é") == XKB_KEY_eacute);
  CHECK(*parse_key_name("€") == XKB_KEY_EuroSign);
  CHECK(*parse_key_name("日") == 0x010065e5u);
}

TEST_CASE("a literal plus is 'plus' or an empty name between two pluses") {
  CHECK(chords("ctrl++") == std::vector{chord({XKB_KEY_Control_L, XKB_KEY_plus})});
  CHECK(chords("+") == std::vector{chord({XKB_KEY_plus})});
  CHECK(chords("ctrl+plus") == std::vector{chord({XKB_KEY_Control_L, XKB_KEY_plus})});
}

TEST_CASE("whitespace separates chords pressed one after another") {
  CHECK(chords("ctrl+a Delete") ==
        std::vector{chord({XKB_KEY_Control_L, XKB_KEY_a}), chord({XKB_KEY_Delete})});
  CHECK(chords("  Return  ") == std::vector{chord({XKB_KEY_Return})});
}

TEST_CASE("unknown or empty key names are errors that name the key and the text") {
  std::string m = error_of("ctrl+frobnicate");
  CHECK(m.find("\"frobnicate\"") != std::string::npos);
  CHECK(m.find("\"ctrl+frobnicate\"") != std::string::npos);
  CHECK(m.rfind("Invalid argument \"text\"", 0) == 0);
  CHECK(error_of("ctrl+").find("empty key name") != std::string::npos);
  CHECK(error_of("").find("no key") != std::string::npos);
  CHECK(error_of("   ").find("no key") != std::string::npos);
}

TEST_CASE("text becomes one keystroke per character, line breaks as Return") {
  size_t n = 0;
  auto r = cu::keystrokes_for_text("a\nB\r\nc\rd\té", &n);
  REQUIRE(r.ok());
  std::vector<keysym_t> syms;
  for (auto& k : *r) syms.push_back(k.sym);
  CHECK(syms == std::vector<keysym_t>{XKB_KEY_a, XKB_KEY_Return, XKB_KEY_B, XKB_KEY_Return,
                                      XKB_KEY_c, XKB_KEY_Return, XKB_KEY_d, XKB_KEY_Tab,
                                      XKB_KEY_eacute});
  CHECK(n == 10);  // Code points of the text, "\r\n" counting as two.
}

TEST_CASE("characters beyond Latin-1 get legacy keysyms where X has them, else Unicode ones") {
  size_t n = 0;
  auto r = cu::keystrokes_for_text("日😀✓", &n);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].sym == 0x010065e5u);
  CHECK((*r)[1].sym == 0x0101f600u);
  CHECK((*r)[2].sym == XKB_KEY_checkmark);  // A legacy keysym exists for it.
  CHECK(n == 3);
}

TEST_CASE("control characters cannot be typed and are named in the error") {
  size_t n = 0;
  auto r = cu::keystrokes_for_text("ab\x07", &n);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().message.find("U+0007") != std::string::npos);
  CHECK_FALSE(cu::keystrokes_for_text("\x1b[A", &n).ok());
}

TEST_CASE("malformed UTF-8 is an error, not garbage keystrokes") {
  size_t n = 0;
  CHECK_FALSE(cu::keystrokes_for_text("\xc3", &n).ok());
  CHECK_FALSE(cu::keystrokes_for_text("\xed\xa0\x80", &n).ok());  // A surrogate.
  CHECK_FALSE(cu::keystrokes_for_text("\xc0\xaf", &n).ok());      // Overlong '/'.
}

TEST_CASE("a NUL in a key name is refused, not cut at") {
  using namespace std::string_literals;
  for (const std::string& text : {"a\0b"s, "Return\0;rm"s, "ctrl+\0"s, "\0"s}) {
    auto r = cu::parse_key_sequence(text);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.err().message, Catch::Contains("control character U+0000"));
  }
}

TEST_CASE("control characters other than the whitespace separators are refused in key names") {
  for (const char* text : {"a\x01", "\x1b", "ctrl+\x7f", "a\xc2\x85"}) {
    INFO(text);
    CHECK_FALSE(cu::parse_key_sequence(text).ok());
  }
  // Tabs and line breaks separate chords, as spaces do.
  auto r = cu::parse_key_sequence("a\tb\r\nc");
  REQUIRE(r.ok());
  CHECK(r->size() == 3);
}

TEST_CASE("malformed UTF-8 in key names is refused") {
  CHECK_THAT(cu::parse_key_sequence("ctrl+\xff").err().message, Catch::Contains("UTF-8"));
}

TEST_CASE("a chord of more keys than can be held together is refused") {
  std::string sixteen = "a";
  for (char c = 'b'; c < 'a' + 16; ++c) sixteen += std::string("+") + c;
  REQUIRE(cu::parse_key_sequence(sixteen).ok());
  auto r = cu::parse_key_sequence(sixteen + "+z");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.err().message, Catch::Contains("17 keys in one chord (at most 16"));
}

TEST_CASE("a huge key text is not echoed whole in the error") {
  std::string text(100000, 'q');
  auto r = cu::parse_key_sequence(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().message.size() < 400);
}

TEST_CASE("keys that reach the X server itself are server keys, alone or in their Ctrl+Alt chords") {
  using cu::is_server_chord;
  using cu::is_server_key;
  for (keysym_t k : {keysym_t(XKB_KEY_Terminate_Server), keysym_t(XKB_KEY_XF86Switch_VT_1),
                     keysym_t(XKB_KEY_XF86Switch_VT_12), keysym_t(XKB_KEY_XF86Ungrab),
                     keysym_t(XKB_KEY_XF86ClearGrab), keysym_t(XKB_KEY_XF86LogGrabInfo),
                     keysym_t(XKB_KEY_XF86LogWindowTree), keysym_t(XKB_KEY_XF86Next_VMode),
                     keysym_t(XKB_KEY_XF86Prev_VMode), keysym_t(XKB_KEY_Pointer_Button1),
                     keysym_t(XKB_KEY_Pointer_EnableKeys), keysym_t(XKB_KEY_MouseKeys_Enable),
                     keysym_t(XKB_KEY_StickyKeys_Enable)}) {
    CHECK(is_server_key(k));
    CHECK(is_server_chord({k}));
    CHECK(cu::is_system_combo(key_chord{{k}}));
  }
  for (keysym_t k : {keysym_t(XKB_KEY_a), keysym_t(XKB_KEY_Return), keysym_t(XKB_KEY_F1),
                     keysym_t(XKB_KEY_BackSpace), keysym_t(XKB_KEY_KP_Multiply)}) {
    CHECK_FALSE(is_server_key(k));
  }
  CHECK(is_server_chord({XKB_KEY_Control_L, XKB_KEY_Alt_L, XKB_KEY_BackSpace}));
  CHECK(is_server_chord({XKB_KEY_Control_R, XKB_KEY_Alt_R, XKB_KEY_F7}));
  CHECK(is_server_chord({XKB_KEY_Alt_L, XKB_KEY_Control_L, XKB_KEY_KP_Divide}));
  CHECK(is_server_chord({XKB_KEY_Control_L, XKB_KEY_Alt_L, XKB_KEY_KP_Add}));
  CHECK_FALSE(is_server_chord({XKB_KEY_Control_L, XKB_KEY_BackSpace}));
  CHECK_FALSE(is_server_chord({XKB_KEY_Control_L, XKB_KEY_Alt_L, XKB_KEY_Delete}));
  CHECK_FALSE(is_server_chord({XKB_KEY_Alt_L, XKB_KEY_F1}));
  // Window managers' keys, system combos without being the server's.
  CHECK(cu::is_system_combo(key_chord{{XKB_KEY_XF86Close}}));
  CHECK(cu::is_system_combo(key_chord{{XKB_KEY_XF86RotateWindows}}));
  CHECK(cu::is_system_combo(key_chord{{XKB_KEY_Execute}}));
}

TEST_CASE("modifier keys are the ones a click may hold") {
  for (keysym_t k : {XKB_KEY_Shift_L, XKB_KEY_Shift_R, XKB_KEY_Control_L, XKB_KEY_Control_R,
                     XKB_KEY_Alt_L, XKB_KEY_Alt_R, XKB_KEY_Super_L, XKB_KEY_Super_R,
                     XKB_KEY_Meta_L, XKB_KEY_Hyper_R, XKB_KEY_ISO_Level3_Shift}) {
    CHECK(cu::is_modifier_key(k));
  }
  for (keysym_t k : {XKB_KEY_a, XKB_KEY_space, XKB_KEY_Return, XKB_KEY_Caps_Lock, XKB_KEY_Tab,
                     XKB_KEY_Terminate_Server}) {
    CHECK_FALSE(cu::is_modifier_key(k));
  }
}
