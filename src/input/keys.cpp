#include "input/keys.h"

#include <xkbcommon/xkbcommon.h>

#include <cctype>
#include <cstdio>

#include "util/ascii.h"
#include "util/utf8.h"

namespace cu {
namespace {

struct alias {
  std::string_view name;  // Lower case.
  keysym_t sym;
};

// Names models and people use that are not X keysym names, or that X spells
// differently. Matched case-insensitively before the keysym names. "meta",
// "cmd" and "win" mean the key browsers call metaKey: Super on X.
constexpr alias kAliases[] = {
    {"enter", XKB_KEY_Return},       {"return", XKB_KEY_Return},
    {"esc", XKB_KEY_Escape},         {"escape", XKB_KEY_Escape},
    {"ctrl", XKB_KEY_Control_L},     {"control", XKB_KEY_Control_L},
    {"lctrl", XKB_KEY_Control_L},    {"rctrl", XKB_KEY_Control_R},
    {"alt", XKB_KEY_Alt_L},          {"option", XKB_KEY_Alt_L},
    {"opt", XKB_KEY_Alt_L},          {"lalt", XKB_KEY_Alt_L},
    {"ralt", XKB_KEY_Alt_R},         {"altgr", XKB_KEY_ISO_Level3_Shift},
    {"shift", XKB_KEY_Shift_L},      {"lshift", XKB_KEY_Shift_L},
    {"rshift", XKB_KEY_Shift_R},     {"super", XKB_KEY_Super_L},
    {"cmd", XKB_KEY_Super_L},        {"command", XKB_KEY_Super_L},
    {"win", XKB_KEY_Super_L},        {"windows", XKB_KEY_Super_L},
    {"meta", XKB_KEY_Super_L},       {"pgup", XKB_KEY_Prior},
    {"pageup", XKB_KEY_Prior},       {"page_up", XKB_KEY_Prior},
    {"pgdn", XKB_KEY_Next},          {"pagedown", XKB_KEY_Next},
    {"page_down", XKB_KEY_Next},     {"del", XKB_KEY_Delete},
    {"delete", XKB_KEY_Delete},      {"backspace", XKB_KEY_BackSpace},
    {"bksp", XKB_KEY_BackSpace},     {"ins", XKB_KEY_Insert},
    {"tab", XKB_KEY_Tab},            {"space", XKB_KEY_space},
    {"spacebar", XKB_KEY_space},     {"up", XKB_KEY_Up},
    {"down", XKB_KEY_Down},          {"left", XKB_KEY_Left},
    {"right", XKB_KEY_Right},        {"arrowup", XKB_KEY_Up},
    {"arrowdown", XKB_KEY_Down},     {"arrowleft", XKB_KEY_Left},
    {"arrowright", XKB_KEY_Right},   {"capslock", XKB_KEY_Caps_Lock},
    {"numlock", XKB_KEY_Num_Lock},   {"printscreen", XKB_KEY_Print},
    {"prtsc", XKB_KEY_Print},        {"context_menu", XKB_KEY_Menu},
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// s in quotes; enough of a long one to recognise it, not all of it.
std::string quoted(std::string_view s) {
  constexpr size_t kEcho = 80;
  std::string out = "\"";
  out.append(s.substr(0, kEcho));
  out += '"';
  if (s.size() > kEcho) out += "...";
  return out;
}

error bad_key(std::string_view what, std::string_view text) {
  std::string msg = "Invalid argument \"text\": ";
  msg.append(what);
  msg += " in ";
  msg += quoted(text);
  msg += "; expected key names joined by '+', e.g. \"ctrl+s\", \"alt+Tab\" or \"Return\"";
  return make_error(errc::invalid_argument, std::move(msg));
}

}  // namespace

result<keysym_t> parse_key_name(std::string_view name) {
  if (name.empty()) return make_error(errc::invalid_argument, "empty key name");
  for (const alias& a : kAliases) {
    if (iequals(name, a.name)) return a.sym;
  }
  // A single character names the key that types it; case matters here, as
  // in xdotool: "A" is shift+a.
  size_t i = 0;
  char32_t cp = 0;
  if (next_code_point(name, &i, &cp) && i == name.size()) {
    if (keysym_t sym = xkb_utf32_to_keysym(cp); sym != XKB_KEY_NoSymbol && cp >= 0x20) {
      return sym;
    }
  }
  std::string z(name);
  keysym_t sym = xkb_keysym_from_name(z.c_str(), XKB_KEYSYM_NO_FLAGS);
  if (sym == XKB_KEY_NoSymbol) sym = xkb_keysym_from_name(z.c_str(), XKB_KEYSYM_CASE_INSENSITIVE);
  if (sym == XKB_KEY_NoSymbol) {
    return make_error(errc::invalid_argument, "unknown key " + quoted(name));
  }
  return sym;
}

result<std::vector<key_chord>> parse_key_sequence(std::string_view text) {
  // Key names are printable: a control character (a NUL above all, which
  // would end the name X looks up) is refused, not silently cut at.
  for (size_t i = 0; i < text.size();) {
    size_t at = i;
    char32_t cp = 0;
    if (!next_code_point(text, &i, &cp)) {
      return make_error(errc::invalid_argument,
                        "Invalid argument \"text\": expected UTF-8 key names, got a malformed "
                        "byte sequence at byte " + std::to_string(at));
    }
    if ((cp < 0x20 && !is_space(char(cp))) || (cp >= 0x7f && cp < 0xa0)) {
      char hex[16];
      snprintf(hex, sizeof hex, "U+%04X", unsigned(cp));
      return bad_key(std::string("control character ") + hex + " at byte " + std::to_string(at),
                     text);
    }
  }
  std::vector<key_chord> chords;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    size_t end = pos;
    while (end < text.size() && !is_space(text[end])) ++end;
    if (end == pos) break;
    std::string_view word = text.substr(pos, end - pos);
    pos = end;

    // Split on '+'; an empty name followed by another empty one (or a lone
    // "+") is the plus key itself.
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t k = 0; k <= word.size(); ++k) {
      if (k == word.size() || word[k] == '+') {
        parts.push_back(word.substr(start, k - start));
        start = k + 1;
      }
    }
    key_chord chord;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].empty()) {
        if (k + 1 < parts.size() && parts[k + 1].empty()) {
          chord.keys.push_back(XKB_KEY_plus);
          ++k;
          continue;
        }
        return bad_key("an empty key name", text);
      }
      auto sym = parse_key_name(parts[k]);
      if (!sym) return bad_key(sym.err().message, text);
      chord.keys.push_back(*sym);
    }
    if (chord.keys.size() > kMaxChordKeys) {
      return bad_key(std::to_string(chord.keys.size()) + " keys in one chord (at most " +
                         std::to_string(kMaxChordKeys) + " can be held together)",
                     text);
    }
    chords.push_back(std::move(chord));
  }
  if (chords.empty()) return bad_key("no key", text);
  return chords;
}

