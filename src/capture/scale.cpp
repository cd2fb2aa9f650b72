#include "capture/scale.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <mutex>

// The vector levels are x86-64 functions compiled for their instruction set
// with GCC's (and clang's) target attribute, so a generic x86-64 build
// carries them all and simd_best() picks one when the program runs.
#if defined(__x86_64__) && defined(__GNUC__)
#define CU_SCALE_X86 1
#include <immintrin.h>
#else
#define CU_SCALE_X86 0
#endif

namespace cu {

const char* simd_name(simd_level level) {
  switch (level) {
    case simd_level::scalar: return "scalar";
    case simd_level::ssse3: return "ssse3";
    case simd_level::avx2: return "avx2";
  }
  return "scalar";
}

simd_level simd_best() {
#if CU_SCALE_X86
  static const simd_level best = [] {
    __builtin_cpu_init();
    // Both checks include the operating system's saving of the registers.
    if (__builtin_cpu_supports("avx2")) return simd_level::avx2;
    if (__builtin_cpu_supports("ssse3")) return simd_level::ssse3;
    return simd_level::scalar;
  }();
  return best;
#else
  return simd_level::scalar;
#endif
}

filter_taps make_area_taps(int src_len, int dst_len) {
  assert(dst_len > 0 && dst_len <= src_len);
  filter_taps t;
  // Destination sample i covers [i*src, (i+1)*src) in units of 1/dst source
  // pixels; source sample j covers [j*dst, (j+1)*dst). Exact integers.
  const long long S = src_len, D = dst_len;
  t.count = 0;
  for (int i = 0; i < dst_len; ++i) {
    long long a = i * S, b = (i + 1) * S;
    int first = int(a / D), last = int((b - 1) / D);
    t.count = std::max(t.count, last - first + 1);
  }
  t.start.resize(size_t(dst_len));
  t.weights.assign(size_t(dst_len) * size_t(t.count), 0);
  for (int i = 0; i < dst_len; ++i) {
    long long a = i * S, b = (i + 1) * S;
    int first = int(a / D);
    // Keep every tap inside the source, so the inner loops need no bounds
    // checks: shift the window left at the right edge (extra taps weigh 0).
    int start = std::min(first, src_len - t.count);
    t.start[size_t(i)] = start;
    uint16_t* w = &t.weights[size_t(i) * size_t(t.count)];
    long long covered = 0;
    int prev_cum = 0;
    for (int k = 0; k < t.count; ++k) {
      long long j = start + k;
      long long lo = std::max(a, j * D), hi = std::min(b, (j + 1) * D);
      if (hi > lo) covered += hi - lo;
      // Quantize the running sum, so the weights always add up to 256.
      int cum = int((covered * 256 + S / 2) / S);
      w[k] = uint16_t(cum - prev_cum);
      prev_cum = cum;
    }
  }
  return t;
}

namespace {

// Converts pixels [x, w) of one source row to RGB, one at a time: the
// scalar level's conversion and the vector levels' last few pixels.
void convert_scalar(const uint8_t* s, int x, int w, pixel_layout l, uint8_t* rgb) {
  for (s += size_t(x) * 4, rgb += size_t(x) * 3; x < w; ++x, s += 4, rgb += 3) {
    rgb[0] = s[l.r];
    rgb[1] = s[l.g];
    rgb[2] = s[l.b];
  }
}

#if CU_SCALE_X86

// How the vector levels keep the arithmetic of the scalar one, bit for bit.
// The vertical pass stores each accumulated value a (0 to 65280) plus
// kVerticalBias modulo 65536, which read as a signed 16-bit number is
// a - 32640: what pmaddwd, a signed multiply-add, can take. A destination
// pixel's horizontal weights add up to exactly 256, so its weighted sum comes
// out 256 * 32640 = 2^23 - 2^15 short: the scalar level's 2^15 for rounding is
// already in, and shifting the sum arithmetically by 16 gives the scalar
// result minus 128 (2^23 / 2^16), a signed byte that packs with signed
// saturation and gets its 128 back once per sixteen bytes (kByteBias).
constexpr int16_t kVerticalBias = int16_t(32768 + 128);
constexpr int8_t kByteBias = int8_t(-128);

// How far ahead of the vertical pass to ask for source bytes. With two to
// four rows read at once the hardware prefetcher falls behind on a big
// frame: on the benchmark machine 4 KiB ahead took a 3840x2160 frame from
// 2.3 to 1.7 ms (1 KiB: 2.0 ms, 8 KiB: 1.9 ms) and left 1920x1080 as it was.
constexpr size_t kPrefetchAhead = 4096;

// Asks for the cache line kPrefetchAhead bytes past p. That may lie past the
// frame, which a prefetch allows (it never faults), but pointer arithmetic
// does not: hence the integer.
inline void prefetch_ahead(const uint8_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + kPrefetchAhead),
               _MM_HINT_T0);
}

