#include "grammar.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>

#include "toolsets/computer/batch.h"
#include "toolsets/registry.h"

namespace cu_fuzz {
namespace {

using sv = std::string_view;

size_t pick(rng& r, size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(r); }
bool chance(rng& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }
template <class T, size_t N>
const T& one_of(rng& r, const T (&a)[N]) {
  return a[pick(r, N)];
}

// Strings as JSON string text (escapes kept, raw bytes kept): valid and
// invalid UTF-8, lone surrogates, NUL and control characters, quoting.
constexpr sv kStrings[] = {
    "", "a", "hello world", "\\u0000", "a\\u0000b", "\\ud800", "\\udc00", "\\ud800x",
    "\\udbff\\udfff", "\\ud83d\\ude00", "\xff", "a\xfe" "b", "\xc3\x28", "\xed\xa0\x80",
    "\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x82", "\x01", "\x1f", "\x7f", "\\n", "\\r\\n", "\\t",
    "\\b\\f", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xf0\x9f\x98\x80",
    "\xe2\x80\xae" "abc", "\\\\", "\\\"", "\\/", "\\u00e9", "\\uffff", "\\ufeff", "\\uD800\\u0041",
    "%s%n%x", " ", "  padded  ", "-", "0", "null", "\\x41", "\\u12", "\\", "\\q",
};
// Key syntax for key and hold_key.
constexpr sv kKeys[] = {
    "Return", "ctrl+s", "alt+Tab", "ctrl+alt+Delete", "super", "super+l", "shift+", "+", "++",
    "ctrl+ctrl", "a+a", "F1", "F35", "F36", "XF86AudioMute", "KP_Enter", "space", "minus",
    "plus", "BackSpace", "Escape", "0x41", "U1F600", "\xc3\xbc", "ctrl+\xc3\xa9", "Shift_L",
    "Caps_Lock", "NoSymbol", "VoidSymbol", "ctrl+shift+alt+super+meta+hyper+a", "cmd+c", "win",
    "A", "1", "ctrl + s", "Ctrl+S", "CTRL+s", "ctrl+\\u0000", "a+b+c+d+e+f+g+h+i+j+k+l+m",
    "\xf0\x9f\x98\x80", "ctrl+\xf0\x9f\x98\x80", "dead_acute", "ISO_Level3_Shift", "Mode_switch",
    "ctrl+Return", "Return+Return", "0", "00", "ctrl+", "+a", "super+shift+Delete",
    // Keys that reach the X server itself (docs/grants.md), alone, chorded
    // and behind other keys.
    "Terminate_Server", "ctrl+alt+BackSpace", "XF86Switch_VT_1", "ctrl+alt+F1",
    "XF86LogGrabInfo", "XF86Next_VMode", "ctrl+alt+KP_Multiply", "Pointer_Button1",
    "Pointer_EnableKeys", "MouseKeys_Enable", "StickyKeys_Enable", "a Terminate_Server",
    "XF86Close", "XF86RotateWindows", "Execute", "alt", "ctrl",
};
// The text of type.
constexpr sv kTexts[] = {
    "Hello, World!\\n", "a", "\\t\\t", "\xc3\xa9\xc3\xa8", "\xf0\x9f\x98\x80\xf0\x9f\x98\x81",
    "line1\\nline2\\r\\n", "\xe6\x97\xa5\xe6\x9c\xac", "\\u0000", "\\ud800", "\xff\xfe",
    "ctrl+s", " ", "\\b", "\\u001b[A", "\xcc\x81",
};
// Modifier strings (the "text" of clicks and scroll).
constexpr sv kModifiers[] = {"ctrl", "shift+alt", "super", "ctrl+shift", "alt", "meta",
                             "foo", "", "ctrl+a", "shift+", "+", "ctrl+ctrl", "Control_L",
                             // Not modifiers: refused (docs/grants.md).
                             "t", "space", "slash t", "Return", "lshift+ralt+altgr",
                             "Terminate_Server", "ctrl+alt+BackSpace", "Hyper_R"};
constexpr sv kApps[] = {"xclock", "xterm", "firefox", "Firefox", "org.gnome.Terminal",
                        "/bin/sh", "/usr/bin/xclock", "../x", "sh -c true", "", "xclock --help",
                        "a", "\xc3\xa9", "\\u0000", "*", ".", "..", "~", "$HOME",
                        "XTerm", "code", "libreoffice --writer", "uxterm", "mail",
                        "Mail", "keepassxc", "x-terminal-emulator", "python3", "inbox"};
// Window ids: plausible ones (no X connection here, so none exists), and
// what the id parser must refuse.
constexpr sv kWindows[] = {"0x400001", "0x1", "1", "0x1fffffff", "0x20000000", "0", "0x",
                           "-1", "0x1a00022 ", "4194305", "99999999999", "0xZZ", ""};
constexpr sv kDisplays[] = {"fuzz", "auto", "0", "1", "-1", "2", "99999999999999999999",
                            ":0", ":10", "HDMI-1", "primary", "DP-1", "", "screen", "1.5"};
constexpr sv kVersions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25",
                            "2099-01-01", "", "2025-03-26 "};
constexpr sv kLevels[] = {"debug", "info", "notice", "warning", "error", "critical", "alert",
                          "emergency", "verbose", "", "DEBUG", "warn"};
constexpr sv kMethods[] = {"initialize", "ping", "tools/list", "tools/call", "logging/setLevel",
                           "resources/list", "prompts/list", "completion/complete",
                           "tools/call/", "", "TOOLS/CALL", "initialize ", "\\u0000",
                           "notifications/cancelled", "notifications/initialized",
                           "resources/read", "sampling/createMessage", "roots/list",
                           "tools/list\\u0000", "\xff"};
constexpr sv kNotifications[] = {"notifications/initialized", "notifications/progress",
                                 "notifications/roots/list_changed", "notifications/message",
                                 "notifications/whatever", "$/cancelRequest",
                                 "notifications/cancelled/", "ping", "tools/call"};
// Ids and progress tokens beyond the everyday ones: every JSON type, the
// edges of int64 and uint64, numbers simdjson refuses.
constexpr sv kOddIds[] = {
    "0", "-1", "9223372036854775807", "9223372036854775808", "18446744073709551615",
    "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1e400", "-0",
    "1.5", "1.0", "1e2", "-1e-400", "null", "true", "false", "{}", "[]", "{\"a\":1}", "[1]",
    "\"\"", "\"\\u0000\"", "\"\\ud800\"", "\"\xff\"", "\"1\"", "00", "01", "+1", "NaN",
    "Infinity", "0x10", "123456789012345678901234567890",
};
constexpr sv kOddNumbers[] = {
    "-0", "0.0", "1e-9", "1e-320", "1e308", "-1e308", "1e400", "-1e400", "2147483647",
    "2147483648", "4294967296", "9007199254740993", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "-9223372036854775808", "-9223372036854775809", "0.5", "1.5", "2.5", "3.0", "1E2",
    "1e+2", "0.1e1", "123456789012345678901234567890", "NaN", "Infinity", "-Infinity", "01",
    ".5", "5.", "+1", "-", "1e", "0x1f",
};

std::string fmt_double(double d) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

}  // namespace

