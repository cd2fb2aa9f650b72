#include "capture/deflate_runs.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace cu {
namespace {

constexpr int kEndOfBlock = 256;
constexpr int kLongestRun = 258;  // The longest deflate match.

// The extra bits of length symbols 257 to 285.
constexpr uint8_t kExtraBits[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                    2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

// A match length's symbol, extra bits and their value (RFC 1951, 3.2.5).
struct length_code {
  uint16_t symbol;
  uint8_t extra_bits;
  uint16_t extra;
};

constexpr std::array<length_code, kLongestRun + 1> make_length_codes() {
  constexpr int base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                            31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  std::array<length_code, kLongestRun + 1> t{};
  for (int len = 3; len <= kLongestRun; ++len) {
    int c = 28;  // 258 has a code of its own; 284 stops at 257.
    while (base[c] > len) --c;
    t[size_t(len)] = {uint16_t(257 + c), kExtraBits[c], uint16_t(len - base[c])};
  }
  return t;
}
constexpr std::array<length_code, kLongestRun + 1> kLengthCodes = make_length_codes();

// Splits data into literals and runs of zero bytes: a run found at an
// 8-byte step is its first zero as a literal, then matches of distance 1.
// Sink gets literal(b), literals8(p) (eight at once) and run(len).
template <class Sink>
void tokenize(const uint8_t* p, size_t n, Sink& sink) {
  size_t i = 0;
  while (i + 8 <= n) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w != 0) {
      sink.literals8(p + i);
      i += 8;
      continue;
    }
    size_t j = i + 8;
    for (;;) {
      if (j + 8 > n) {
        while (j < n && p[j] == 0) ++j;
        break;
      }
      uint64_t v;
      std::memcpy(&v, p + j, 8);
      if (v != 0) {
        // The first non-zero byte: the lowest one on a little-endian CPU.
        j += size_t(std::endian::native == std::endian::little ? std::countr_zero(v)
                                                                 : std::countl_zero(v)) /
             8;
        break;
      }
      j += 8;
    }
    sink.literal(0);
    size_t rest = j - i - 1;
    while (rest >= 3) {
      size_t len = std::min<size_t>(rest, kLongestRun);
      sink.run(len);
      rest -= len;
    }
    while (rest-- > 0) sink.literal(0);
    i = j;
  }
  while (i < n) sink.literal(p[i++]);
}

// Symbol counts. Literals go to four tables in turn: a photograph's
// residuals pile up on a few values, and one table would make every count
// wait for the one before it.
struct histogram {
  uint32_t lit[4][256] = {};
  uint32_t freq[runs_deflater::kSymbols] = {};
  void literal(uint8_t b) { ++lit[0][b]; }
  void literals8(const uint8_t* p) {
    for (int k = 0; k < 8; ++k) ++lit[k & 3][p[k]];
  }
  void run(size_t len) { ++freq[kLengthCodes[len].symbol]; }
  // Folds the literal tables into freq.
  void total() {
    for (int b = 0; b < 256; ++b) freq[b] += lit[0][b] + lit[1][b] + lit[2][b] + lit[3][b];
  }
};

