// Owns: ASCII-only case folding for names (key names, monitor names, window
// classes, desktop entries), which must not depend on the C locale.
// Thread affinity: none; pure functions.
#pragma once

#include <string>
#include <string_view>

namespace cu {

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = ascii_lower(ch);
  return out;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

}  // namespace cu