result<std::vector<typed_char>> keystrokes_for_text(std::string_view utf8, size_t* characters) {
  std::vector<typed_char> out;
  out.reserve(utf8.size());
  size_t count = 0;
  size_t i = 0;
  while (i < utf8.size()) {
    char32_t cp = 0;
    if (!next_code_point(utf8, &i, &cp)) {
      return make_error(errc::invalid_argument,
                        "Invalid argument \"text\": expected UTF-8 text, got a malformed byte "
                        "sequence at byte " + std::to_string(i));
    }
    ++count;
    if (cp == '\r') {
      // "\r\n" is one line break, typed once.
      if (i < utf8.size() && utf8[i] == '\n') continue;
      cp = '\n';
    }
    keysym_t sym = 0;
    if (cp == '\n') {
      sym = XKB_KEY_Return;
    } else if (cp == '\t') {
      sym = XKB_KEY_Tab;
    } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
      char hex[16];
      snprintf(hex, sizeof hex, "U+%04X", unsigned(cp));
      return make_error(errc::invalid_argument,
                        std::string("Invalid argument \"text\": control character ") + hex +
                            " cannot be typed (use the key tool for keys such as Escape)");
    } else {
      sym = xkb_utf32_to_keysym(cp);
    }
    if (sym == XKB_KEY_NoSymbol) {
      char hex[16];
      snprintf(hex, sizeof hex, "U+%04X", unsigned(cp));
      return make_error(errc::invalid_argument,
                        std::string("Invalid argument \"text\": character ") + hex +
                            " has no keysym");
    }
    out.push_back({sym, cp});
  }
  *characters = count;
  return out;
}