// A shuffle that takes four pixels' bytes (as the source has them, after the
// horizontal pass packs them) to their twelve RGB bytes, zeroing the rest.
__m128i rgb_order(pixel_layout l) {
  alignas(16) int8_t m[16];
  for (int i = 0; i < 4; ++i) {
    m[3 * i] = int8_t(4 * i + l.r);
    m[3 * i + 1] = int8_t(4 * i + l.g);
    m[3 * i + 2] = int8_t(4 * i + l.b);
    m[12 + i] = -1;
  }
  return _mm_load_si128(reinterpret_cast<const __m128i*>(m));
}

// A shuffle that takes two accumulated pixels (B0 G0 R0 X0 B1 G1 R1 X1, as
// 16-bit values) to pmaddwd's pairs: B0 B1 G0 G1 R0 R1 X0 X1.
__m128i pair_order() {
  return _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
}

// The scalar tail of both vertical passes: values [i, n) of N taps.
template <int N, bool First>
void vertical_tail(const uint8_t* const* rows, const uint16_t* w, size_t i, size_t n,
                   uint16_t* acc) {
  for (; i < n; ++i) {
    uint16_t a = First ? uint16_t(kVerticalBias) : acc[i];
    for (int k = 0; k < N; ++k) a = uint16_t(a + w[k] * rows[k][i]);
    acc[i] = a;
  }
}

// Runs Pass<N, First> over the taps of weight above 0, up to four rows at a
// time, so most rows take one pass over acc (taps of weight 0 are common:
// the last tap of a destination row is often past its span).
template <template <int, bool> class Pass>
void vertical_passes(const uint8_t* row0, size_t stride, const uint16_t* wy, int count,
                     size_t n, uint16_t* acc) {
  const uint8_t* rows[4];
  uint16_t w[4];
  int m = 0;
  bool first = true;
  auto flush = [&] {
    switch (m * 2 + int(first)) {
      case 2: Pass<1, false>::run(rows, w, n, acc); break;
      case 3: Pass<1, true>::run(rows, w, n, acc); break;
      case 4: Pass<2, false>::run(rows, w, n, acc); break;
      case 5: Pass<2, true>::run(rows, w, n, acc); break;
      case 6: Pass<3, false>::run(rows, w, n, acc); break;
      case 7: Pass<3, true>::run(rows, w, n, acc); break;
      case 8: Pass<4, false>::run(rows, w, n, acc); break;
      case 9: Pass<4, true>::run(rows, w, n, acc); break;
    }
    first = false;
    m = 0;
  };
  for (int k = 0; k < count; ++k) {
    if (wy[k] == 0) continue;
    rows[m] = row0 + size_t(k) * stride;
    w[m] = wy[k];
    if (++m == 4) flush();
  }
  // The weights add up to 256, so at least one tap was taken.
  if (m > 0) flush();
}

// ---- SSSE3: 16 source bytes, or one destination pixel, per step.

template <int N, bool First>
struct vertical_ssse3 {
  [[gnu::target("ssse3")]] static void run(const uint8_t* const* rows, const uint16_t* w,
                                           size_t n, uint16_t* acc) {
    const __m128i zero = _mm_setzero_si128();
    // Local copies, which stay in registers: the stores to acc could alias
    // the caller's arrays as far as the compiler knows.
    const uint8_t* r[N];
    __m128i wv[N];
    for (int k = 0; k < N; ++k) {
      r[k] = rows[k];
      wv[k] = _mm_set1_epi16(int16_t(w[k]));
    }
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      __m128i* out = reinterpret_cast<__m128i*>(acc + i);
      __m128i lo = First ? _mm_set1_epi16(kVerticalBias) : _mm_loadu_si128(out);
      __m128i hi = First ? _mm_set1_epi16(kVerticalBias) : _mm_loadu_si128(out + 1);
      for (int k = 0; k < N; ++k) {
        prefetch_ahead(r[k] + i);
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r[k] + i));
        lo = _mm_add_epi16(lo, _mm_mullo_epi16(_mm_unpacklo_epi8(s, zero), wv[k]));
        hi = _mm_add_epi16(hi, _mm_mullo_epi16(_mm_unpackhi_epi8(s, zero), wv[k]));
      }
      _mm_storeu_si128(out, lo);
      _mm_storeu_si128(out + 1, hi);
    }
    vertical_tail<N, First>(rows, w, i, n, acc);
  }
};

