#include "toolsets/args.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/json_writer.h"
#include "util/str_cat.h"
#include "util/utf8.h"

namespace cu {

using simdjson::dom::element;
using simdjson::dom::element_type;

namespace {

// The largest magnitude a region element may have: X coordinates are 16-bit.
constexpr int kMaxRegionValue = 32767;

const char* type_name(element e) {
  switch (e.type()) {
    case element_type::ARRAY: return "an array";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "a number";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "something else";
}

// The argument, or nothing when it is absent or null.
std::optional<element> lookup(simdjson::dom::object args, std::string_view name) {
  element e;
  if (args.at_key(name).get(e) != simdjson::SUCCESS) return std::nullopt;
  if (e.is_null()) return std::nullopt;
  return e;
}

error missing(std::string_view name, std::string_view expected) {
  return make_error(errc::invalid_argument, "Missing required argument \"" + std::string(name) +
                                                "\": expected " + std::string(expected));
}

bool as_number(element e, double* out) {
  if (e.is_int64()) {
    *out = double(int64_t(e));
  } else if (e.is_uint64()) {
    *out = double(uint64_t(e));
  } else if (e.is_double()) {
    *out = double(e);
  } else {
    return false;
  }
  return std::isfinite(*out);
}

}  // namespace

error invalid_argument(std::string_view name, std::string_view expected, std::string_view got) {
  std::string msg = "Invalid argument \"" + std::string(name) + "\": expected " +
                    std::string(expected);
  if (!got.empty()) msg += ", got " + std::string(got);
  return make_error(errc::invalid_argument, std::move(msg));
}

error unknown_argument(std::string_view name, std::string_view tool,
                       std::span<const std::string> takes, std::string_view note) {
  constexpr size_t kMaxShown = 64;
  std::string_view shown = name;
  if (shown.size() > kMaxShown) {
    // Back to the start of a code point, so the cut leaves valid UTF-8.
    size_t cut = kMaxShown;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    shown = name.substr(0, cut);
  }
  std::string msg = "Invalid argument ";
  append_json_string(msg, shown);
  if (shown.size() < name.size()) msg.insert(msg.size() - 1, "...");
  msg += str_cat(": ", tool, " takes ");
  if (takes.empty()) msg += "no arguments";
  for (size_t i = 0; i < takes.size(); ++i) msg += str_cat(i == 0 ? "" : ", ", takes[i]);
  if (!note.empty()) msg += str_cat("; ", note);
  return make_error(errc::invalid_argument, std::move(msg));
}

result<bool> arg_bool(simdjson::dom::object args, std::string_view name, bool fallback) {
  auto e = lookup(args, name);
  if (!e) return fallback;
  if (!e->is_bool()) return invalid_argument(name, "a boolean", type_name(*e));
  return bool(*e);
}

result<std::string_view> arg_string(simdjson::dom::object args, std::string_view name) {
  auto e = lookup(args, name);
  if (!e) return missing(name, "a string");
  if (!e->is_string()) return invalid_argument(name, "a string", type_name(*e));
  return std::string_view(*e);
}

result<std::string_view> arg_name(simdjson::dom::object args, std::string_view name,
                                  size_t max_bytes) {
  auto v = arg_string(args, name);
  if (!v) return v;
  if (v->empty()) return invalid_argument(name, "a non-empty name");
  if (v->size() > max_bytes) {
    return invalid_argument(name, "a name of at most " + std::to_string(max_bytes) + " bytes",
                            std::to_string(v->size()) + " bytes");
  }
  for (size_t i = 0; i < v->size();) {
    size_t at = i;
    char32_t cp = 0;
    if (!next_code_point(*v, &i, &cp)) {
      return invalid_argument(name, "UTF-8 text",
                              "a malformed byte sequence at byte " + std::to_string(at));
    }
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
      char got[64];
      snprintf(got, sizeof got, "control character U+%04X at byte %zu", unsigned(cp), at);
      return invalid_argument(name, "a name without control characters", got);
    }
  }
  return v;
}

result<std::array<int, 4>> arg_region(simdjson::dom::object args, std::string_view name) {
  constexpr std::string_view kExpected = "an array of 4 integers [x0, y0, x1, y1]";
  auto e = lookup(args, name);
  if (!e) return missing(name, kExpected);
  if (!e->is_array()) return invalid_argument(name, kExpected, type_name(*e));
  simdjson::dom::array a = *e;
  if (a.size() != 4) {
    return invalid_argument(name, kExpected, std::to_string(a.size()) + " element(s)");
  }
  std::array<int, 4> out{};
  size_t i = 0;
  for (element v : a) {
    double d = 0;
    std::string element_i = "element " + std::to_string(i) + " is ";
    if (!as_number(v, &d)) return invalid_argument(name, kExpected, element_i + type_name(v));
    if (d != std::floor(d)) return invalid_argument(name, kExpected, element_i + "not an integer");
    // Far outside any screen, and outside int: say so rather than wrap.
    if (std::fabs(d) > kMaxRegionValue) {
      char got[96];
      snprintf(got, sizeof got, "%s%.17g, out of range (no screen is wider than %d pixels)",
               element_i.c_str(), d, kMaxRegionValue);
      return invalid_argument(name, kExpected, got);
    }
    out[i++] = int(d);
  }
  return out;
}

result<std::array<double, 2>> arg_coordinate(simdjson::dom::object args, std::string_view name) {
  constexpr std::string_view kExpected = "an array of 2 numbers [x, y]";
  auto e = lookup(args, name);
  if (!e) return missing(name, kExpected);
  if (!e->is_array()) return invalid_argument(name, kExpected, type_name(*e));
  simdjson::dom::array a = *e;
  if (a.size() != 2) {
    return invalid_argument(name, kExpected, std::to_string(a.size()) + " element(s)");
  }
  std::array<double, 2> out{};
  size_t i = 0;
  for (element v : a) {
    if (!as_number(v, &out[i])) {
      return invalid_argument(name, kExpected, "element " + std::to_string(i) + " is " +
                                                   type_name(v));
    }
    ++i;
  }
  return out;
}

result<std::optional<std::array<double, 2>>> arg_optional_coordinate(simdjson::dom::object args,
                                                                     std::string_view name) {
  if (!lookup(args, name)) return std::optional<std::array<double, 2>>();
  auto c = arg_coordinate(args, name);
  if (!c) return c.take_error();
  return std::optional<std::array<double, 2>>(*c);
}

result<int64_t> arg_integer(simdjson::dom::object args, std::string_view name, int64_t min,
                            int64_t max, std::optional<int64_t> fallback) {
  std::string expected =
      "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  auto e = lookup(args, name);
  if (!e) {
    if (fallback) return *fallback;
    return missing(name, expected);
  }
  double d = 0;
  if (!as_number(*e, &d)) return invalid_argument(name, expected, type_name(*e));
  if (d != std::floor(d)) return invalid_argument(name, expected, "a fraction");
  if (d < double(min) || d > double(max)) {
    char got[64];
    snprintf(got, sizeof got, "%.17g", d);
    return invalid_argument(name, expected, got);
  }
  return int64_t(d);
}

result<double> arg_number(simdjson::dom::object args, std::string_view name, double min,
                          bool min_exclusive, double max) {
  char expected[96];
  snprintf(expected, sizeof expected, "a number %s %g and at most %g",
           min_exclusive ? "greater than" : "of at least", min, max);
  auto e = lookup(args, name);
  if (!e) return missing(name, expected);
  double d = 0;
  if (!as_number(*e, &d)) return invalid_argument(name, expected, type_name(*e));
  if (d < min || (min_exclusive && d == min) || d > max) {
    char got[64];
    snprintf(got, sizeof got, "%.17g", d);
    return invalid_argument(name, expected, got);
  }
  return d;
}

result<std::string_view> arg_choice(simdjson::dom::object args, std::string_view name,
                                    std::initializer_list<std::string_view> choices) {
  std::string expected = "one of";
  for (std::string_view c : choices) {
    expected += expected.size() > 6 ? ", \"" : " \"";
    expected.append(c);
    expected += '"';
  }
  auto e = lookup(args, name);
  if (!e) return missing(name, expected);
  if (!e->is_string()) return invalid_argument(name, expected, type_name(*e));
  std::string_view v = *e;
  for (std::string_view c : choices) {
    if (v == c) return v;
  }
  std::string got = "\"";
  got.append(v.substr(0, 64));
  got += '"';
  return invalid_argument(name, expected, got);
}

result<std::vector<std::string>> arg_string_list(simdjson::dom::object args,
                                                 std::string_view name) {
  constexpr std::string_view kExpected = "an array of strings";
  auto e = lookup(args, name);
  if (!e) return missing(name, kExpected);
  if (!e->is_array()) return invalid_argument(name, kExpected, type_name(*e));
  std::vector<std::string> out;
  size_t i = 0;
  for (element v : simdjson::dom::array(*e)) {
    if (!v.is_string()) {
      return invalid_argument(name, kExpected,
                              "element " + std::to_string(i) + " is " + type_name(v));
    }
    out.emplace_back(std::string_view(v));
    ++i;
  }
  return out;
}

result<uint32_t> arg_window(simdjson::dom::object args, std::string_view name) {
  constexpr std::string_view expected =
      "a window id as list_windows gives it (\"0x1a00022\", or the same in decimal)";
  simdjson::dom::element e;
  if (args.at_key(name).get(e) != simdjson::SUCCESS || e.is_null()) {
    return invalid_argument(name, expected, "nothing");
  }
  std::string_view text;
  if (e.get(text) != simdjson::SUCCESS) return invalid_argument(name, expected, "not a string");
  uint64_t id = 0;
  std::string_view digits = text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  }
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id, base);
  // X resource ids have their top three bits clear, and None (0) is no window.
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() || id == 0 ||
      id > 0x1fffffff) {
    std::string shown(text.substr(0, 40));
    return invalid_argument(name, expected, "\"" + shown + "\"");
  }
  return uint32_t(id);
}