grammar::grammar() {
  simdjson::dom::parser parser;
  // Every toolset's tools, with their schemas as tools/list gives them when
  // all are on (as the fuzzed server runs).
  std::vector<const cu::tool_def*> all;
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    for (const cu::tool_def& t : set.tools) all.push_back(&t);
  }
  for (const cu::tool_def* tp : all) {
    const cu::tool_def& t = *tp;
    tool_schema ts;
    ts.name = std::string(t.name);
    const std::string text = cu::input_schema_of(t, cu::every_toolset());
    simdjson::dom::element schema;
    if (parser.parse(text.data(), text.size()).get(schema) != simdjson::SUCCESS) {
      fprintf(stderr, "fuzz: the input schema of %s does not parse\n", ts.name.c_str());
      abort();
    }
    std::vector<std::string> required;
    simdjson::dom::array req;
    if (schema["required"].get(req) == simdjson::SUCCESS) {
      for (auto x : req) {
        std::string_view s;
        if (x.get(s) == simdjson::SUCCESS) required.emplace_back(s);
      }
    }
    simdjson::dom::object props;
    if (schema["properties"].get(props) == simdjson::SUCCESS) {
      for (auto field : props) {
        prop_schema p;
        p.name = std::string(field.key);
        simdjson::dom::element v = field.value;
        std::string_view s;
        double d;
        uint64_t n;
        if (v["type"].get(s) == simdjson::SUCCESS) p.type = std::string(s);
        simdjson::dom::array e;
        if (v["enum"].get(e) == simdjson::SUCCESS) {
          for (auto x : e) {
            if (x.get(s) == simdjson::SUCCESS) p.choices.emplace_back(s);
          }
        }
        if (v["minimum"].get(d) == simdjson::SUCCESS) p.minimum = d;
        if (v["maximum"].get(d) == simdjson::SUCCESS) p.maximum = d;
        if (v["exclusiveMinimum"].get(d) == simdjson::SUCCESS) p.exclusive_minimum = d;
        if (v["minItems"].get(n) == simdjson::SUCCESS) p.min_items = n;
        if (v["maxItems"].get(n) == simdjson::SUCCESS) p.max_items = n;
        if (v["items"]["type"].get(s) == simdjson::SUCCESS) p.item_type = std::string(s);
        p.required = std::find(required.begin(), required.end(), p.name) != required.end();
        ts.props.push_back(std::move(p));
      }
    }
    tools_.push_back(std::move(ts));
  }
  if (tools_.empty()) {
    fprintf(stderr, "fuzz: the registry has no tools\n");
    abort();
  }
}

