// Owns: the little UTF-8 the server needs: decoding one code point strictly,
// counting code points, and converting to and from Latin-1 (the X STRING
// encoding).
// Thread affinity: none; pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cu {

// Decodes one UTF-8 sequence at s[*i], advancing *i; false when malformed
// (overlong forms, surrogates and values past U+10FFFF included).
bool next_code_point(std::string_view s, size_t* i, char32_t* out);

// The number of code points; a malformed byte counts as one.
size_t count_code_points(std::string_view s);

// Latin-1 bytes to UTF-8.
std::string latin1_to_utf8(std::string_view latin1);

// UTF-8 to Latin-1; characters outside it become '?'.
std::string utf8_to_latin1(std::string_view utf8);

}  // namespace cu
