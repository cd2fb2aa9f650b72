// Owns: str_cat, which builds a string from pieces by appending. GCC 12
// reports false -Wrestrict warnings for "literal" + std::string, which
// warnings-as-errors builds cannot have, and appending is cheaper anyway.
// Thread affinity: none.
#pragma once

#include <string>
#include <string_view>

namespace cu {

template <class... Parts>
std::string str_cat(const Parts&... parts) {
  std::string out;
  out.reserve((std::string_view(parts).size() + ... + 0));
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace cu