const tool_schema& grammar::random_tool(rng& r) const { return tools_[pick(r, tools_.size())]; }

const tool_schema* grammar::find(std::string_view name) const {
  for (const tool_schema& t : tools_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string grammar::initialize_line(std::string_view version, long long id) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" + std::string(version) +
         "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}";
}

jvalue grammar::id(rng& r) {
  size_t c = pick(r, 100);
  if (c < 50) return jvalue::integer(static_cast<long long>(1 + pick(r, 4)));
  if (c < 68) {
    static constexpr sv kNames[] = {"a", "b", "1", "req-1"};
    return jvalue::string(one_of(r, kNames));
  }
  if (c < 75) return jvalue::string_text(std::string(one_of(r, kStrings)));
  return jvalue::raw(std::string(one_of(r, kOddIds)));
}

std::string grammar::method(rng& r) { return std::string(one_of(r, kMethods)); }

jvalue grammar::string_value(rng& r, std::string_view hint, size_t budget) {
  if (chance(r, 0.04) && budget > 64) {
    // A long string: up to 64 KiB of one repeated piece.
    static constexpr size_t kLens[] = {100, 255, 256, 1024, 4097, 16384, 40000, 65535};
    size_t n = std::min(one_of(r, kLens), budget - 32);
    static constexpr sv kPieces[] = {"a", "\\u0000", "\xc3\xa9", "\xff", "ctrl+", "\\ud800",
                                     "\xf0\x9f\x98\x80", " ", "\\n"};
    sv piece = one_of(r, kPieces);
    std::string s;
    while (s.size() + piece.size() <= n) s += piece;
    return jvalue::string_text(std::move(s));
  }
  if (chance(r, 0.25)) return jvalue::string_text(std::string(one_of(r, kStrings)));
  if (hint == "key") return jvalue::string_text(std::string(one_of(r, kKeys)));
  if (hint == "type") return jvalue::string_text(std::string(one_of(r, kTexts)));
  if (hint == "modifiers") return jvalue::string_text(std::string(one_of(r, kModifiers)));
  if (hint == "app") return jvalue::string_text(std::string(one_of(r, kApps)));
  if (hint == "display") return jvalue::string_text(std::string(one_of(r, kDisplays)));
  if (hint == "window") return jvalue::string_text(std::string(one_of(r, kWindows)));
  if (hint == "tool") {
    if (chance(r, 0.9)) return jvalue::string(random_tool(r).name);
    static constexpr sv kOdd[] = {"", "Screenshot", "screenshot ", "computer", "bash",
                                  "left_click\\u0000", "\xff"};
    return jvalue::string_text(std::string(one_of(r, kOdd)));
  }
  return jvalue::string_text(std::string(one_of(r, kStrings)));
}

jvalue grammar::number(rng& r, const prop_schema* p) {
  if (chance(r, 0.12)) return jvalue::raw(std::string(one_of(r, kOddNumbers)));
  double lo = 0, hi = 2000;
  bool integral = p != nullptr && p->type == "integer";
  if (p != nullptr) {
    if (p->minimum) lo = *p->minimum;
    if (p->exclusive_minimum) lo = *p->exclusive_minimum;
    if (p->maximum) hi = *p->maximum;
  }
  switch (pick(r, 12)) {
    case 0: return jvalue::number(fmt_double(lo));
    case 1: return jvalue::number(fmt_double(hi));
    case 2: return jvalue::number(fmt_double(lo - 1));
    case 3: return jvalue::number(fmt_double(hi + 1));
    case 4: return jvalue::number(fmt_double(hi + 0.0001));
    case 5: return jvalue::number(fmt_double(lo + 1e-9));
    case 6: return jvalue::integer(-1);
    case 7: return jvalue::number(integral ? "3.0" : "0.25");
    default: {
      // Mostly small values: a delay or a wait of seconds makes a slow
      // input, and slow inputs are only worth finding now and then.
      double top = std::min(hi, chance(r, 0.9) ? lo + 5 : hi);
      double v = std::uniform_real_distribution<double>(lo, std::max(lo, top))(r);
      if (integral || chance(r, 0.5)) return jvalue::integer((long long)(v));
      return jvalue::number(fmt_double(v));
    }
  }
}

jvalue grammar::wrong_value(rng& r, const std::string& type, size_t budget) {
  for (;;) {
    switch (pick(r, 9)) {
      case 0: return jvalue::null();
      case 1:
        if (type == "boolean") continue;
        return jvalue::boolean(chance(r, 0.5));
      case 2:
        if (type == "number") continue;
        return type == "integer" ? jvalue::number("1.5") : number(r, nullptr);
      case 3:
        if (type == "string") continue;
        return string_value(r, "", budget);
      case 4:
        if (type == "array") continue;
        return jvalue::array();
      case 5:
        if (type == "array") continue;
        return jvalue::array().push(jvalue::integer(1)).push(jvalue::integer(2));
      case 6:
        if (type == "object") continue;
        return jvalue::object();
      case 7:
        if (type == "object") continue;
        return jvalue::object().set("a", jvalue::integer(1));
      default:
        if (type == "string") continue;
        return jvalue::string("5");  // A number in a string.
    }
  }
}

jvalue grammar::any_value(rng& r, size_t budget, int depth) {
  switch (pick(r, depth > 2 ? 5 : 8)) {
    case 0: return jvalue::null();
    case 1: return jvalue::boolean(chance(r, 0.5));
    case 2: return number(r, nullptr);
    case 3: return string_value(r, "", budget);
    case 4: return id(r);
    case 5: {
      jvalue a = jvalue::array();
      for (size_t i = pick(r, 4); i > 0; --i) a.push(any_value(r, budget / 4, depth + 1));
      return a;
    }
    case 6: {
      jvalue o = jvalue::object();
      for (size_t i = pick(r, 4); i > 0; --i) {
        o.keys.push_back(string_value(r, "", 64).text);
        o.kids.push_back(any_value(r, budget / 4, depth + 1));
      }
      return o;
    }
    default: return deep(r, 1 + pick(r, 40));
  }
}

jvalue grammar::deep(rng& r, size_t levels) {
  std::string open, close;
  bool arrays = chance(r, 0.5);
  for (size_t i = 0; i < levels; ++i) {
    open += arrays ? "[" : "{\"a\":";
    close += arrays ? "]" : "}";
  }
  return jvalue::raw(open + (arrays ? "" : "1") + close);
}

jvalue grammar::prop_value(rng& r, const prop_schema& p, size_t budget, int depth) {
  if (chance(r, 0.15)) return wrong_value(r, p.type, budget);
  if (!p.choices.empty()) {
    if (chance(r, 0.85)) return jvalue::string(p.choices[pick(r, p.choices.size())]);
    static constexpr sv kOdd[] = {"", "UP", "Up", "up ", "sideways", "each\\u0000", "none\xff"};
    return jvalue::string_text(std::string(one_of(r, kOdd)));
  }
  if (p.type == "boolean") return jvalue::boolean(chance(r, 0.5));
  if (p.type == "integer" || p.type == "number") return number(r, &p);
  if (p.type == "string") {
    std::string hint = p.name;
    if (p.name == "text") hint = "modifiers";  // Overridden by arguments() for key tools.
    return string_value(r, hint, budget);
  }
  if (p.type == "array") {
    if (p.item_type == "object") return actions(r, budget, depth);
    size_t n = p.min_items.value_or(pick(r, 4));
    if (chance(r, 0.15)) n = pick(r, 7);  // Too few or too many.
    jvalue a = jvalue::array();
    for (size_t i = 0; i < n; ++i) {
      if (p.item_type == "string") {
        a.push(chance(r, 0.9) ? string_value(r, "app", budget / 4) : wrong_value(r, "string", 64));
      } else if (chance(r, 0.9)) {
        prop_schema item;
        item.type = p.item_type;
        item.minimum = -50;
        item.maximum = 1500;
        a.push(number(r, &item));
      } else {
        a.push(wrong_value(r, p.item_type, 64));
      }
    }
    return a;
  }
  if (p.type == "object") return jvalue::object();
  return any_value(r, budget, depth);
}

jvalue grammar::actions(rng& r, size_t budget, int depth) {
  size_t n;
  size_t c = pick(r, 100);
  if (c < 55) {
    n = 1 + pick(r, 4);
  } else if (c < 62) {
    n = 0;
  } else if (c < 67) {
    n = 100;
  } else if (c < 72) {
    n = 101;
  } else {
    n = 5 + pick(r, 16);
  }
  jvalue a = jvalue::array();
  bool many = n > 20;
  for (size_t i = 0; i < n; ++i) {
    if (chance(r, 0.04)) {
      a.push(wrong_value(r, "object", 64));  // An action that is not an object.
      continue;
    }
    jvalue step = jvalue::object();
    const tool_schema* t = &random_tool(r);
    if (many) {
      // A hundred small steps that mostly succeed without a display.
      static constexpr sv kCheap[] = {"list_granted_applications", "wait", "switch_display",
                                      "request_access", "cursor_position", "screenshot"};
      t = find(one_of(r, kCheap));
    }
    if (t->name == "computer_batch" && depth >= 2) t = find("wait");
    if (chance(r, 0.95)) {
      step.set("name", chance(r, 0.95) ? jvalue::string(t->name) : string_value(r, "tool", 64));
    } else if (chance(r, 0.5)) {
      step.set("name", wrong_value(r, "string", 64));
    }
    size_t c2 = pick(r, 100);
    if (c2 < 80) {
      step.set("arguments", arguments(r, *t, many ? 128 : budget / (n + 1), depth + 1));
    } else if (c2 < 85) {
      step.set("arguments", jvalue::null());
    } else if (c2 < 90) {
      step.set("arguments", wrong_value(r, "object", 64));
    }  // else: no arguments at all.
    // A key an action does not take refuses the whole batch before it runs.
    if (!many && chance(r, 0.01)) step.set("extra", any_value(r, 64, 2));
    // The vision toolset's sequences: a step's capture and its condition.
    if (chance(r, 0.06)) {
      step.set("capture", chance(r, 0.9) ? jvalue::boolean(chance(r, 0.5))
                                         : wrong_value(r, "boolean", 64));
    }
    if (chance(r, 0.08)) step.set("if", condition(r, many ? 128 : budget / (n + 1), depth));
    a.push(std::move(step));
  }
  return a;
}

jvalue grammar::condition(rng& r, size_t budget, int depth) {
  if (chance(r, 0.05)) return wrong_value(r, "object", 64);
  jvalue c = jvalue::object();
  // The server's own conditions, each probed by a call of its tool.
  const std::span<const cu::condition_kind> kinds = cu::all_conditions();
  const cu::condition_kind k = kinds[pick(r, kinds.size())];
  // The probe's arguments from its tool's schema (find_text may not exist).
  const tool_schema* t = find(cu::condition_tool(k));
  jvalue args = t != nullptr && chance(r, 0.9) ? arguments(r, *t, budget, depth + 1)
                                               : wrong_value(r, "object", 64);
  c.set(chance(r, 0.95) ? cu::condition_name(k) : sv("image_here"), std::move(args));
  // Now and then a second condition, which is refused.
  if (chance(r, 0.04)) c.set("window_exists", jvalue::object());
  return c;
}

jvalue grammar::arguments(rng& r, const tool_schema& t, size_t budget, int depth) {
  jvalue o = jvalue::object();
  for (const prop_schema& p : t.props) {
    if (!chance(r, p.required ? 0.92 : 0.55)) continue;
    jvalue v;
    if (p.type == "string" && p.name == "text" && (t.name == "key" || t.name == "hold_key")) {
      v = chance(r, 0.85) ? string_value(r, "key", budget) : wrong_value(r, "string", budget);
    } else if (p.type == "string" && p.name == "text" && t.name == "type") {
      v = chance(r, 0.85) ? string_value(r, "type", budget) : wrong_value(r, "string", budget);
    } else {
      v = prop_value(r, p, budget, depth);
    }
    o.set(p.name, std::move(v));
  }
  // An argument the tool does not take is refused before its handler runs
  // (src/toolsets/known_args.h), and in a batch step it stops the batch: often
  // enough at the top to keep that path covered, seldom in steps so that
  // batches still reach their later steps. Half are another tool's
  // argument names, the mistake a model makes (`text` on mouse_move).
  if (chance(r, depth == 0 ? 0.05 : 0.005)) {
    const tool_schema& other = random_tool(r);
    const bool borrowed = chance(r, 0.5) && !other.props.empty();
    o.set(borrowed ? sv(other.props[pick(r, other.props.size())].name) : sv("unknown_argument"),
          any_value(r, 64, 2));
  }
  if (chance(r, 0.04) && !o.kids.empty()) {
    size_t i = pick(r, o.kids.size());  // The same key twice.
    o.keys.push_back(o.keys[i]);
    o.kids.push_back(any_value(r, 64, 2));
  }
  // Deep nesting tests the parser, before any tool; "deep" is an argument
  // no tool takes, so in a step it is kept rare too.
  if (chance(r, depth == 0 ? 0.03 : 0.005)) o.set("deep", deep(r, 1 + pick(r, 2000)));
  return o;
}

jvalue grammar::tools_call_params(rng& r, size_t budget) {
  jvalue params = jvalue::object();
  const tool_schema& t = random_tool(r);
  size_t c = pick(r, 100);
  if (c < 94) {
    params.set("name", jvalue::string(t.name));
  } else if (c < 97) {
    params.set("name", string_value(r, "tool", 64));
  } else if (c < 99) {
    params.set("name", wrong_value(r, "string", 64));
  }  // else: no name.
  c = pick(r, 100);
  if (c < 88) {
    params.set("arguments", arguments(r, t, budget, 0));
  } else if (c < 92) {
    params.set("arguments", jvalue::null());
  } else if (c < 96) {
    params.set("arguments", wrong_value(r, "object", 64));
  }  // else: no arguments.
  if (chance(r, 0.25)) {
    jvalue meta = jvalue::object();
    if (chance(r, 0.9)) meta.set("progressToken", id(r));
    if (chance(r, 0.1)) meta.set("other", any_value(r, 64, 2));
    params.set("_meta", chance(r, 0.95) ? std::move(meta) : wrong_value(r, "object", 64));
  }
  return params;
}

jvalue grammar::notification(rng& r) {
  jvalue msg = jvalue::object();
  msg.set("jsonrpc", jvalue::string("2.0"));
  size_t c = pick(r, 100);
  if (c < 60) {
    msg.set("method", jvalue::string("notifications/cancelled"));
    size_t c2 = pick(r, 100);
    if (c2 < 75) {
      jvalue p = jvalue::object();
      if (chance(r, 0.95)) p.set("requestId", id(r));
      if (chance(r, 0.5)) p.set("reason", string_value(r, "", 64));
      msg.set("params", std::move(p));
    } else if (c2 < 88) {
      // No params at all.
    } else {
      msg.set("params", wrong_value(r, "object", 64));
    }
  } else if (c < 75) {
    msg.set("method", jvalue::string("notifications/initialized"));
    if (chance(r, 0.3)) msg.set("params", jvalue::object());
  } else if (c < 88) {
    msg.set("method", jvalue::string("notifications/progress"));
    jvalue p = jvalue::object();
    p.set("progressToken", id(r));
    p.set("progress", number(r, nullptr));
    if (chance(r, 0.5)) p.set("total", number(r, nullptr));
    msg.set("params", std::move(p));
  } else {
    msg.set("method", jvalue::string_text(std::string(one_of(r, kNotifications))));
    if (chance(r, 0.5)) msg.set("params", any_value(r, 128, 1));
  }
  return msg;
}

jvalue grammar::request(rng& r, size_t budget) {
  jvalue msg = jvalue::object();
  msg.set("jsonrpc", jvalue::string("2.0"));
  msg.set("id", id(r));
  size_t c = pick(r, 100);
  if (c < 70) {
    msg.set("method", jvalue::string("tools/call"));
    msg.set("params", tools_call_params(r, budget));
  } else if (c < 77) {
    msg.set("method", jvalue::string("initialize"));
    jvalue p = jvalue::object();
    if (chance(r, 0.9)) {
      p.set("protocolVersion", chance(r, 0.9)
                                   ? jvalue::string(one_of(r, kVersions))
                                   : wrong_value(r, "string", 64));
    }
    p.set("capabilities", jvalue::object());
    jvalue info = jvalue::object();
    info.set("name", jvalue::string("fuzz")).set("version", jvalue::string("1"));
    p.set("clientInfo", std::move(info));
    msg.set("params", std::move(p));
  } else if (c < 82) {
    msg.set("method", jvalue::string("ping"));
    if (chance(r, 0.3)) msg.set("params", jvalue::object());
  } else if (c < 86) {
    msg.set("method", jvalue::string("tools/list"));
    if (chance(r, 0.3)) msg.set("params", jvalue::object().set("cursor", string_value(r, "", 64)));
  } else if (c < 93) {
    msg.set("method", jvalue::string("logging/setLevel"));
    jvalue p = jvalue::object();
    if (chance(r, 0.92)) {
      p.set("level", chance(r, 0.9) ? jvalue::string(one_of(r, kLevels))
                                    : wrong_value(r, "string", 64));
    }
    msg.set("params", std::move(p));
  } else {
    msg.set("method", jvalue::string_text(method(r)));
    if (chance(r, 0.5)) msg.set("params", any_value(r, 128, 1));
  }
  return msg;
}

void grammar::perturb_envelope(rng& r, jvalue& msg, size_t budget) {
  switch (pick(r, 10)) {
    case 0: {  // No "jsonrpc", or a wrong one.
      jvalue* v = msg.get("jsonrpc");
      if (v != nullptr) {
        static constexpr sv kOdd[] = {"\"1.0\"", "2", "2.0", "null", "\"2.0 \"", "\"\""};
        *v = jvalue::raw(std::string(one_of(r, kOdd)));
      }
      break;
    }
    case 1: {  // Drop a member.
      if (!msg.kids.empty()) {
        size_t i = pick(r, msg.kids.size());
        msg.kids.erase(msg.kids.begin() + long(i));
        msg.keys.erase(msg.keys.begin() + long(i));
      }
      break;
    }
    case 2: {  // params of the wrong type.
      jvalue* v = msg.get("params");
      if (v != nullptr) *v = wrong_value(r, "object", 64);
      break;
    }
    case 3:  // A response, not a request.
      msg.set(chance(r, 0.5) ? "result" : "error", chance(r, 0.5) ? jvalue::object() : any_value(r, 64, 2));
      break;
    case 4: {  // method not a string.
      jvalue* v = msg.get("method");
      if (v != nullptr) *v = wrong_value(r, "string", 64);
      break;
    }
    case 5:  // The same key twice.
      if (!msg.kids.empty()) {
        size_t i = pick(r, msg.kids.size());
        msg.keys.push_back(msg.keys[i]);
        msg.kids.push_back(chance(r, 0.5) ? msg.kids[i] : any_value(r, budget / 4, 1));
      }
      break;
    case 6:  // An unknown member.
      msg.set(chance(r, 0.5) ? "extra" : "\\u0000", any_value(r, 64, 1));
      break;
    case 7:  // A key with odd bytes.
      if (!msg.keys.empty()) {
        msg.keys[pick(r, msg.keys.size())] += std::string(one_of(r, kStrings));
      }
      break;
    default: {  // Members in another order.
      std::vector<size_t> order(msg.kids.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), r);
      jvalue out = jvalue::object();
      for (size_t i : order) {
        out.keys.push_back(msg.keys[i]);
        out.kids.push_back(std::move(msg.kids[i]));
      }
      msg = std::move(out);
      break;
    }
  }
}

