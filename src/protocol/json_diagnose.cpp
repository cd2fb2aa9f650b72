#include "protocol/json_diagnose.h"

#include <optional>
#include <utility>

#include "util/utf8.h"

namespace cu {
namespace ondemand = simdjson::ondemand;

namespace {

struct finding {
  const char* at;    // Where the offending token starts in the padded copy.
  std::string what;  // What is wrong with it.
};

std::string shorten(std::string_view token) {
  constexpr size_t kShow = 40;
  if (token.size() <= kShow) return std::string(token);
  return std::string(token.substr(0, kShow)) + "...";
}

std::string number_problem(std::string_view token) {
  // simdjson takes integers that fit 64 bits and doubles; anything else in
  // a number token is either too large or malformed.
  bool digits_only = !token.empty();
  for (char c : token) {
    if (!(c >= '0' && c <= '9') && c != '-' && c != '+' && c != 'e' && c != 'E' && c != '.') {
      digits_only = false;
    }
  }
  std::string t = shorten(token);
  if (digits_only) {
    return "the number " + t +
           " is out of range (numbers must fit a 64-bit integer or a double)";
  }
  return "the number " + t + " is malformed";
}

std::string not_a_literal(std::string_view token) {
  std::string out = "\"";
  out += shorten(token);
  out += "\" is not true, false or null";
  return out;
}

std::optional<finding> walk(ondemand::value v, std::string& path);

std::optional<finding> walk_object(ondemand::object o, std::string& path) {
  for (auto field_result : o) {
    ondemand::field f;
    if (std::move(field_result).get(f) != simdjson::SUCCESS) return std::nullopt;  // Structural.
    std::string_view key;
    const char* key_at = f.key().raw();
    if (f.unescaped_key().get(key) != simdjson::SUCCESS) {
      return finding{key_at - 1,
                     "a member name has a bad escape or a lone UTF-16 surrogate (\\ud800 to "
                     "\\udfff)"};
    }
    size_t mark = path.size();
    if (!path.empty()) path += '.';
    path += '"';
    path.append(key.substr(0, 64));
    path += '"';
    if (auto r = walk(f.value(), path)) return r;
    path.resize(mark);
  }
  return std::nullopt;
}

std::optional<finding> walk_array(ondemand::array a, std::string& path) {
  size_t i = 0;
  for (auto element_result : a) {
    ondemand::value child;
    if (std::move(element_result).get(child) != simdjson::SUCCESS) return std::nullopt;
    size_t mark = path.size();
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on
    // char + string.
    path += '[';
    path += std::to_string(i++);
    path += ']';
    if (auto r = walk(child, path)) return r;
    path.resize(mark);
  }
  return std::nullopt;
}

std::optional<finding> walk(ondemand::value v, std::string& path) {
  ondemand::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return std::nullopt;
  std::string_view token = v.raw_json_token();
  switch (type) {
    case ondemand::json_type::object: {
      ondemand::object o;
      if (v.get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
      return walk_object(o, path);
    }
    case ondemand::json_type::array: {
      ondemand::array a;
      if (v.get_array().get(a) != simdjson::SUCCESS) return std::nullopt;
      return walk_array(a, path);
    }
    case ondemand::json_type::string: {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        return finding{token.data(),
                       "a string has a bad escape or a lone UTF-16 surrogate (\\ud800 to "
                       "\\udfff)"};
      }
      return std::nullopt;
    }
    case ondemand::json_type::number: {
      ondemand::number n;
      if (v.get_number().get(n) != simdjson::SUCCESS) {
        return finding{token.data(), number_problem(token)};
      }
      return std::nullopt;
    }
    case ondemand::json_type::boolean: {
      bool b;
      if (v.get_bool().get(b) != simdjson::SUCCESS) {
        return finding{token.data(), not_a_literal(token)};
      }
      return std::nullopt;
    }
    case ondemand::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
        return finding{token.data(), not_a_literal(token)};
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The first finding in the document, or nothing when the walk sees no
// problem of its own (a structural error the DOM message already names).
std::optional<finding> walk_document(const simdjson::padded_string& text, std::string& path) {
  ondemand::parser parser;
  ondemand::document doc;
  if (parser.iterate(text).get(doc) != simdjson::SUCCESS) return std::nullopt;
  ondemand::json_type type;
  if (doc.type().get(type) != simdjson::SUCCESS) return std::nullopt;
  if (type == ondemand::json_type::object || type == ondemand::json_type::array) {
    ondemand::value root;
    if (doc.get_value().get(root) != simdjson::SUCCESS) return std::nullopt;
    return walk(root, path);
  }
  // A scalar document: no member to name; the DOM's message says what.
  return std::nullopt;
}

}  // namespace

std::string describe_parse_error(std::string_view line, simdjson::error_code dom_error) {
  std::string out = "Parse error: ";
  if (dom_error == simdjson::UTF8_ERROR) {
    for (size_t i = 0; i < line.size();) {
      size_t at = i;
      char32_t cp = 0;
      if (!next_code_point(line, &i, &cp)) {
        return "Parse error at byte " + std::to_string(at) +
               ": the line is not valid UTF-8 (a malformed byte sequence)";
      }
    }
  }
  if (dom_error == simdjson::NUMBER_ERROR ||
      dom_error == simdjson::STRING_ERROR || dom_error == simdjson::T_ATOM_ERROR ||
      dom_error == simdjson::F_ATOM_ERROR || dom_error == simdjson::N_ATOM_ERROR) {
    simdjson::padded_string text(line);
    std::string path;
    if (auto f = walk_document(text, path)) {
      std::string where = "Parse error at byte " + std::to_string(f->at - text.data());
      if (!path.empty()) where += " (in " + path + ")";
      return where + ": " + f->what;
    }
  }
  return out + simdjson::error_message(dom_error);
}

size_t json_tokens(std::string_view text, size_t limit) {
  size_t tokens = 0;
  bool in_string = false;
  bool after_break = true;  // The next value character starts a token.
  for (size_t i = 0; i < text.size() && tokens <= limit; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // The escaped character, a quote included, stays in the string.
      } else if (c == '"') {
        in_string = false;
        after_break = true;
      }
      continue;
    }
    switch (c) {
      case '{': case '}': case '[': case ']': case ',': case ':':
        ++tokens;
        after_break = true;
        break;
      case ' ': case '\t': case '\n': case '\r':
        after_break = true;
        break;
      case '"':
        ++tokens;
        in_string = true;
        break;
      default:
        if (after_break) ++tokens;
        after_break = false;
        break;
    }
  }
  return tokens;
}

}  // namespace cu
