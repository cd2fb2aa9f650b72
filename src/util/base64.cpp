#include "util/base64.h"

namespace cu {
namespace {
constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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
  for (; i + 3 <= n; i += 3) {
    uint32_t v = uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8 | data[i + 2];
    p[0] = kAlphabet[v >> 18];
    p[1] = kAlphabet[(v >> 12) & 63];
    p[2] = kAlphabet[(v >> 6) & 63];
    p[3] = kAlphabet[v & 63];
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
