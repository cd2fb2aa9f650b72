// Owns: base64 encoding (RFC 4648, with padding) straight into a caller's buffer.
// Thread affinity: none; pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cu {

constexpr size_t base64_encoded_size(size_t n) { return (n + 2) / 3 * 4; }

// Appends the encoding of data to out, growing it once.
void base64_append(std::string& out, const uint8_t* data, size_t n);

// Appends the encoding of the pieces as one run of bytes, growing out once.
void base64_append(std::string& out, std::span<const std::span<const uint8_t>> pieces);

// Decodes standard base64; returns false on any invalid character or length.
bool base64_decode(std::string_view in, std::vector<uint8_t>& out);

}  // namespace cu