bool is_system_combo(const key_chord& chord) {
  bool ctrl = false, alt = false, other_alt = false, ctrl_with = false;
  for (keysym_t k : chord.keys) {
    switch (k) {
      case XKB_KEY_Super_L: case XKB_KEY_Super_R:
      case XKB_KEY_Hyper_L: case XKB_KEY_Hyper_R:
      case XKB_KEY_Meta_L: case XKB_KEY_Meta_R:
      case XKB_KEY_Print: case XKB_KEY_Sys_Req:
        return true;
      case XKB_KEY_Control_L: case XKB_KEY_Control_R: ctrl = true; break;
      case XKB_KEY_Alt_L: case XKB_KEY_Alt_R: alt = true; break;
      case XKB_KEY_Tab: case XKB_KEY_ISO_Left_Tab: case XKB_KEY_space:
        other_alt = true;
        break;
      case XKB_KEY_Escape:
        other_alt = true;
        ctrl_with = true;
        break;
      default:
        if (k >= XKB_KEY_F1 && k <= XKB_KEY_F35) other_alt = true;
        // The XF86 keys of power, sessions, screens and virtual terminals.
        if ((k >= XKB_KEY_XF86Switch_VT_1 && k <= XKB_KEY_XF86Switch_VT_12) ||
            k == XKB_KEY_XF86PowerOff || k == XKB_KEY_XF86PowerDown ||
            k == XKB_KEY_XF86Sleep || k == XKB_KEY_XF86Standby || k == XKB_KEY_XF86Suspend ||
            k == XKB_KEY_XF86Hibernate || k == XKB_KEY_XF86LogOff ||
            k == XKB_KEY_XF86ScreenSaver || k == XKB_KEY_XF86Ungrab ||
            k == XKB_KEY_XF86ClearGrab || k == XKB_KEY_XF86Display ||
            k == XKB_KEY_XF86Close || k == XKB_KEY_XF86RotateWindows || k == XKB_KEY_Execute ||
            is_server_key(k)) {
          return true;
        }
        break;
    }
  }
  return (ctrl && alt) || (alt && other_alt) || (ctrl && ctrl_with);
}

bool is_server_key(keysym_t k) {
  if (k >= XKB_KEY_XF86Switch_VT_1 && k <= XKB_KEY_XF86Switch_VT_12) return true;
  // The XKB control keysyms: AccessX_Enable .. AudibleBell_Enable
  // (0xfe70-0xfe7a), and the pointer keys Pointer_Left .. Pointer_Drag5
  // (0xfee0-0xfefd: buttons pressed where the pointer is, MouseKeys).
  if (k >= XKB_KEY_AccessX_Enable && k <= XKB_KEY_AudibleBell_Enable) return true;
  if (k >= XKB_KEY_Pointer_Left && k <= XKB_KEY_Pointer_Drag5) return true;
  switch (k) {
    case XKB_KEY_Terminate_Server:
    case XKB_KEY_XF86Ungrab:
    case XKB_KEY_XF86ClearGrab:
    case XKB_KEY_XF86LogGrabInfo:
    case XKB_KEY_XF86LogWindowTree:
    case XKB_KEY_XF86Next_VMode:
    case XKB_KEY_XF86Prev_VMode:
      return true;
    default:
      return false;
  }
}

bool is_server_chord(const std::vector<keysym_t>& held) {
  bool ctrl = false, alt = false, special = false;
  for (keysym_t k : held) {
    if (is_server_key(k)) return true;
    switch (k) {
      case XKB_KEY_Control_L: case XKB_KEY_Control_R: ctrl = true; break;
      case XKB_KEY_Alt_L: case XKB_KEY_Alt_R: case XKB_KEY_Meta_L: case XKB_KEY_Meta_R:
        alt = true;
        break;
      case XKB_KEY_BackSpace: case XKB_KEY_KP_Divide: case XKB_KEY_KP_Multiply:
      case XKB_KEY_KP_Add: case XKB_KEY_KP_Subtract:
        special = true;
        break;
      default:
        if (k >= XKB_KEY_F1 && k <= XKB_KEY_F12) special = true;
        break;
    }
  }
  return ctrl && alt && special;
}

bool is_modifier_key(keysym_t k) {
  switch (k) {
    case XKB_KEY_Shift_L: case XKB_KEY_Shift_R:
    case XKB_KEY_Control_L: case XKB_KEY_Control_R:
    case XKB_KEY_Alt_L: case XKB_KEY_Alt_R:
    case XKB_KEY_Super_L: case XKB_KEY_Super_R:
    case XKB_KEY_Meta_L: case XKB_KEY_Meta_R:
    case XKB_KEY_Hyper_L: case XKB_KEY_Hyper_R:
    case XKB_KEY_ISO_Level3_Shift:
      return true;
    default:
      return false;
  }
}

}  // namespace cu