// One destination pixel's four channels (the fourth, from the source's
// unused byte, is dropped later) in 32-bit lanes, each the scalar level's
// byte minus 128. P is the number of tap pairs when the compiler knows it,
// 0 to read it from pairs_count.
template <int P>
[[gnu::target("ssse3")]] inline __m128i pixel_ssse3(const int16_t* acc, const int* start,
                                                    const int16_t* pairs, int pairs_count,
                                                    size_t pair_stride, int x) {
  const int pc = P > 0 ? P : pairs_count;
  const int16_t* a = acc + size_t(start[x]) * 4;
  const int16_t* w = pairs + size_t(x) * 8;
  __m128i s = _mm_setzero_si128();
  for (int p = 0; p < pc; ++p, a += 8, w += pair_stride) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    v = _mm_shuffle_epi8(v, pair_order());
    s = _mm_add_epi32(s, _mm_madd_epi16(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
  }
  return _mm_srai_epi32(s, 16);
}

// Destination pixels [x, dst_w): four at a time into twelve RGB bytes, then
// one at a time.
template <int P>
[[gnu::target("ssse3")]] void horizontal_ssse3(const int16_t* acc, const int* start,
                                               const int16_t* pairs, int pairs_count,
                                               int x, int dst_w, pixel_layout l,
                                               uint8_t* rgb) {
  const size_t ps = size_t(dst_w) * 8;
  const __m128i order = rgb_order(l);
  const __m128i byte_bias = _mm_set1_epi8(kByteBias);
  for (; x + 4 <= dst_w; x += 4) {
    const __m128i p0 = pixel_ssse3<P>(acc, start, pairs, pairs_count, ps, x);
    const __m128i p1 = pixel_ssse3<P>(acc, start, pairs, pairs_count, ps, x + 1);
    const __m128i p2 = pixel_ssse3<P>(acc, start, pairs, pairs_count, ps, x + 2);
    const __m128i p3 = pixel_ssse3<P>(acc, start, pairs, pairs_count, ps, x + 3);
    __m128i q = _mm_packs_epi16(_mm_packs_epi32(p0, p1), _mm_packs_epi32(p2, p3));
    q = _mm_shuffle_epi8(_mm_add_epi8(q, byte_bias), order);
    uint8_t* out = rgb + size_t(x) * 3;
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), q);
    const int last = _mm_cvtsi128_si32(_mm_srli_si128(q, 8));
    std::memcpy(out + 8, &last, 4);
  }
  for (; x < dst_w; ++x) {
    __m128i q = pixel_ssse3<P>(acc, start, pairs, pairs_count, ps, x);
    q = _mm_packs_epi32(q, q);
    q = _mm_shuffle_epi8(_mm_add_epi8(_mm_packs_epi16(q, q), byte_bias), order);
    const int three = _mm_cvtsi128_si32(q);
    std::memcpy(rgb + size_t(x) * 3, &three, 3);
  }
}

[[gnu::target("ssse3")]] void horizontal_ssse3(const int16_t* acc, const int* start,
                                               const int16_t* pairs, int pairs_count,
                                               int dst_w, pixel_layout l, uint8_t* rgb) {
  switch (pairs_count) {
    case 1: horizontal_ssse3<1>(acc, start, pairs, 1, 0, dst_w, l, rgb); break;
    case 2: horizontal_ssse3<2>(acc, start, pairs, 2, 0, dst_w, l, rgb); break;
    default: horizontal_ssse3<0>(acc, start, pairs, pairs_count, 0, dst_w, l, rgb); break;
  }
}

// Converts pixels [x, w) of one row: four per 16-byte store, each store's
// last four bytes overwritten by the next (so it stops six pixels short of
// the end, and the scalar loop does the rest).
[[gnu::target("ssse3")]] void convert_ssse3(const uint8_t* s, int x, int w, pixel_layout l,
                                            uint8_t* rgb) {
  const __m128i order = rgb_order(l);
  for (; x + 6 <= w; x += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + size_t(x) * 4));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rgb + size_t(x) * 3), _mm_shuffle_epi8(v, order));
  }
  convert_scalar(s, x, w, l, rgb);
}