// Code lengths of at most `limit` bits (15 at most) for the symbols with a
// frequency (two at least), the others 0: Huffman's, and when that is too
// deep, the deepest codes shortened and the Kraft sum brought back to one
// by lengthening the shortest codes that can take it (as miniz does).
void huffman_lengths(const uint32_t* freq, int n, int limit, uint8_t* len) {
  std::fill(len, len + n, uint8_t(0));
  // The symbols with a frequency, rarest first, as frequency << 9 | symbol.
  std::array<uint64_t, runs_deflater::kSymbols> order{};
  int m = 0;
  for (int s = 0; s < n; ++s) {
    if (freq[s] > 0) order[size_t(m++)] = uint64_t(freq[s]) << 9 | uint64_t(s);
  }
  std::sort(order.begin(), order.begin() + m);
  std::array<int, runs_deflater::kSymbols> leaves{};
  for (int k = 0; k < m; ++k) leaves[size_t(k)] = int(order[size_t(k)] & 511);
  if (m < 2) {
    for (int k = 0; k < m; ++k) len[leaves[size_t(k)]] = 1;
    return;
  }
  // Two queues: the sorted leaves, and the inner nodes in the order they
  // are made (their weights never decrease).
  std::array<uint64_t, 2 * runs_deflater::kSymbols> weight{};
  std::array<int, 2 * runs_deflater::kSymbols> parent{};
  for (int k = 0; k < m; ++k) weight[size_t(k)] = freq[leaves[size_t(k)]];
  int next_leaf = 0;
  int next_inner = m;
  for (int k = m; k < 2 * m - 1; ++k) {
    int pick[2];
    for (int& p : pick) {
      if (next_leaf < m &&
          (next_inner >= k || weight[size_t(next_leaf)] <= weight[size_t(next_inner)])) {
        p = next_leaf++;
      } else {
        p = next_inner++;
      }
    }
    weight[size_t(k)] = weight[size_t(pick[0])] + weight[size_t(pick[1])];
    parent[size_t(pick[0])] = parent[size_t(pick[1])] = k;
  }
  // Depths, from the root down (a node's parent comes after it).
  std::array<int, 2 * runs_deflater::kSymbols> depth{};
  int count[16] = {};
  for (int k = 2 * m - 3; k >= 0; --k) {
    depth[size_t(k)] = depth[size_t(parent[size_t(k)])] + 1;
    if (k < m) ++count[std::min(depth[size_t(k)], limit)];
  }
  uint32_t kraft = 0;  // In units of 2^-limit.
  for (int d = 1; d <= limit; ++d) kraft += uint32_t(count[d]) << (limit - d);
  while (kraft > (1u << limit)) {
    --count[limit];
    for (int d = limit - 1; d > 0; --d) {
      if (count[d] > 0) {
        --count[d];
        count[d + 1] += 2;
        break;
      }
    }
    --kraft;
  }
  // The most frequent symbols get the shortest codes.
  int k = m - 1;
  for (int d = 1; d <= limit; ++d) {
    for (int c = 0; c < count[d]; ++c) len[leaves[size_t(k--)]] = uint8_t(d);
  }
}

// Canonical codes for lengths (RFC 1951, 3.2.2), bit-reversed.
void canonical_codes(const uint8_t* len, int n, uint16_t* code) {
  int count[16] = {};
  for (int s = 0; s < n; ++s) ++count[len[s]];
  count[0] = 0;
  int next[16] = {};
  int c = 0;
  for (int bits = 1; bits < 16; ++bits) {
    c = (c + count[bits - 1]) << 1;
    next[bits] = c;
  }
  for (int s = 0; s < n; ++s) {
    if (len[s] == 0) {
      code[s] = 0;
      continue;
    }
    unsigned v = unsigned(next[len[s]]++);
    unsigned r = 0;
    for (int b = 0; b < len[s]; ++b) r |= ((v >> b) & 1u) << (len[s] - 1 - b);
    code[s] = uint16_t(r);
  }
}

// An LSB-first bit writer into a buffer with 8 bytes of slack.
struct bit_writer {
  uint8_t* out;
  uint64_t buf = 0;
  unsigned bits = 0;  // Below 8 between puts.

  // Up to 56 bits, less what is pending.
  void put(uint64_t v, unsigned n) {
    buf |= v << bits;
    bits += n;
    flush();
  }
  void flush() {
    std::memcpy(out, &buf, 8);
    out += bits >> 3;
    buf >>= bits & 56;
    bits &= 7;
  }
  // The pending bits, padded to a byte.
  void align() {
    if (bits > 0) {
      *out++ = uint8_t(buf);
      buf = 0;
      bits = 0;
    }
  }
};

struct block_writer {
  bit_writer w;
  const uint32_t* sym;

  void one(uint32_t e) {
    w.buf |= uint64_t(e & 0xffff) << w.bits;
    w.bits += e >> 16;
  }
  void literal(uint8_t b) {
    one(sym[b]);
    w.flush();
  }
  void literals8(const uint8_t* p) {
    // Four codes of at most 12 bits and 7 pending: 55 bits.
    one(sym[p[0]]);
    one(sym[p[1]]);
    one(sym[p[2]]);
    one(sym[p[3]]);
    w.flush();
    one(sym[p[4]]);
    one(sym[p[5]]);
    one(sym[p[6]]);
    one(sym[p[7]]);
    w.flush();
  }
  void run(size_t len) {
    const length_code& c = kLengthCodes[len];
    one(sym[c.symbol]);
    w.buf |= uint64_t(c.extra) << w.bits;
    // Then distance code 0 (distance 1), whose code is the one bit 0.
    w.bits += c.extra_bits + 1;
    w.flush();
  }
};

