#include "util/base64.h"

#include <array>
#include <cstring>

namespace cu {
namespace {
constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The two characters of every 12-bit group, in output order: half the
// lookups of one character at a time (an image of a screenshot is a
// megabyte of base64, encoded on every changed capture).
constexpr std::array<std::array<char, 2>, 4096> make_pairs() {
  std::array<std::array<char, 2>, 4096> t{};
  for (int i = 0; i < 4096; ++i) t[size_t(i)] = {kAlphabet[i >> 6], kAlphabet[i & 63]};
  return t;
}
constexpr std::array<std::array<char, 2>, 4096> kPairs = make_pairs();

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

void base64_append(std::string& out, const uint8_t* data, size_t n) {
  size_t start = out.size();
  out.resize(start + base64_encoded_size(n));
  char* p = out.data() + start;
  size_t i = 0;
  // Six bytes to eight characters per step.
  for (; i + 6 <= n; i += 6) {
    const uint32_t a = uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8 | data[i + 2];
    const uint32_t b = uint32_t{data[i + 3]} << 16 | uint32_t{data[i + 4]} << 8 | data[i + 5];
    memcpy(p, kPairs[a >> 12].data(), 2);
    memcpy(p + 2, kPairs[a & 0xfff].data(), 2);
    memcpy(p + 4, kPairs[b >> 12].data(), 2);
    memcpy(p + 6, kPairs[b & 0xfff].data(), 2);
    p += 8;
  }
  for (; i + 3 <= n; i += 3) {
    uint32_t v = uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8 | data[i + 2];
    memcpy(p, kPairs[v >> 12].data(), 2);
    memcpy(p + 2, kPairs[v & 0xfff].data(), 2);
    p += 4;
  }
  if (i < n) {
    uint32_t v = uint32_t{data[i]} << 16;
    if (i + 1 < n) v |= uint32_t{data[i + 1]} << 8;
    p[0] = kAlphabet[v >> 18];
    p[1] = kAlphabet[(v >> 12) & 63];
    p[2] = i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    p[3] = '=';
  }
}

void base64_append(std::string& out, std::span<const std::span<const uint8_t>> pieces) {
  size_t total = 0;
  for (std::span<const uint8_t> p : pieces) total += p.size();
  out.reserve(out.size() + base64_encoded_size(total));
  // Each piece's whole groups of three are encoded where they are; the one
  // or two bytes left over are carried into the next piece's first group.
  uint8_t carry[3];
  size_t carried = 0;
  for (std::span<const uint8_t> p : pieces) {
    size_t i = 0;
    while (carried > 0 && carried < 3 && i < p.size()) carry[carried++] = p[i++];
    if (carried == 3) {
      base64_append(out, carry, 3);
      carried = 0;
    }
    const size_t whole = (p.size() - i) / 3 * 3;
    base64_append(out, p.data() + i, whole);
    i += whole;
    while (i < p.size()) carry[carried++] = p[i++];
  }
  base64_append(out, carry, carried);
}

bool base64_decode(std::string_view in, std::vector<uint8_t>& out) {
  if (in.size() % 4 != 0) return false;
  out.clear();
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int a = decode_char(in[i]);
    int b = decode_char(in[i + 1]);
    bool last = i + 4 == in.size();
    int c = (last && in[i + 2] == '=') ? -2 : decode_char(in[i + 2]);
    int d = (last && in[i + 3] == '=') ? -2 : decode_char(in[i + 3]);
    if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2)) return false;
    uint32_t v = uint32_t(a) << 18 | uint32_t(b) << 12;
    if (c >= 0) v |= uint32_t(c) << 6;
    if (d >= 0) v |= uint32_t(d);
    out.push_back(uint8_t(v >> 16));
    if (c >= 0) out.push_back(uint8_t(v >> 8));
    if (d >= 0) out.push_back(uint8_t(v));
  }
  return true;
}

}  // namespace cu