// ---- AVX2: 32 source bytes, or two destination pixels, per step.

template <int N, bool First>
struct vertical_avx2 {
  [[gnu::target("avx2")]] static void run(const uint8_t* const* rows, const uint16_t* w,
                                          size_t n, uint16_t* acc) {
    const uint8_t* r[N];  // As in vertical_ssse3.
    __m256i wv[N];
    for (int k = 0; k < N; ++k) {
      r[k] = rows[k];
      wv[k] = _mm256_set1_epi16(int16_t(w[k]));
    }
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      __m256i* out = reinterpret_cast<__m256i*>(acc + i);
      __m256i lo = First ? _mm256_set1_epi16(kVerticalBias) : _mm256_loadu_si256(out);
      __m256i hi = First ? _mm256_set1_epi16(kVerticalBias) : _mm256_loadu_si256(out + 1);
      for (int k = 0; k < N; ++k) {
        const __m128i* s = reinterpret_cast<const __m128i*>(r[k] + i);
        prefetch_ahead(r[k] + i);
        lo = _mm256_add_epi16(lo, _mm256_mullo_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128(s)), wv[k]));
        hi = _mm256_add_epi16(hi, _mm256_mullo_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128(s + 1)), wv[k]));
      }
      _mm256_storeu_si256(out, lo);
      _mm256_storeu_si256(out + 1, hi);
    }
    vertical_tail<N, First>(rows, w, i, n, acc);
  }
};

// Destination pixels x and x + 1, one per 128-bit lane, as pixel_ssse3.
template <int P>
[[gnu::target("avx2")]] inline __m256i pixels_avx2(const int16_t* acc, const int* start,
                                                   const int16_t* pairs, int pairs_count,
                                                   size_t pair_stride, int x) {
  const int pc = P > 0 ? P : pairs_count;
  const int16_t* a0 = acc + size_t(start[x]) * 4;
  const int16_t* a1 = acc + size_t(start[x + 1]) * 4;
  const int16_t* w = pairs + size_t(x) * 8;
  const __m256i order = _mm256_broadcastsi128_si256(pair_order());
  __m256i s = _mm256_setzero_si256();
  for (int p = 0; p < pc; ++p, a0 += 8, a1 += 8, w += pair_stride) {
    __m256i v = _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a0)));
    v = _mm256_inserti128_si256(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a1)), 1);
    v = _mm256_shuffle_epi8(v, order);
    s = _mm256_add_epi32(s, _mm256_madd_epi16(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))));
  }
  return _mm256_srai_epi32(s, 16);
}

// Destination pixels eight at a time into 24 RGB bytes; the SSSE3 loops do
// the last few.
template <int P>
[[gnu::target("avx2")]] void horizontal_avx2(const int16_t* acc, const int* start,
                                             const int16_t* pairs, int pairs_count, int dst_w,
                                             pixel_layout l, uint8_t* rgb) {
  const size_t ps = size_t(dst_w) * 8;
  const __m256i order = _mm256_broadcastsi128_si256(rgb_order(l));
  // Packing leaves pixels 0 2 4 6 in the low lane and 1 3 5 7 in the high
  // one, four bytes each; the first permutation puts them in order, the
  // second closes the four-byte gap each lane's shuffle leaves.
  const __m256i interleave = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i close_gap = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  const __m256i byte_bias = _mm256_set1_epi8(kByteBias);
  int x = 0;
  for (; x + 8 <= dst_w; x += 8) {
    const __m256i v0 = pixels_avx2<P>(acc, start, pairs, pairs_count, ps, x);
    const __m256i v1 = pixels_avx2<P>(acc, start, pairs, pairs_count, ps, x + 2);
    const __m256i v2 = pixels_avx2<P>(acc, start, pairs, pairs_count, ps, x + 4);
    const __m256i v3 = pixels_avx2<P>(acc, start, pairs, pairs_count, ps, x + 6);
    __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_packs_epi32(v2, v3));
    q = _mm256_permutevar8x32_epi32(_mm256_add_epi8(q, byte_bias), interleave);
    q = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, order), close_gap);
    uint8_t* out = rgb + size_t(x) * 3;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(q));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 16), _mm256_extracti128_si256(q, 1));
  }
  // Clear the upper halves before the SSSE3 code: legacy SSE instructions
  // after dirty 256-bit registers run several times slower on some CPUs (the
  // benchmark machine's of docs/performance.md among them), and GCC 12 puts
  // no vzeroupper before this tail call of its own accord.
  _mm256_zeroupper();
  horizontal_ssse3<P>(acc, start, pairs, pairs_count, x, dst_w, l, rgb);
}