// The order code length code lengths are sent in (RFC 1951, 3.2.7).
constexpr int kCodeLengthOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// plan() samples every kSampleEvery-th chunk of kSampleChunk bytes, and
// inputs up to kSampleWhole bytes whole.
constexpr size_t kSampleChunk = 4096;
constexpr size_t kSampleEvery = 8;
constexpr size_t kSampleWhole = 128 << 10;

}  // namespace

size_t runs_deflater::max_size(size_t n) { return n / 2 * 3 + 512; }

size_t runs_deflater::plan(std::span<const uint8_t> data) {
  histogram h;
  size_t sampled = 0;
  if (data.size() <= kSampleWhole) {
    tokenize(data.data(), data.size(), h);
    sampled = data.size();
  } else {
    for (size_t at = 0; at < data.size(); at += kSampleChunk * kSampleEvery) {
      const size_t n = std::min(kSampleChunk, data.size() - at);
      tokenize(data.data() + at, n, h);
      sampled += n;
    }
  }
  h.total();
  // Every symbol gets a code, so any input can be written with these.
  uint32_t freq[kSymbols];
  for (int s = 0; s < kSymbols; ++s) freq[s] = h.freq[s] * 2 + 1;
  uint8_t len[kSymbols + 2];
  huffman_lengths(freq, kSymbols, kMaxCodeBits, len);
  uint16_t code[kSymbols];
  canonical_codes(len, kSymbols, code);
  for (int s = 0; s < kSymbols; ++s) sym_[s] = uint32_t(code[s]) | uint32_t(len[s]) << 16;
  // Two distance codes of one bit: distance 1 is code 0.
  len[kSymbols] = len[kSymbols + 1] = 1;

  // The header: dynamic block, the code lengths sent with a code of their
  // own (no repeat codes: all 288 are set), bits after BFINAL.
  uint32_t cl_freq[19] = {};
  for (int s = 0; s < kSymbols + 2; ++s) ++cl_freq[len[s]];
  uint8_t cl_len[19];
  huffman_lengths(cl_freq, 19, 7, cl_len);
  uint16_t cl_code[19];
  canonical_codes(cl_len, 19, cl_code);
  std::memset(header_, 0, sizeof header_);
  bit_writer w{header_};
  w.put(2, 2);                 // BTYPE: dynamic Huffman codes.
  w.put(kSymbols - 257, 5);    // HLIT.
  w.put(2 - 1, 5);             // HDIST.
  w.put(19 - 4, 4);            // HCLEN.
  for (int k : kCodeLengthOrder) w.put(cl_len[k], 3);
  for (int s = 0; s < kSymbols + 2; ++s) w.put(cl_code[len[s]], cl_len[len[s]]);
  header_bits_ = size_t(w.out - header_) * 8 + w.bits;
  w.align();

  // The sample's bits: codes, and each run's extra length bits and its
  // distance bit.
  uint64_t bits = 0;
  for (int s = 0; s < kSymbols; ++s) {
    const unsigned extra = s > kEndOfBlock ? 1u + kExtraBits[s - kEndOfBlock - 1] : 0u;
    bits += uint64_t(h.freq[s]) * (len[s] + extra);
  }
  const double scale = sampled > 0 ? double(data.size()) / double(sampled) : 1.0;
  return size_t(double(bits) * scale / 8) + header_bits_ / 8 + 8;
}

size_t runs_deflater::encode(std::span<const uint8_t> data, bool last, uint8_t* out) const {
  block_writer b{bit_writer{out}, sym_};
  b.w.put(last ? 1 : 0, 1);  // BFINAL.
  size_t bits = header_bits_;
  for (const uint8_t* h = header_; bits > 0;) {
    const unsigned n = unsigned(std::min<size_t>(bits, 8));
    b.w.put(*h++ & ((1u << n) - 1), n);
    bits -= n;
  }
  tokenize(data.data(), data.size(), b);
  b.one(sym_[kEndOfBlock]);
  b.w.flush();
  if (!last) {
    // A full flush: an empty stored block, byte-aligned.
    b.w.put(0, 3);
    b.w.align();
    static constexpr uint8_t kEmptyStored[4] = {0, 0, 0xff, 0xff};
    std::memcpy(b.w.out, kEmptyStored, 4);
    b.w.out += 4;
  } else {
    b.w.align();
  }
  return size_t(b.w.out - out);
}

}  // namespace cu
