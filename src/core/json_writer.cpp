#include "core/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "util/base64.h"

namespace cu {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is
// not well formed; *consumed is then the length of the maximal subpart that
// must be replaced as a unit (Unicode 15, section 3.9, U+FFFD substitution).
size_t utf8_sequence(std::string_view s, size_t i, size_t* consumed) {
  auto c0 = static_cast<unsigned char>(s[i]);
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    need = 1;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    need = 2;
    if (c0 == 0xE0) lo = 0xA0;
    if (c0 == 0xED) hi = 0x9F;
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    need = 3;
    if (c0 == 0xF0) lo = 0x90;
    if (c0 == 0xF4) hi = 0x8F;
  } else {
    *consumed = 1;
    return 0;
  }
  size_t j = 1;
  for (; j <= need; ++j) {
    if (i + j >= s.size()) break;
    auto c = static_cast<unsigned char>(s[i + j]);
    if (j == 1 ? (c < lo || c > hi) : !is_cont(c)) break;
  }
  if (j == need + 1) return need + 1;
  *consumed = j;
  return 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  size_t run = 0;  // Start of the pending run of bytes copied verbatim.
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t consumed = 0;
      size_t len = utf8_sequence(s, i, &consumed);
      if (len != 0) {
        i += len;
        continue;
      }
      out.append(s.data() + run, i - run);
      out.append(kReplacement);
      i += consumed;
      run = i;
      continue;
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default: {
        char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(esc, 6);
      }
    }
    ++i;
    run = i;
  }
  out.append(s.data() + run, i - run);
  out.push_back('"');
}

json_writer& json_writer::begin_object() {
  before_value();
  out_.push_back('{');
  need_comma_ = false;
  return *this;
}

json_writer& json_writer::end_object() {
  out_.push_back('}');
  need_comma_ = true;
  return *this;
}

json_writer& json_writer::begin_array() {
  before_value();
  out_.push_back('[');
  need_comma_ = false;
  return *this;
}

json_writer& json_writer::end_array() {
  out_.push_back(']');
  need_comma_ = true;
  return *this;
}

json_writer& json_writer::key(std::string_view k) {
  before_value();
  append_json_string(out_, k);
  out_.push_back(':');
  need_comma_ = false;
  return *this;
}

json_writer& json_writer::string(std::string_view s) {
  before_value();
  append_json_string(out_, s);
  return *this;
}

json_writer& json_writer::number(int64_t v) {
  before_value();
  char buf[24];
  int n = snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  out_.append(buf, static_cast<size_t>(n));
  return *this;
}

json_writer& json_writer::number(double v) {
  before_value();
  // JSON has no NaN or infinity; null is the conventional stand-in.
  if (!std::isfinite(v)) {
    out_.append("null");
    return *this;
  }
  // The shortest text that reads back as exactly v. A large whole number
  // would come out as a long run of digits that many readers take for an
  // out-of-range integer; scientific notation keeps it a double.
  char buf[32];
  char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  if (std::fabs(v) >= 1e15 && std::string_view(buf, size_t(end - buf)).find_first_of(".e") ==
                                  std::string_view::npos) {
    end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
  }
  out_.append(buf, size_t(end - buf));
  return *this;
}

json_writer& json_writer::boolean(bool v) {
  before_value();
  out_.append(v ? "true" : "false");
  return *this;
}

json_writer& json_writer::null() {
  before_value();
  out_.append("null");
  return *this;
}

json_writer& json_writer::raw(std::string_view json) {
  before_value();
  out_.append(json);
  return *this;
}

json_writer& json_writer::base64(const uint8_t* data, size_t n) {
  before_value();
  out_.push_back('"');
  base64_append(out_, data, n);
  out_.push_back('"');
  return *this;
}

json_writer& json_writer::plain_string(std::string_view s) {
  before_value();
  out_.push_back('"');
  out_.append(s);
  out_.push_back('"');
  return *this;
}

void write_rect(json_writer& j, const rect& r) {
  j.begin_object().key("x").number(int64_t(r.x)).key("y").number(int64_t(r.y));
  j.key("width").number(int64_t(r.w)).key("height").number(int64_t(r.h)).end_object();
}

}  // namespace cu
