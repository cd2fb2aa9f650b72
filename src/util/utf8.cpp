#include "util/utf8.h"

namespace cu {

bool next_code_point(std::string_view s, size_t* i, char32_t* out) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  size_t p = *i;
  unsigned char b0 = byte(p);
  size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || p + len > s.size()) return false;
  char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1f) : len == 3 ? (b0 & 0x0f) : (b0 & 0x07);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(p + k) & 0xc0) != 0x80) return false;
    cp = (cp << 6) | (byte(p + k) & 0x3f);
  }
  static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
  *out = cp;
  *i = p + len;
  return true;
}

size_t count_code_points(std::string_view s) {
  size_t n = 0, i = 0;
  while (i < s.size()) {
    char32_t cp = 0;
    if (!next_code_point(s, &i, &cp)) ++i;
    ++n;
  }
  return n;
}

std::string latin1_to_utf8(std::string_view latin1) {
  std::string out;
  out.reserve(latin1.size());
  for (char ch : latin1) {
    auto b = static_cast<unsigned char>(ch);
    if (b < 0x80) {
      out += ch;
    } else {
      out += char(0xc0 | (b >> 6));
      out += char(0x80 | (b & 0x3f));
    }
  }
  return out;
}

std::string utf8_to_latin1(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  size_t i = 0;
  while (i < utf8.size()) {
    char32_t cp = 0;
    if (!next_code_point(utf8, &i, &cp)) {
      ++i;
      cp = '?';
    }
    out += cp <= 0xff ? char(cp) : '?';
  }
  return out;
}

}  // namespace cu
