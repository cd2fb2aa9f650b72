// A small mutable JSON tree for the structure-aware mutator: read from a
// line with simdjson, changed, and written back. Strings and numbers keep
// their JSON text, so a tree can hold what no parser would produce (lone
// surrogate escapes, invalid UTF-8, 1e400, 2^64) and write it out as is.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cu_fuzz {

struct jvalue {
  enum class kind { null, boolean, number, string, array, object, raw };
  kind k = kind::null;
  // boolean: "true"/"false"; number: its JSON text; string: its JSON text
  // between the quotes (escapes included); raw: written verbatim.
  std::string text;
  std::vector<std::string> keys;  // object: each member's key, as string text.
  std::vector<jvalue> kids;       // array items or object member values.

  static jvalue null() { return {}; }
  static jvalue boolean(bool b) { return {kind::boolean, b ? "true" : "false", {}, {}}; }
  static jvalue number(std::string t) { return {kind::number, std::move(t), {}, {}}; }
  static jvalue integer(long long v) { return number(std::to_string(v)); }
  // s is already JSON string text (escapes allowed, no surrounding quotes).
  static jvalue string_text(std::string s) { return {kind::string, std::move(s), {}, {}}; }
  // s is plain bytes; quotes, backslashes and control characters get escaped.
  static jvalue string(std::string_view s);
  static jvalue raw(std::string t) { return {kind::raw, std::move(t), {}, {}}; }
  static jvalue array() { return {kind::array, {}, {}, {}}; }
  static jvalue object() { return {kind::object, {}, {}, {}}; }

  jvalue& push(jvalue v) {
    kids.push_back(std::move(v));
    return *this;
  }
  // Appends a member (key as plain bytes); duplicates are allowed on purpose.
  jvalue& set(std::string_view key, jvalue v);
  // The first member named key (plain text), or null.
  jvalue* get(std::string_view key);
  const jvalue* get(std::string_view key) const;
};

// Escapes plain bytes into JSON string text (no quotes).
std::string escape(std::string_view s);

// Writes v compactly.
void write(const jvalue& v, std::string& out);
std::string write(const jvalue& v);

// Parses one JSON text into a tree; nothing when simdjson rejects it.
std::optional<jvalue> parse(std::string_view text);

// Every node of the tree, root first (pointers stay valid until it changes).
void collect(jvalue& v, std::vector<jvalue*>& out);

}  // namespace cu_fuzz
