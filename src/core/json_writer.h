// Owns: writing JSON text into a std::string: correct string escaping,
// invalid UTF-8 replaced by U+FFFD, and base64 payloads encoded in place.
// Thread affinity: none; a writer is used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/geometry.h"

namespace cu {

// Appends s as a JSON string literal (with quotes). Quotes, backslashes and
// control characters are escaped; each maximal invalid UTF-8 subsequence
// becomes one U+FFFD, so the output is always valid UTF-8 JSON.
void append_json_string(std::string& out, std::string_view s);

// A streaming writer. It tracks only where commas go; the caller nests
// begin/end calls correctly.
class json_writer {
 public:
  explicit json_writer(std::string& out) : out_(out) {}

  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);
  json_writer& string(std::string_view s);
  json_writer& number(int64_t v);
  json_writer& number(double v);
  json_writer& boolean(bool v);
  json_writer& null();
  // An already-encoded JSON value, copied verbatim (a request id, a schema).
  json_writer& raw(std::string_view json);
  // A string value holding the base64 encoding of data, encoded straight
  // into the output with one resize and no intermediate copy.
  json_writer& base64(const uint8_t* data, size_t n);
  // A string value whose characters need no escaping (base64 text), copied
  // as it is.
  json_writer& plain_string(std::string_view s);

  std::string& out() { return out_; }

 private:
  void before_value() {
    if (need_comma_) out_.push_back(',');
    need_comma_ = true;
  }
  std::string& out_;
  bool need_comma_ = false;
};

// Writes r as {"x", "y", "width", "height"}, the shape every rectangle in
// a result has.
void write_rect(json_writer& j, const rect& r);

}  // namespace cu