[[gnu::target("avx2")]] void horizontal_avx2(const int16_t* acc, const int* start,
                                             const int16_t* pairs, int pairs_count, int dst_w,
                                             pixel_layout l, uint8_t* rgb) {
  switch (pairs_count) {
    case 1: horizontal_avx2<1>(acc, start, pairs, 1, dst_w, l, rgb); break;
    case 2: horizontal_avx2<2>(acc, start, pairs, 2, dst_w, l, rgb); break;
    default: horizontal_avx2<0>(acc, start, pairs, pairs_count, dst_w, l, rgb); break;
  }
}

// Converts a row eight pixels per 32-byte store, each store's last eight
// bytes overwritten by the next; the SSSE3 loop does the last few.
[[gnu::target("avx2")]] void convert_avx2(const uint8_t* s, int w, pixel_layout l, uint8_t* rgb) {
  const __m256i order = _mm256_broadcastsi128_si256(rgb_order(l));
  const __m256i close_gap = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  int x = 0;
  for (; x + 11 <= w; x += 8) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + size_t(x) * 4));
    v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, order), close_gap);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rgb + size_t(x) * 3), v);
  }
  _mm256_zeroupper();  // As before horizontal_ssse3.
  convert_ssse3(s, x, w, l, rgb);
}

#endif  // CU_SCALE_X86

}  // namespace

namespace {

// The taps of a scale, and the vector levels' weight pairs, made once.
std::shared_ptr<const area_scaler::plan> make_plan(int src_w, int src_h, int dst_w, int dst_h,
                                                   bool pairs_too) {
  auto plan = std::make_shared<area_scaler::plan>();
  plan->x = make_area_taps(src_w, dst_w);
  plan->y = make_area_taps(src_h, dst_h);
  if (!pairs_too) return plan;
  const int count = plan->x.count, pairs = (count + 1) / 2;
  plan->xpairs.assign(size_t(pairs) * size_t(dst_w) * 8, 0);
  for (int p = 0; p < pairs; ++p) {
    for (int x = 0; x < dst_w; ++x) {
      const uint16_t* w = &plan->x.weights[size_t(x) * size_t(count) + size_t(2 * p)];
      const int16_t w0 = int16_t(w[0]), w1 = 2 * p + 1 < count ? int16_t(w[1]) : 0;
      int16_t* out = &plan->xpairs[(size_t(p) * size_t(dst_w) + size_t(x)) * 8];
      for (int c = 0; c < 4; ++c) {
        out[2 * c] = w0;
        out[2 * c + 1] = w1;
      }
    }
  }
  return plan;
}

}  // namespace

std::shared_ptr<const area_scaler::plan> scale_plan_for(int src_w, int src_h, int dst_w,
                                                        int dst_h, bool pairs_too) {
  // A screenshot makes a scaler per PNG strip, and every one of them used
  // to build the same taps: 9% of a screenshot's CPU in a profile. The few
  // sizes a server scales between (the screen, a window, a zoom) are kept.
  constexpr size_t kKept = 8;
  struct entry {
    std::array<int, 5> key;
    std::shared_ptr<const area_scaler::plan> plan;
  };
  static std::mutex mu;
  static std::vector<entry> kept;
  const std::array<int, 5> key{src_w, src_h, dst_w, dst_h, pairs_too ? 1 : 0};
  std::lock_guard<std::mutex> lock(mu);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i].key != key) continue;
    // Most recent first.
    std::rotate(kept.begin(), kept.begin() + ptrdiff_t(i), kept.begin() + ptrdiff_t(i) + 1);
    return kept.front().plan;
  }
  auto plan = make_plan(src_w, src_h, dst_w, dst_h, pairs_too);
  kept.insert(kept.begin(), entry{key, plan});
  if (kept.size() > kKept) kept.pop_back();
  return plan;
}

area_scaler::area_scaler(int src_w, int src_h, int dst_w, int dst_h, pixel_layout layout,
                         simd_level level)
    : src_w_(src_w),
      dst_w_(dst_w),
      dst_h_(dst_h),
      layout_(layout),
      level_(std::min(level, simd_best())) {
  if (dst_w == src_w && dst_h == src_h) return;
  plan_ = scale_plan_for(src_w, src_h, dst_w, dst_h, level_ != simd_level::scalar);
  acc_.assign(size_t(src_w + 1) * 4, 0);
}