result<uint32_t> arg_optional_window(simdjson::dom::object args, std::string_view name) {
  simdjson::dom::element e;
  if (args.at_key(name).get(e) != simdjson::SUCCESS || e.is_null()) return uint32_t(0);
  return arg_window(args, name);
}

bool arg_present(simdjson::dom::object args, std::string_view name) {
  simdjson::dom::element e;
  return args.at_key(name).get(e) == simdjson::SUCCESS && !e.is_null();
}

result<std::vector<typed_char>> text_keystrokes(simdjson::dom::object args, std::string_view tool,
                                                size_t* characters) {
  auto text = arg_string(args, "text");
  if (!text) return text.take_error();
  // Counted before the keystrokes are made: they take 8 bytes a character,
  // which for a text as long as a request line may be is half a gigabyte.
  size_t count = count_code_points(*text);
  if (count > kMaxTypeCharacters) {
    return make_error(errc::invalid_argument,
                      str_cat("Invalid argument \"text\": ", tool, " takes at most ",
                              std::to_string(kMaxTypeCharacters), " characters per call, got ",
                              std::to_string(count),
                              "; split the text over several calls, or write_clipboard it and "
                              "paste with key ctrl+v"));
  }
  return keystrokes_for_text(*text, characters);
}

}  // namespace cu