jvalue grammar::message(rng& r, size_t budget) {
  size_t c = pick(r, 100);
  jvalue msg;
  if (c < 68) {
    msg = request(r, budget);
  } else if (c < 84) {
    msg = notification(r);
  } else if (c < 94) {
    // A JSON-RPC batch array (only 2025-03-26 takes them).
    msg = jvalue::array();
    size_t n = chance(r, 0.08) ? 0 : 1 + pick(r, 6);
    for (size_t i = 0; i < n; ++i) {
      size_t k = pick(r, 100);
      if (k < 60) {
        msg.push(request(r, budget / (n + 1)));
      } else if (k < 88) {
        msg.push(notification(r));
      } else if (k < 94) {
        msg.push(jvalue::array());  // Nested arrays are refused.
      } else {
        msg.push(any_value(r, 64, 2));
      }
    }
    return msg;
  } else {
    return any_value(r, budget, 0);  // Not an object at all.
  }
  if (chance(r, 0.12)) perturb_envelope(r, msg, budget);
  return msg;
}

std::string grammar::line(rng& r, size_t budget) {
  size_t c = pick(r, 100);
  if (c < 3) {
    // Deep nesting: simdjson's limit is 1024 levels.
    static constexpr size_t kDepths[] = {100, 1023, 1024, 1025, 3000, 5000};
    size_t levels = std::min(one_of(r, kDepths), budget / 6 + 1);
    std::string d = write(deep(r, levels));
    if (chance(r, 0.5)) return d;
    return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" +
           random_tool(r).name + "\",\"arguments\":{\"text\":" + d + "}}}";
  }
  if (c < 6) {
    // Junk: a cut-off message, stray bytes, a lone bracket.
    switch (pick(r, 4)) {
      case 0: {
        std::string s = write(message(r, budget));
        return s.substr(0, pick(r, s.size() + 1));
      }
      case 1: {
        std::string s;
        for (size_t i = 1 + pick(r, 32); i > 0; --i) s += char(pick(r, 256));
        for (char& ch : s) {
          if (ch == '\n') ch = ' ';
        }
        return s;
      }
      case 2: {
        static constexpr sv kBits[] = {"{", "}", "[", "]", "\"", "null", "{}", "[]", "\t", " ",
                                       "\r", sv("\0", 1), "\xef\xbb\xbf{}", "1", "\"\\u0000\""};
        return std::string(one_of(r, kBits));
      }
      default: {
        // A valid message with a NUL or a control byte inside.
        std::string s = write(message(r, budget));
        static constexpr char kOdd[] = {'\0', '\x01', '\x1b', '\x7f', '\r'};
        s.insert(pick(r, s.size() + 1), 1, kOdd[pick(r, sizeof kOdd)]);
        return s;
      }
    }
  }
  std::string s = write(message(r, budget));
  if (chance(r, 0.05)) {
    // Whitespace JSON allows between tokens, where a line reader may not
    // expect it.
    static constexpr sv kSpace[] = {" ", "\t", "  \t "};
    s.insert(0, one_of(r, kSpace));
    s += one_of(r, kSpace);
  }
  return s;
}

}  // namespace cu_fuzz