template <int K>
void area_scaler::horizontal(uint8_t* rgb) const {
  // K is the tap count when the compiler knows it (the common downscales
  // need 2 to 4), so the inner loop unrolls; K == 0 reads it at run time.
  const int count = K > 0 ? K : plan_->x.count;
  const int r = layout_.r, g = layout_.g, b = layout_.b;
  const uint16_t* acc = acc_.data();
  const uint16_t* wx = plan_->x.weights.data();
  const int* start = plan_->x.start.data();
  for (int x = 0; x < dst_w_; ++x, rgb += 3, wx += count) {
    const uint16_t* a = acc + size_t(start[x]) * 4;
    uint32_t sr = 1u << 15, sg = 1u << 15, sb = 1u << 15;
    for (int k = 0; k < count; ++k, a += 4) {
      const uint32_t w = wx[k];
      sr += w * a[r];
      sg += w * a[g];
      sb += w * a[b];
    }
    rgb[0] = uint8_t(sr >> 16);
    rgb[1] = uint8_t(sg >> 16);
    rgb[2] = uint8_t(sb >> 16);
  }
}

void area_scaler::scalar_row(const uint8_t* src, size_t stride, int y, uint8_t* rgb) {
  // Vertical pass over whole source rows, all four bytes of each pixel at
  // once: a plain multiply-add over contiguous memory that vectorizes.
  const size_t n = size_t(src_w_) * 4;
  const int ycount = plan_->y.count;
  const uint16_t* wy = &plan_->y.weights[size_t(y) * size_t(ycount)];
  const uint8_t* row0 = src + size_t(plan_->y.start[size_t(y)]) * stride;
  uint16_t* acc = acc_.data();
  {
    const uint16_t w = wy[0];
    for (size_t i = 0; i < n; ++i) acc[i] = uint16_t(w * row0[i]);
  }
  for (int k = 1; k < ycount; ++k) {
    const uint16_t w = wy[k];
    if (w == 0) continue;
    const uint8_t* rowk = row0 + size_t(k) * stride;
    for (size_t i = 0; i < n; ++i) acc[i] = uint16_t(acc[i] + w * rowk[i]);
  }
  // Horizontal pass: gather the few source pixels under each destination
  // pixel. Values are in 1/256ths, weights too: shift by 16 with rounding.
  switch (plan_->x.count) {
    case 2: horizontal<2>(rgb); break;
    case 3: horizontal<3>(rgb); break;
    case 4: horizontal<4>(rgb); break;
    default: horizontal<0>(rgb); break;
  }
}

void area_scaler::row(const uint8_t* src, size_t stride, int y, uint8_t* rgb) {
  const bool convert_only = acc_.empty();
#if CU_SCALE_X86
  if (level_ != simd_level::scalar) {
    const bool avx2 = level_ == simd_level::avx2;
    if (convert_only) {
      const uint8_t* s = src + size_t(y) * stride;
      if (avx2) {
        convert_avx2(s, dst_w_, layout_, rgb);
      } else {
        convert_ssse3(s, 0, dst_w_, layout_, rgb);
      }
      return;
    }
    const uint8_t* row0 = src + size_t(plan_->y.start[size_t(y)]) * stride;
    const uint16_t* wy = &plan_->y.weights[size_t(y) * size_t(plan_->y.count)];
    const size_t n = size_t(src_w_) * 4;
    const int16_t* acc = reinterpret_cast<const int16_t*>(acc_.data());
    const int pairs = (plan_->x.count + 1) / 2;
    if (avx2) {
      vertical_passes<vertical_avx2>(row0, stride, wy, plan_->y.count, n, acc_.data());
      horizontal_avx2(acc, plan_->x.start.data(), plan_->xpairs.data(), pairs, dst_w_, layout_, rgb);
    } else {
      vertical_passes<vertical_ssse3>(row0, stride, wy, plan_->y.count, n, acc_.data());
      horizontal_ssse3(acc, plan_->x.start.data(), plan_->xpairs.data(), pairs, dst_w_, layout_, rgb);
    }
    return;
  }
#endif
  if (convert_only) {
    convert_scalar(src + size_t(y) * stride, 0, dst_w_, layout_, rgb);
  } else {
    scalar_row(src, stride, y, rgb);
  }
}

}  // namespace cu
