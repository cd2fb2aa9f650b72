#include "vision/match.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

// The AVX2 kernels are compiled for that instruction set with GCC's (and
// clang's) target attribute, so a generic x86-64 build carries them and the
// CPU is asked once, at the first search, whether it runs them (as
// capture/scale.cpp does).
#if defined(__x86_64__) && defined(__GNUC__)
#define CU_VISION_X86 1
#include <immintrin.h>
#else
#define CU_VISION_X86 0
#endif

namespace cu {

namespace {

// The kernels read template rows in chunks of this many pixels.
constexpr int kChunk = 16;

int round_up(int v, int m) { return (v + m - 1) / m * m; }

// A grayscale image with its own padded rows: every row is followed by at
// least kChunk * 2 zero bytes, so a kernel reading a template row's padded
// width from any valid position stays inside the row.
struct plane {
  int w = 0;
  int h = 0;
  size_t stride = 0;
  std::vector<uint8_t> px;

  const uint8_t* row(int y) const { return px.data() + size_t(y) * stride; }
  uint8_t* row(int y) { return px.data() + size_t(y) * stride; }
};

plane make_plane(int w, int h) {
  plane p;
  p.w = w;
  p.h = h;
  p.stride = size_t(round_up(w + 2 * kChunk, kChunk * 2));
  p.px.assign(p.stride * size_t(h), 0);
  return p;
}

plane copy_plane(const gray_view& v) {
  plane p = make_plane(v.w, v.h);
  for (int y = 0; y < v.h; ++y) std::memcpy(p.row(y), v.data + size_t(y) * v.stride, size_t(v.w));
  return p;
}

// The next pyramid level: half the size (an odd last row or column
// dropped), pixel (x, y) centred on the 2x2 block at (2x, 2y) but filtered
// with the binomial kernel [1 3 3 1] / 8 across four rows and columns (the
// edges repeated), not the block's plain mean. The wider, smoother filter
// is what makes coarse-to-fine work on text: after a 2x2 mean, one-pixel
// strokes alias, and a template whose blocks straddle the haystack's blocks
// (its position odd) scores as low as 0.3 at the third level, below
// unrelated lines of text; after [1 3 3 1] the same case scores 0.55 and
// ranks first (docs/vision.md).
plane half(const plane& s) {
  plane d = make_plane(s.w / 2, s.h / 2);
  // Down the columns first, over whole rows (a loop the compiler
  // vectorizes), then across at every other column: at most 64 * 255.
  std::vector<uint16_t> down(size_t(s.w));
  for (int y = 0; y < d.h; ++y) {
    const uint8_t* r0 = s.row(std::max(0, 2 * y - 1));
    const uint8_t* r1 = s.row(2 * y);
    const uint8_t* r2 = s.row(2 * y + 1);
    const uint8_t* r3 = s.row(std::min(s.h - 1, 2 * y + 2));
    for (int x = 0; x < s.w; ++x) {
      down[size_t(x)] = uint16_t(r0[x] + 3 * (r1[x] + r2[x]) + r3[x]);
    }
    const uint16_t* v = down.data();
    uint8_t* o = d.row(y);
    o[0] = uint8_t((v[0] + 3 * (v[0] + v[1]) + v[std::min(s.w - 1, 2)] + 32) >> 6);
    for (int x = 1; x < d.w; ++x) {
      const int l = 2 * x - 1, r = std::min(s.w - 1, 2 * x + 2);
      o[x] = uint8_t((v[l] + 3 * (v[l + 1] + v[l + 2]) + v[r] + 32) >> 6);
    }
  }
  return d;
}

// A template as the kernels read it: grey levels widened to 16 bits, each
// row padded with zeros to a whole number of chunks, and the sums its score
// needs. The zeros add nothing to a cross term, so a kernel may read the
// haystack under them; the mask (-1 under the template, 0 under padding)
// keeps them out of the haystack's own sums.
struct tmpl {
  int w = 0;
  int h = 0;
  int wpad = 0;
  std::vector<int16_t> t;
  std::vector<int16_t> mask;
  int64_t n = 0;
  int64_t sum = 0;
  int64_t var = 0;  // n * sum(T^2) - sum(T)^2: n^2 times the variance, exactly.
  // Rows the 32-bit lanes of the AVX2 kernels may take before their sums
  // are carried into 64 bits: each lane gains at most 2 * 255^2 per chunk,
  // and cross4_avx2 adds a position's eight lanes together in 32 bits.
  int flush_rows = 1;
};

tmpl make_tmpl(const plane& p) {
  tmpl t;
  t.w = p.w;
  t.h = p.h;
  t.wpad = round_up(p.w, kChunk);
  t.t.assign(size_t(t.wpad) * size_t(t.h), 0);
  t.mask.assign(size_t(t.wpad), 0);
  std::fill(t.mask.begin(), t.mask.begin() + t.w, int16_t(-1));
  int64_t sq = 0;
  for (int y = 0; y < t.h; ++y) {
    const uint8_t* r = p.row(y);
    for (int x = 0; x < t.w; ++x) {
      t.t[size_t(y) * size_t(t.wpad) + size_t(x)] = r[x];
      t.sum += r[x];
      sq += int64_t(r[x]) * r[x];
    }
  }
  t.n = int64_t(t.w) * t.h;
  t.var = t.n * sq - t.sum * t.sum;
  const int64_t per_row = int64_t(t.wpad / kChunk) * 2 * 255 * 255;
  t.flush_rows = int(std::max<int64_t>(1, std::min<int64_t>(t.h, UINT32_MAX / (8 * per_row))));
  return t;
}

// The haystack side of one position's score.
struct window_terms {
  int64_t cross = 0;  // sum(T * I)
  int64_t sum = 0;    // sum(I)
  int64_t sumsq = 0;  // sum(I^2)
};

// The score from exact integer sums (see ncc_at for the formula, here
// multiplied through by n so that every term is an integer): flat windows
// score 0, and nothing else is ever divided by zero because the template is
// never flat.
double score_of(const tmpl& t, const window_terms& w) {
  const int64_t var = t.n * w.sumsq - w.sum * w.sum;
  if (var <= 0) return 0;
  const int64_t num = t.n * w.cross - t.sum * w.sum;
  const double s = double(num) / std::sqrt(double(t.var) * double(var));
  return std::clamp(s, -1.0, 1.0);
}

int64_t cross_scalar(const uint8_t* a, size_t stride, const tmpl& t) {
  int64_t total = 0;
  const int16_t* tr = t.t.data();
  for (int y = 0; y < t.h; ++y, a += stride, tr += t.wpad) {
    // At most kMaxTemplateSide * 255^2 per row: fits 32 bits unsigned.
    uint32_t s = 0;
    for (int x = 0; x < t.w; ++x) s += uint32_t(a[x]) * uint32_t(tr[x]);
    total += s;
  }
  return total;
}

void cross4_scalar(const uint8_t* a, size_t stride, const tmpl& t, int64_t* out) {
  for (int i = 0; i < 4; ++i) out[i] = cross_scalar(a + i, stride, t);
}

window_terms terms_scalar(const uint8_t* a, size_t stride, const tmpl& t) {
  window_terms w;
  const int16_t* tr = t.t.data();
  for (int y = 0; y < t.h; ++y, a += stride, tr += t.wpad) {
    uint32_t c = 0, s = 0, q = 0;
    for (int x = 0; x < t.w; ++x) {
      const uint32_t v = a[x];
      c += v * uint32_t(tr[x]);
      s += v;
      q += v * v;
    }
    w.cross += c;
    w.sum += s;
    w.sumsq += q;
  }
  return w;
}

#if CU_VISION_X86

[[gnu::target("avx2")]] int64_t hsum_u32(__m256i v) {
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  int64_t s = 0;
  for (uint32_t l : lanes) s += l;
  return s;
}

// Sixteen haystack pixels widened to 16 bits.
[[gnu::target("avx2")]] inline __m256i load16(const uint8_t* a) {
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
}

[[gnu::target("avx2")]] inline __m256i load_t(const int16_t* t) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t));
}

// cross_scalar with pmaddwd: sixteen products a chunk, summed in pairs into
// eight 32-bit lanes, which are carried into 64 bits every flush_rows rows.
[[gnu::target("avx2")]] int64_t cross_avx2(const uint8_t* a, size_t stride, const tmpl& t) {
  int64_t total = 0;
  const int16_t* tr = t.t.data();
  __m256i acc = _mm256_setzero_si256();
  int rows = 0;
  for (int y = 0; y < t.h; ++y, a += stride, tr += t.wpad) {
    for (int x = 0; x < t.wpad; x += kChunk) {
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(load16(a + x), load_t(tr + x)));
    }
    if (++rows == t.flush_rows) {
      total += hsum_u32(acc);
      acc = _mm256_setzero_si256();
      rows = 0;
    }
  }
  return total + hsum_u32(acc);
}

// Adds the four positions' lanes into out[0] to out[3] and clears them.
[[gnu::target("avx2")]] inline void carry4(__m256i& c0, __m256i& c1, __m256i& c2, __m256i& c3,
                                           int64_t* out) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(c0, c1), _mm256_hadd_epi32(c2, c3));
  alignas(16) uint32_t sums[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(sums),
                  _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
  for (int i = 0; i < 4; ++i) out[i] += sums[i];
  c0 = c1 = c2 = c3 = _mm256_setzero_si256();
}

// cross_avx2 at four neighbouring positions, a to a + 3, in one pass: each
// template chunk is loaded once for the four, and the four sums are
// gathered with horizontal adds, so a small template (one chunk a row at
// the coarse level) costs little more than its multiply-adds.
[[gnu::target("avx2")]] void cross4_avx2(const uint8_t* a, size_t stride, const tmpl& t,
                                         int64_t* out) {
  const int16_t* tr = t.t.data();
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
  out[0] = out[1] = out[2] = out[3] = 0;
  int rows = 0;
  for (int y = 0; y < t.h; ++y, a += stride, tr += t.wpad) {
    for (int x = 0; x < t.wpad; x += kChunk) {
      const __m256i tv = load_t(tr + x);
      c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(load16(a + x), tv));
      c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(load16(a + x + 1), tv));
      c2 = _mm256_add_epi32(c2, _mm256_madd_epi16(load16(a + x + 2), tv));
      c3 = _mm256_add_epi32(c3, _mm256_madd_epi16(load16(a + x + 3), tv));
    }
    if (++rows == t.flush_rows) {
      carry4(c0, c1, c2, c3, out);
      rows = 0;
    }
  }
  carry4(c0, c1, c2, c3, out);
}

[[gnu::target("avx2")]] window_terms terms_avx2(const uint8_t* a, size_t stride, const tmpl& t) {
  window_terms w;
  const int16_t* tr = t.t.data();
  const int16_t* mask = t.mask.data();
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c = _mm256_setzero_si256(), s = c, q = c;
  int rows = 0;
  for (int y = 0; y < t.h; ++y, a += stride, tr += t.wpad) {
    for (int x = 0; x < t.wpad; x += kChunk) {
      const __m256i v = load16(a + x);
      const __m256i m = _mm256_and_si256(v, load_t(mask + x));
      c = _mm256_add_epi32(c, _mm256_madd_epi16(v, load_t(tr + x)));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(m, ones));
      q = _mm256_add_epi32(q, _mm256_madd_epi16(m, m));
    }
    if (++rows == t.flush_rows) {
      w.cross += hsum_u32(c);
      w.sum += hsum_u32(s);
      w.sumsq += hsum_u32(q);
      c = s = q = _mm256_setzero_si256();
      rows = 0;
    }
  }
  w.cross += hsum_u32(c);
  w.sum += hsum_u32(s);
  w.sumsq += hsum_u32(q);
  return w;
}

bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return bool(__builtin_cpu_supports("avx2"));
  }();
  return has;
}

#endif

// The kernels one search uses.
struct kernels {
  int64_t (*cross)(const uint8_t*, size_t, const tmpl&) = cross_scalar;
  // The cross terms at a to a + 3 into out[0] to out[3].
  void (*cross4)(const uint8_t*, size_t, const tmpl&, int64_t* out) = cross4_scalar;
  window_terms (*terms)(const uint8_t*, size_t, const tmpl&) = terms_scalar;
};

kernels pick_kernels(bool use_simd) {
  kernels k;
#if CU_VISION_X86
  if (use_simd && cpu_has_avx2()) {
    k.cross = cross_avx2;
    k.cross4 = cross4_avx2;
    k.terms = terms_avx2;
  }
#else
  (void)use_simd;
#endif
  return k;
}

double score_at(const plane& p, int x, int y, const tmpl& t, const kernels& k) {
  return score_of(t, k.terms(p.row(y) + x, p.stride, t));
}

// Scores every position of t inside the aw x ah area of p whose top-left
// corner is (ax, ay), row by row, calling emit(x, y, score) with x and y
// relative to the area. The window sums come from column sums kept up to
// date as the window slides down and a running sum across each row (the
// job of a summed-area table, in two rows of memory); the cross terms four
// positions at a time.
template <class Emit>
void score_area(const plane& p, int ax, int ay, int aw, int ah, const tmpl& t, const kernels& k,
                Emit&& emit) {
  const int nx = aw - t.w + 1, ny = ah - t.h + 1;
  const uint8_t* base = p.row(ay) + ax;
  auto row = [&](int y) { return base + size_t(y) * p.stride; };
  // A column as tall as the template sums to at most kMaxTemplateSide * 255,
  // its squares to kMaxTemplateSide * 255^2: both fit 32 bits, so these
  // loops vectorize.
  std::vector<uint32_t> col(size_t(aw), 0);
  std::vector<uint32_t> colsq(size_t(aw), 0);
  std::vector<int64_t> cross(static_cast<size_t>(nx));
  for (int y = 0; y < t.h; ++y) {
    const uint8_t* r = row(y);
    for (int x = 0; x < aw; ++x) {
      col[size_t(x)] += r[x];
      colsq[size_t(x)] += uint32_t(r[x]) * r[x];
    }
  }
  for (int y = 0; y < ny; ++y) {
    if (y > 0) {
      const uint8_t* gone = row(y - 1);
      const uint8_t* come = row(y + t.h - 1);
      for (int x = 0; x < aw; ++x) {
        col[size_t(x)] += uint32_t(come[x]) - gone[x];
        colsq[size_t(x)] += uint32_t(come[x]) * come[x] - uint32_t(gone[x]) * gone[x];
      }
    }
    window_terms w;
    for (int x = 0; x < t.w; ++x) {
      w.sum += col[size_t(x)];
      w.sumsq += colsq[size_t(x)];
    }
    const uint8_t* r = row(y);
    int x = 0;
    for (; x + 4 <= nx; x += 4) k.cross4(r + x, p.stride, t, &cross[size_t(x)]);
    if (x < nx) {
      // The last one to three positions as four too: the fourth window
      // ends at most three pixels past the area, inside the plane's row
      // padding.
      int64_t last[4];
      k.cross4(r + x, p.stride, t, last);
      std::copy(last, last + (nx - x), &cross[size_t(x)]);
    }
    for (x = 0; x < nx; ++x) {
      w.cross = cross[size_t(x)];
      emit(x, y, score_of(t, w));
      if (x + 1 < nx) {
        w.sum += int64_t(col[size_t(x + t.w)]) - col[size_t(x)];
        w.sumsq += int64_t(colsq[size_t(x + t.w)]) - colsq[size_t(x)];
      }
    }
  }
}

// The scores of every position of t in p: a (p.w - t.w + 1) x
// (p.h - t.h + 1) map of floats.
std::vector<float> score_map(const plane& p, const tmpl& t, const kernels& k) {
  const int nx = p.w - t.w + 1, ny = p.h - t.h + 1;
  std::vector<float> out(size_t(nx) * size_t(ny));
  score_area(p, 0, 0, p.w, p.h, t, k,
             [&](int x, int y, double s) { out[size_t(y) * size_t(nx) + size_t(x)] = float(s); });
  return out;
}

struct candidate {
  double score;
  int x;
  int y;
};

// Best first; equal scores top to bottom, then left to right (the order in
// which OpenCV's minMaxLoc meets them).
bool better(const candidate& a, const candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.y != b.y) return a.y < b.y;
  return a.x < b.x;
}

// The local maxima of a score map scoring at least floor: positions no
// neighbour of which scores higher.
std::vector<candidate> local_maxima(const std::vector<float>& map, int nx, int ny, double floor) {
  std::vector<candidate> out;
  for (int y = 0; y < ny; ++y) {
    const float* r = &map[size_t(y) * size_t(nx)];
    for (int x = 0; x < nx; ++x) {
      const float s = r[x];
      if (!(s >= floor)) continue;
      bool peak = true;
      for (int dy = -1; dy <= 1 && peak; ++dy) {
        if (y + dy < 0 || y + dy >= ny) continue;
        const float* q = &map[size_t(y + dy) * size_t(nx)];
        for (int dx = -1; dx <= 1; ++dx) {
          if (x + dx < 0 || x + dx >= nx) continue;
          if (q[x + dx] > s) {
            peak = false;
            break;
          }
        }
      }
      if (peak) out.push_back({s, x, y});
    }
  }
  return out;
}

// The share of a match's area another may cover and still be a match of
// its own (find_template's rule: more than half is the same match).
constexpr double kMatchOverlap = 0.5;

// Greedy non-maximum suppression over candidates (best first already): a
// candidate is kept unless its w x h rectangle shares more than overlap of
// its area with one kept before it. Stops at max_results.
std::vector<match> suppress(const std::vector<candidate>& sorted, int w, int h, int max_results,
                            double overlap) {
  std::vector<match> kept;
  const double limit = overlap * double(w) * h;
  for (const candidate& c : sorted) {
    bool overlaps = false;
    for (const match& m : kept) {
      const int64_t ox = std::max(0, std::min(c.x, m.x) + w - std::max(c.x, m.x));
      const int64_t oy = std::max(0, std::min(c.y, m.y) + h - std::max(c.y, m.y));
      if (double(ox * oy) > limit) {
        overlaps = true;
        break;
      }
    }
    if (overlaps) continue;
    kept.push_back({c.x, c.y, w, h, c.score});
    if (int(kept.size()) == max_results) break;
  }
  return kept;
}

// The final list from full-resolution candidates with exact scores.
std::vector<match> finish(std::vector<candidate> cands, const tmpl& t, const match_options& o,
                          double overlap) {
  std::erase_if(cands, [&](const candidate& c) { return !(c.score >= o.threshold && c.score > 0); });
  std::sort(cands.begin(), cands.end(), better);
  return suppress(cands, t.w, t.h, o.max_results, overlap);
}

std::vector<match> search_exhaustive(const plane& hay, const tmpl& t, const match_options& o,
                                     const kernels& k, double overlap) {
  const int nx = hay.w - t.w + 1, ny = hay.h - t.h + 1;
  const std::vector<float> map = score_map(hay, t, k);
  // The map holds floats; a position within float rounding of the threshold
  // is rescored exactly before the threshold decides.
  std::vector<candidate> cands = local_maxima(map, nx, ny, o.threshold - 1e-5);
  for (candidate& c : cands) c.score = score_at(hay, c.x, c.y, t, k);
  return finish(std::move(cands), t, o, overlap);
}

// How many candidates survive each level of the pyramid search, and how far
// below the threshold a coarse score may be and still be followed. A
// template's coarse scores run lower than its full-resolution ones (its
// pixels seldom line up with the haystack's at a coarse level), so the best
// few are followed whatever they score, and as many more as score within
// the margin, up to the cap.
struct keep_rule {
  int at_least;
  double margin;
  int cap;
};

keep_rule keep_at(int level, int max_results) {
  const int base = std::max(32, 2 * max_results);
  return {base, 0.15 + 0.1 * level, std::max(256, 4 * max_results)};
}

std::vector<candidate> prune(std::vector<candidate> c, const keep_rule& r, double threshold) {
  // Only the best cap can be kept: those are found in linear time, and only
  // they sorted (the coarse level has tens of thousands of local maxima).
  if (c.size() > size_t(r.cap)) {
    std::nth_element(c.begin(), c.begin() + r.cap, c.end(), better);
    c.resize(size_t(r.cap));
  }
  std::sort(c.begin(), c.end(), better);
  // Refining two candidates into one position leaves duplicates next to
  // each other in this order.
  c.erase(std::unique(c.begin(), c.end(),
                      [](const candidate& a, const candidate& b) {
                        return a.x == b.x && a.y == b.y;
                      }),
          c.end());
  size_t keep = 0;
  while (keep < c.size() && int(keep) < r.cap &&
         (int(keep) < r.at_least || c[keep].score >= threshold - r.margin)) {
    ++keep;
  }
  c.resize(keep);
  return c;
}

// The best position near (x, y), a candidate's place at the coarser level
// doubled: if that level had it right, the template is at x or x + 1 and y
// or y + 1 here, so [x - 1, x + 2] x [y - 1, y + 2] is searched; while the
// best lies on that square's edge, the 3x3 square around it is searched
// next (a few steps at most).
candidate refine(const plane& p, const tmpl& t, const kernels& k, int x, int y) {
  const int nx = p.w - t.w + 1, ny = p.h - t.h + 1;
  candidate best{-2, std::clamp(x, 0, nx - 1), std::clamp(y, 0, ny - 1)};
  int x0 = x - 1, x1 = x + 2, y0 = y - 1, y1 = y + 2;
  for (int step = 0; step < 4; ++step) {
    x0 = std::max(0, x0);
    y0 = std::max(0, y0);
    x1 = std::min(nx - 1, x1);
    y1 = std::min(ny - 1, y1);
    score_area(p, x0, y0, x1 - x0 + t.w, y1 - y0 + t.h, t, k, [&](int xx, int yy, double s) {
      const candidate c{s, x0 + xx, y0 + yy};
      if (better(c, best)) best = c;
    });
    const bool on_edge = (best.x == x0 && x0 > 0) || (best.x == x1 && x1 < nx - 1) ||
                         (best.y == y0 && y0 > 0) || (best.y == y1 && y1 < ny - 1);
    if (!on_edge) break;
    x0 = best.x - 1;
    x1 = best.x + 1;
    y0 = best.y - 1;
    y1 = best.y + 1;
  }
  return best;
}

// The deepest level at which the template keeps kCoarseMinSide pixels on
// its smaller side (0: none below full resolution).
int coarse_level(int w, int h) {
  int level = 0;
  while ((std::min(w, h) >> (level + 1)) >= kCoarseMinSide) ++level;
  return level;
}

std::vector<match> search_pyramid(plane hay0, const plane& needle0, const match_options& o,
                                  const kernels& k, double overlap) {
  const int top = coarse_level(needle0.w, needle0.h);
  std::vector<plane> hay, needle;
  hay.push_back(std::move(hay0));
  needle.push_back(needle0);
  for (int l = 1; l <= top; ++l) {
    hay.push_back(half(hay.back()));
    needle.push_back(half(needle.back()));
  }
  std::vector<tmpl> t;
  for (const plane& p : needle) t.push_back(make_tmpl(p));

  // Every position at the top; a flat template there (all its detail finer
  // than the blocks) cannot rank anything, so the search starts lower.
  int l = top;
  while (l > 0 && t[size_t(l)].var == 0) --l;
  if (l == 0) return search_exhaustive(hay[0], t[0], o, k, overlap);
  const plane& ht = hay[size_t(l)];
  const tmpl& tt = t[size_t(l)];
  const int nx = ht.w - tt.w + 1, ny = ht.h - tt.h + 1;
  const std::vector<float> map = score_map(ht, tt, k);
  std::vector<candidate> cands =
      prune(local_maxima(map, nx, ny, -1.0), keep_at(l, o.max_results), o.threshold);

  while (l > 0) {
    --l;
    for (candidate& c : cands) c = refine(hay[size_t(l)], t[size_t(l)], k, 2 * c.x, 2 * c.y);
    if (l > 0) cands = prune(std::move(cands), keep_at(l, o.max_results), o.threshold);
  }
  return finish(std::move(cands), t[0], o, overlap);
}

[[gnu::format(printf, 1, 2)]] error invalid(const char* fmt, ...) {
  char msg[300];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  return make_error(errc::invalid_argument, msg);
}

}  // namespace

// n * sum(T * I) with n at most 2^23 and every product at most 255^2 stays
// under 2^63, and so does every other term of the score.
static_assert(int64_t(kMaxTemplateSide) * kMaxTemplateSide <= (int64_t(1) << 23));

status check_template_size(int w, int h) {
  if (w <= kMaxTemplateSide && h <= kMaxTemplateSide) return {};
  return invalid("the template (%dx%d) is too large: at most %d pixels on a side", w, h,
                 kMaxTemplateSide);
}

namespace {

// The checks of find_template's contract; the template's pixels are only
// looked at for flatness.
status check(const gray_view& hay, const gray_view& needle, const match_options& o) {
  if (!hay.data || hay.w <= 0 || hay.h <= 0) return invalid("the image to search is empty");
  if (!needle.data || needle.w <= 0 || needle.h <= 0) return invalid("the template is empty");
  if (!(o.threshold >= 0 && o.threshold <= 1)) {
    return invalid("threshold must be from 0 to 1, not %g", o.threshold);
  }
  if (o.max_results < 1 || o.max_results > kMaxResults) {
    return invalid("max_results must be from 1 to %d, not %d", kMaxResults, o.max_results);
  }
  if (auto e = check_template_size(needle.w, needle.h); !e) return e;
  if (needle.w > hay.w || needle.h > hay.h) {
    return invalid("the template (%dx%d) is larger than the image searched (%dx%d)", needle.w,
                   needle.h, hay.w, hay.h);
  }
  int64_t sum = 0, sq = 0;
  for (int y = 0; y < needle.h; ++y) {
    for (int x = 0; x < needle.w; ++x) {
      const int v = needle.at(x, y);
      sum += v;
      sq += int64_t(v) * v;
    }
  }
  const double n = double(needle.w) * needle.h;
  const double mean = double(sum) / n;
  const double stddev = std::sqrt(std::max(0.0, double(sq) / n - mean * mean));
  if (stddev < kFlatTemplateStddev) {
    return invalid(
        "the template is a single flat colour (grey %.0f, standard deviation %.2f): nothing "
        "to match; cut one with an edge, an icon or some text in it",
        mean, stddev);
  }
  return {};
}

// area_downscale's taps along one axis: count per destination sample,
// from start, in 1/256ths.
struct area_taps {
  int count = 0;
  std::vector<int> start;
  std::vector<uint16_t> w;
};

// area_downscale's taps from S source samples to D destination samples.
// Destination sample i covers [i * S, (i + 1) * S) in units of 1/D source
// pixels, source sample j covers [j * D, (j + 1) * D); each tap weighs its
// overlap in 1/256ths, quantized as a running sum so that a sample's
// weights add up to exactly 256. Every sample has the same number of taps
// (the widest span), the window shifted left at the far edge with zero
// weights, so the loops have no bounds checks.
area_taps make_taps(int S, int D) {
  area_taps t;
  for (int i = 0; i < D; ++i) {
    const int64_t a = int64_t(i) * S, b = int64_t(i + 1) * S;
    t.count = std::max(t.count, int((b - 1) / D - a / D + 1));
  }
  t.start.resize(size_t(D));
  t.w.assign(size_t(D) * size_t(t.count), 0);
  for (int i = 0; i < D; ++i) {
    const int64_t a = int64_t(i) * S, b = int64_t(i + 1) * S;
    const int start = std::min(int(a / D), S - t.count);
    t.start[size_t(i)] = start;
    int64_t covered = 0;
    int prev = 0;
    for (int k = 0; k < t.count; ++k) {
      const int64_t j = start + k;
      const int64_t lo = std::max(a, j * D), hi = std::min(b, (j + 1) * D);
      if (hi > lo) covered += hi - lo;
      const int cum = int((covered * 256 + S / 2) / S);
      t.w[size_t(i) * size_t(t.count) + size_t(k)] = uint16_t(cum - prev);
      prev = cum;
    }
  }
  return t;
}

// The taps of an area-averaging downscale by the factor s (source pixels
// per destination pixel, at least 1) whose grid starts p source pixels in
// (0 <= p < s): destination sample i covers [p + i * s, p + (i + 1) * s),
// which lies inside the S source samples for i < n. These are make_taps'
// weights, with the spans in 1/65536ths of a source pixel: the same
// running sum in 1/256ths, so a grid at the screen's own factor and offset
// gives a screenshot's own weights (to a 1/256th where the spans round).
area_taps make_phase_taps(int S, double s, double p, int n) {
  constexpr int64_t Q = 1 << 16;
  auto edge = [&](int i) {
    return std::min(int64_t(S) * Q, int64_t(std::llround((p + i * s) * double(Q))));
  };
  area_taps t;
  for (int i = 0; i < n; ++i) {
    const int64_t a = edge(i), b = edge(i + 1);
    t.count = std::max(t.count, int((b - 1) / Q - a / Q + 1));
  }
  t.start.resize(size_t(n));
  t.w.assign(size_t(n) * size_t(t.count), 0);
  for (int i = 0; i < n; ++i) {
    const int64_t a = edge(i), b = edge(i + 1), span = b - a;
    const int start = std::min(int(a / Q), S - t.count);
    t.start[size_t(i)] = start;
    int64_t covered = 0;
    int prev = 0;
    for (int k = 0; k < t.count; ++k) {
      const int64_t j = start + k;
      const int64_t lo = std::max(a, j * Q), hi = std::min(b, (j + 1) * Q);
      if (hi > lo) covered += hi - lo;
      const int cum = int((covered * 256 + span / 2) / span);
      t.w[size_t(i) * size_t(t.count) + size_t(k)] = uint16_t(cum - prev);
      prev = cum;
    }
  }
  return t;
}

// One destination row of area_downscale from a vertically filtered row:
// K taps a sample (0: xt.count, unrolled for the usual two or three).
template <int K>
void across(const uint16_t* acc, const area_taps& xt, uint8_t* o) {
  const int count = K ? K : xt.count;
  const int n = int(xt.start.size());
  for (int x = 0; x < n; ++x) {
    const uint16_t* wx = &xt.w[size_t(x) * size_t(count)];
    const uint16_t* a = &acc[size_t(xt.start[size_t(x)])];
    uint32_t v = 1u << 15;
    for (int k = 0; k < count; ++k) v += uint32_t(wx[k]) * a[k];
    o[x] = uint8_t(v >> 16);
  }
}

}  // namespace

namespace {

// One row's luma with the layout fixed at compile time: the channel offsets
// are constants and the loads a regular interleave, so the compiler
// vectorizes the loop. A layout known only at run time takes gray_row_any.
template <int Bpp, int R, int G, int B>
void gray_row(const uint8_t* s, uint8_t* d, int w) {
  for (int x = 0; x < w; ++x, s += Bpp) {
    d[x] = uint8_t((4899u * s[R] + 9617u * s[G] + 1868u * s[B] + 8192u) >> 14);
  }
}

void gray_row_any(const uint8_t* s, uint8_t* d, int w, color_layout l) {
  const size_t bpp = size_t(l.bytes_per_pixel);
  for (int x = 0; x < w; ++x, s += bpp) {
    d[x] = uint8_t((4899u * s[l.r] + 9617u * s[l.g] + 1868u * s[l.b] + 8192u) >> 14);
  }
}

bool same_layout(color_layout a, color_layout b) {
  return a.bytes_per_pixel == b.bytes_per_pixel && a.r == b.r && a.g == b.g && a.b == b.b;
}

}  // namespace

gray_image to_gray(const uint8_t* pixels, int w, int h, size_t stride, color_layout l) {
  gray_image g{w, h, std::vector<uint8_t>(size_t(w) * size_t(h))};
  // An X frame (BGRX) and a decoded PNG (RGB) are the layouts there are in
  // practice.
  const bool bgrx = same_layout(l, kLayoutBgrx), rgb = same_layout(l, kLayoutRgb);
  for (int y = 0; y < h; ++y) {
    const uint8_t* s = pixels + size_t(y) * stride;
    uint8_t* d = &g.pixels[size_t(y) * size_t(w)];
    if (bgrx) {
      gray_row<4, 2, 1, 0>(s, d, w);
    } else if (rgb) {
      gray_row<3, 0, 1, 2>(s, d, w);
    } else {
      gray_row_any(s, d, w, l);
    }
  }
  return g;
}

namespace {

// area_downscale through given taps: one destination pixel per tap set,
// xt.start.size() x yt.start.size() of them.
gray_image downscale_taps(const gray_view& src, const area_taps& xt, const area_taps& yt) {
  const int dst_w = int(xt.start.size()), dst_h = int(yt.start.size());
  gray_image d{dst_w, dst_h, std::vector<uint8_t>(size_t(dst_w) * size_t(dst_h))};
  // One vertically filtered source row, in 1/256ths of a grey level (at
  // most 256 * 255, so 16 bits).
  std::vector<uint16_t> acc(size_t(src.w));
  for (int y = 0; y < dst_h; ++y) {
    const uint16_t* wy = &yt.w[size_t(y) * size_t(yt.count)];
    const uint8_t* r = src.data + size_t(yt.start[size_t(y)]) * src.stride;
    for (int x = 0; x < src.w; ++x) acc[size_t(x)] = uint16_t(wy[0] * r[x]);
    for (int k = 1; k < yt.count; ++k) {
      const uint16_t wk = wy[k];
      const uint8_t* rk = r + size_t(k) * src.stride;
      for (int x = 0; x < src.w; ++x) acc[size_t(x)] = uint16_t(acc[size_t(x)] + wk * rk[x]);
    }
    uint8_t* o = &d.pixels[size_t(y) * size_t(dst_w)];
    switch (xt.count) {
      case 2: across<2>(acc.data(), xt, o); break;
      case 3: across<3>(acc.data(), xt, o); break;
      default: across<0>(acc.data(), xt, o); break;
    }
  }
  return d;
}

}  // namespace

gray_image area_downscale(const gray_view& src, int dst_w, int dst_h) {
  // capture/scale.cpp's arithmetic, on one channel (that file is a sibling
  // layer, so the few lines are repeated here rather than included).
  return downscale_taps(src, make_taps(src.w, dst_w), make_taps(src.h, dst_h));
}

double ncc_at(const gray_view& hay, const gray_view& needle, int x, int y) {
  const double n = double(needle.w) * needle.h;
  double st = 0, si = 0;
  for (int j = 0; j < needle.h; ++j) {
    for (int i = 0; i < needle.w; ++i) {
      st += needle.at(i, j);
      si += hay.at(x + i, y + j);
    }
  }
  const double mt = st / n, mi = si / n;
  double num = 0, tt = 0, ii = 0;
  for (int j = 0; j < needle.h; ++j) {
    for (int i = 0; i < needle.w; ++i) {
      const double a = needle.at(i, j) - mt, b = hay.at(x + i, y + j) - mi;
      num += a * b;
      tt += a * a;
      ii += b * b;
    }
  }
  if (ii == 0 || tt == 0) return 0;
  return std::clamp(num / std::sqrt(tt * ii), -1.0, 1.0);
}

namespace {

// find_template with its overlap rule as a parameter: find_on_screen takes
// grey candidates that overlap more, to score them again itself.
result<std::vector<match>> find_candidates(const gray_view& haystack, const gray_view& needle,
                                           const match_options& o, double overlap) {
  if (auto e = check(haystack, needle, o); !e) return e.take_error();
  const kernels k = pick_kernels(o.use_simd);
  plane hay = copy_plane(haystack);
  const plane nee = copy_plane(needle);
  match_method method = o.method;
  if (method == match_method::automatic) {
    // Below about 2^24 multiply-adds the whole search takes a few
    // milliseconds, and a pyramid would save little.
    const int64_t positions = int64_t(hay.w - nee.w + 1) * (hay.h - nee.h + 1);
    const bool cheap = positions * nee.w * nee.h <= (int64_t(1) << 24);
    method = cheap || coarse_level(nee.w, nee.h) == 0 ? match_method::exhaustive
                                                         : match_method::pyramid;
  }
  if (method == match_method::pyramid && coarse_level(nee.w, nee.h) > 0) {
    return search_pyramid(std::move(hay), nee, o, k, overlap);
  }
  return search_exhaustive(hay, make_tmpl(nee), o, k, overlap);
}

}  // namespace

result<std::vector<match>> find_template(const gray_view& haystack, const gray_view& needle,
                                         const match_options& o) {
  return find_candidates(haystack, needle, o, kMatchOverlap);
}

namespace {

// The template's size in device pixels when it is in image pixels: its
// size times the screenshot's scale, rounded, at most the device's.
size2 device_size(const gray_view& needle, const gray_view& device, size2 image) {
  const double sx = double(device.w) / image.w, sy = double(device.h) / image.h;
  return {std::min(device.w, std::max(1, int(std::lround(needle.w * sx)))),
          std::min(device.h, std::max(1, int(std::lround(needle.h * sy))))};
}

// needle resampled to size: each destination pixel's centre mapped into
// the template and interpolated bilinearly (the template itself when the
// size is its own). An empty plane when size is over kMaxTemplateSide,
// past the limit that keeps the sums exact: such a match is placed no more
// finely than the mapping does.
plane resample(const gray_view& needle, size2 size) {
  if (!check_template_size(size.w, size.h).ok()) return make_plane(0, 0);
  if (size.w == needle.w && size.h == needle.h) return copy_plane(needle);
  plane up = make_plane(size.w, size.h);
  for (int y = 0; y < up.h; ++y) {
    const double v = std::clamp((y + 0.5) * needle.h / size.h - 0.5, 0.0, double(needle.h - 1));
    const int y0 = int(v), y1 = std::min(y0 + 1, needle.h - 1);
    const double fy = v - y0;
    for (int x = 0; x < up.w; ++x) {
      const double u = std::clamp((x + 0.5) * needle.w / size.w - 0.5, 0.0, double(needle.w - 1));
      const int x0 = int(u), x1 = std::min(x0 + 1, needle.w - 1);
      const double fx = u - x0;
      const double top = needle.at(x0, y0) * (1 - fx) + needle.at(x1, y0) * fx;
      const double bottom = needle.at(x0, y1) * (1 - fx) + needle.at(x1, y1) * fx;
      up.row(y)[x] = uint8_t(std::lround(top * (1 - fy) + bottom * fy));
    }
  }
  return up;
}

// Places matches found in image pixels (x, y absolute in the image) at
// device resolution: up is the template at its device size, matched within
// a pixel and a half of an image pixel around the spot each match maps to,
// so content that moved by a fraction of an image pixel since the
// screenshot is still placed to the device pixel. Each match becomes device
// pixels, w and h up's size, its score unchanged.
void place_at_device(const gray_view& device, size2 image, const plane& up,
                     std::vector<match>& found, const kernels& k) {
  const double sx = double(device.w) / image.w, sy = double(device.h) / image.h;
  const int dw = std::min(device.w, up.w > 0 ? up.w : 1);
  const int dh = std::min(device.h, up.h > 0 ? up.h : 1);
  const tmpl t = up.w > 0 ? make_tmpl(up) : tmpl{};
  // A pixel and a half of an image pixel either way, in device pixels.
  const int rx = int(std::ceil(1.5 * sx)), ry = int(std::ceil(1.5 * sy));
  for (match& m : found) {
    const int gx = int(std::lround(m.x * sx)), gy = int(std::lround(m.y * sy));
    m = {std::clamp(gx, 0, device.w - dw), std::clamp(gy, 0, device.h - dh), dw, dh, m.score,
         m.scale};
    if (up.w == 0 || t.var == 0) continue;
    // The neighbourhood, copied into a padded plane for the kernel.
    const int x0 = std::max(0, m.x - rx), y0 = std::max(0, m.y - ry);
    const int x1 = std::min(device.w - dw, m.x + rx), y1 = std::min(device.h - dh, m.y + ry);
    const plane near = copy_plane(device.crop({x0, y0, x1 - x0 + dw, y1 - y0 + dh}));
    candidate best{-2, m.x, m.y};
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        // Nearer the mapped spot wins a tie.
        const candidate c{score_at(near, x - x0, y - y0, t, k), x, y};
        if (c.score > best.score ||
            (c.score == best.score &&
             std::abs(x - gx) + std::abs(y - gy) < std::abs(best.x - gx) + std::abs(best.y - gy))) {
          best = c;
        }
      }
    }
    m.x = best.x;
    m.y = best.y;
  }
}

}  // namespace

namespace {

// The screenshot's colours over r (image pixels) from src, through the taps
// of its downscale: area_downscale's arithmetic on each channel, rows
// first, over the source columns r needs.
rgb_image sample_area(const color_view& src, const area_taps& xt, const area_taps& yt,
                      const rect& r) {
  rgb_image out{r.w, r.h, std::vector<uint8_t>(size_t(r.w) * size_t(r.h) * 3)};
  const color_layout l = src.layout;
  const int channel[3] = {l.r, l.g, l.b};
  const size_t bpp = size_t(l.bytes_per_pixel);
  const int c0 = xt.start[size_t(r.x)];
  const int c1 = xt.start[size_t(r.x + r.w - 1)] + xt.count;
  // One row's vertical sums of the columns c0 to c1, in 1/256ths as
  // area_downscale keeps them (at most 256 * 255), three channels a column.
  std::vector<uint16_t> acc(size_t(c1 - c0) * 3);
  uint8_t* o = out.pixels.data();
  for (int y = r.y; y < r.y + r.h; ++y) {
    const uint16_t* wy = &yt.w[size_t(y) * size_t(yt.count)];
    const int sy = yt.start[size_t(y)];
    std::fill(acc.begin(), acc.end(), uint16_t(0));
    for (int ky = 0; ky < yt.count; ++ky) {
      const uint32_t w = wy[ky];
      const uint8_t* p = src.px(c0, sy + ky);
      uint16_t* a = acc.data();
      for (int x = c0; x < c1; ++x, p += bpp, a += 3) {
        a[0] = uint16_t(a[0] + w * p[channel[0]]);
        a[1] = uint16_t(a[1] + w * p[channel[1]]);
        a[2] = uint16_t(a[2] + w * p[channel[2]]);
      }
    }
    for (int x = r.x; x < r.x + r.w; ++x) {
      const uint16_t* wx = &xt.w[size_t(x) * size_t(xt.count)];
      const uint16_t* a = &acc[size_t(xt.start[size_t(x)] - c0) * 3];
      uint32_t v0 = 1u << 15, v1 = 1u << 15, v2 = 1u << 15;
      for (int kx = 0; kx < xt.count; ++kx, a += 3) {
        v0 += uint32_t(wx[kx]) * a[0];
        v1 += uint32_t(wx[kx]) * a[1];
        v2 += uint32_t(wx[kx]) * a[2];
      }
      *o++ = uint8_t(v0 >> 16);
      *o++ = uint8_t(v1 >> 16);
      *o++ = uint8_t(v2 >> 16);
    }
  }
  return out;
}

// The checks find_template_scaled and find_on_screen share: the area of the
// image to search.
result<rect> screen_area(int device_w, int device_h, size2 image, const rect& region) {
  if (device_w <= 0 || device_h <= 0) return invalid("the image to search is empty");
  if (image.w <= 0 || image.h <= 0 || image.w > device_w || image.h > device_h) {
    return invalid("the screenshot's size (%dx%d) must be positive and at most the device's (%dx%d)",
                   image.w, image.h, device_w, device_h);
  }
  rect area = region;
  if (area.w == 0 && area.h == 0) area = {0, 0, image.w, image.h};
  if (area.x < 0 || area.y < 0 || area.w <= 0 || area.h <= 0 || area.x + area.w > image.w ||
      area.y + area.h > image.h) {
    return invalid("the region [%d, %d, %d, %d] is not inside the %dx%d screenshot", area.x,
                   area.y, area.x + area.w, area.y + area.h, image.w, image.h);
  }
  return area;
}

// The largest ratio between two scales searched next to each other: a
// template 10% off its scale still scores well above the usual threshold on
// icons and text (docs/vision.md).
constexpr double kScaleStep = 1.2;

// How many steps lie between scale 1 and the screen's own.
int scale_steps(size2 device, size2 image) {
  const double f = std::max(double(device.w) / image.w, double(device.h) / image.h);
  if (f <= 1) return 0;
  return std::max(1, int(std::ceil(std::log(f) / std::log(kScaleStep) - 1e-9)));
}

// How much of a grey candidate's area another may cover when the phases
// are to be tried: in a grid of look-alikes (a calculator's keys) the
// template's own place, at a poor phase, can score below a neighbour that
// covers two thirds of it, and would be dropped before its phases lift it
// above. Only candidates a few pixels apart are the same place.
constexpr double kPhaseOverlap = 0.9;

// One scale of find_on_screen: the template at that scale, grey and colour.
struct scaled_needle {
  double sx = 1, sy = 1;  // Template pixels per image pixel.
  gray_image gray;
  rgb_image color;
};

// The template downscaled on a grid that starts px, py template pixels in
// (one phase): it lines up with the screenshot's pixels when the template
// was cut that far before a screenshot pixel's edge.
struct phase_needle {
  double px = 0, py = 0;
  area_taps xt, yt;
  plane gray;
  tmpl t;
  rgb_image color;  // Made when a match is scored in colour at this phase.
};

// The phases of one scale: px = i * sx / n for i < n, and the same down.
// A phase whose template is flat is left out.
std::vector<phase_needle> make_phases(const gray_view& needle, double sx, double sy, int n) {
  std::vector<phase_needle> out;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      phase_needle ph;
      ph.px = i * sx / n;
      ph.py = j * sy / n;
      const int w = int(std::floor((needle.w - ph.px) / sx + 1e-9));
      const int h = int(std::floor((needle.h - ph.py) / sy + 1e-9));
      if (w < 1 || h < 1) continue;
      ph.xt = make_phase_taps(needle.w, sx, ph.px, w);
      ph.yt = make_phase_taps(needle.h, sy, ph.py, h);
      ph.gray = copy_plane(downscale_taps(needle, ph.xt, ph.yt).view());
      ph.t = make_tmpl(ph.gray);
      if (ph.t.var > 0) out.push_back(std::move(ph));
    }
  }
  return out;
}

// The best phase's grey match within an image pixel of (x, y), a grey
// match of the plain downscale (image pixels, inside area): its score, the
// phase, and where the phase's template lies.
struct phase_match {
  double score = -2;
  int phase = -1;
  int x = 0, y = 0;
};

phase_match best_phase(const gray_view& image, const rect& area, int x, int y,
                       const std::vector<phase_needle>& phases, const kernels& k) {
  phase_match best;
  int tw = 0, th = 0;
  for (const phase_needle& ph : phases) {
    tw = std::max(tw, ph.t.w);
    th = std::max(th, ph.t.h);
  }
  // The neighbourhood every phase's positions lie in, copied once into a
  // padded plane for the kernels.
  const int x0 = std::max(area.x, x - 1), y0 = std::max(area.y, y - 1);
  const int x1 = std::min(area.x + area.w, x + 2 + tw), y1 = std::min(area.y + area.h, y + 2 + th);
  const plane near = copy_plane(image.crop({x0, y0, x1 - x0, y1 - y0}));
  for (size_t i = 0; i < phases.size(); ++i) {
    const tmpl& t = phases[i].t;
    // Positions x - 1 to x + 1 whose template fits in the neighbourhood.
    const int ax = std::max(0, x - 1 - x0), ay = std::max(0, y - 1 - y0);
    const int aw = std::min(near.w - ax, x + 1 - x0 + t.w - ax);
    const int ah = std::min(near.h - ay, y + 1 - y0 + t.h - ay);
    if (aw < t.w || ah < t.h) continue;
    score_area(near, ax, ay, aw, ah, t, k, [&](int xx, int yy, double s) {
      if (s > best.score) best = {s, int(i), x0 + ax + xx, y0 + ay + yy};
    });
  }
  return best;
}

}  // namespace

rgb_image screenshot_part(const color_view& device, size2 image, const rect& r) {
  return sample_area(device, make_taps(device.w, image.w), make_taps(device.h, image.h), r);
}

double color_ncc(const color_view& a, const color_view& b) {
  const color_layout la = a.layout, lb = b.layout;
  const int ca[3] = {la.r, la.g, la.b}, cb[3] = {lb.r, lb.g, lb.b};
  int64_t sa[3] = {}, sb[3] = {}, saa[3] = {}, sbb[3] = {}, sab[3] = {};
  for (int y = 0; y < b.h; ++y) {
    for (int x = 0; x < b.w; ++x) {
      const uint8_t* pa = a.px(x, y);
      const uint8_t* pb = b.px(x, y);
      for (int c = 0; c < 3; ++c) {
        const int64_t va = pa[ca[c]], vb = pb[cb[c]];
        sa[c] += va;
        sb[c] += vb;
        saa[c] += va * va;
        sbb[c] += vb * vb;
        sab[c] += va * vb;
      }
    }
  }
  // n times each sum of centred terms, exactly, as score_of keeps them.
  const int64_t n = int64_t(b.w) * b.h;
  double num = 0, va = 0, vb = 0;
  for (int c = 0; c < 3; ++c) {
    num += double(n * sab[c] - sa[c] * sb[c]);
    va += double(n * saa[c] - sa[c] * sa[c]);
    vb += double(n * sbb[c] - sb[c] * sb[c]);
  }
  if (va <= 0 || vb <= 0) return 0;
  return std::clamp(num / std::sqrt(va * vb), -1.0, 1.0);
}

std::vector<double> search_scales(size2 device, size2 image) {
  std::vector<double> out{1.0};
  if (image.w <= 0 || image.h <= 0) return out;
  const int n = scale_steps(device, image);
  const double fx = double(device.w) / image.w;
  for (int i = 1; i <= n; ++i) out.push_back(std::pow(fx, double(i) / n));
  return out;
}

result<std::vector<screen_match>> find_on_screen(const color_view& device, size2 image,
                                                 const color_view& needle,
                                                 const screen_search& search) {
  if (!device.data) return invalid("the image to search is empty");
  auto checked = screen_area(device.w, device.h, image, search.region);
  if (!checked) return checked.take_error();
  const rect area = *checked;
  if (!needle.data || needle.w <= 0 || needle.h <= 0) return invalid("the template is empty");
  if (auto e = check_template_size(needle.w, needle.h); !e) return e.take_error();
  const match_options& o = search.match;
  if (search.phases < 1 || search.phases > 8) {
    return invalid("phases must be from 1 to 8, not %d", search.phases);
  }

  const gray_image device_gray =
      to_gray(device.data, device.w, device.h, device.stride, device.layout);
  gray_image small_own;
  if (image.w != device.w || image.h != device.h) {
    small_own = area_downscale(device_gray.view(), image.w, image.h);
  }
  const gray_view small = small_own.w > 0 ? small_own.view() : device_gray.view();
  const gray_view hay = small.crop(area);
  const area_taps xt = make_taps(device.w, image.w), yt = make_taps(device.h, image.h);
  const double fx = double(device.w) / image.w, fy = double(device.h) / image.h;
  const int steps = search.cut_from_image ? 0 : scale_steps({device.w, device.h}, image);

  // Each scale's grey matches above the threshold, rescored in colour.
  struct found_at {
    match m;  // In image pixels, the region's origin added.
    int step;
  };
  std::vector<scaled_needle> scales;
  std::vector<found_at> all;
  std::optional<error> first_error;
  bool searched = false;
  gray_image needle_gray = to_gray(needle.data, needle.w, needle.h, needle.stride, needle.layout);
  const kernels kern = pick_kernels(o.use_simd);
  for (int i = 0; i <= steps; ++i) {
    scaled_needle sn;
    sn.sx = steps ? std::pow(fx, double(i) / steps) : 1;
    sn.sy = steps ? std::pow(fy, double(i) / steps) : 1;
    const int w = std::max(1, int(std::lround(needle.w / sn.sx)));
    const int h = std::max(1, int(std::lround(needle.h / sn.sy)));
    if (i == 0) {
      sn.gray = needle_gray;
    } else {
      sn.gray = area_downscale(needle_gray.view(), w, h);
    }
    sn.color = sample_area(needle, make_taps(needle.w, w), make_taps(needle.h, h), {0, 0, w, h});
    // Downscaled, the template may have its phases tried: its grey
    // matches are taken from kPhaseMargin below the threshold, since the
    // right phase can lift them above it.
    const bool phased = search.phases > 1 && (sn.sx > 1 || sn.sy > 1);
    match_options grey = o;
    grey.max_results =
        std::min(kMaxResults, phased ? std::max(32, 2 * o.max_results + 8) : 2 * o.max_results + 8);
    if (phased) grey.threshold = std::max(0.0, o.threshold - kPhaseMargin);
    auto found = phased ? find_candidates(hay, sn.gray.view(), grey, kPhaseOverlap)
                        : find_template(hay, sn.gray.view(), grey);
    scales.push_back(std::move(sn));
    if (!found) {
      if (!first_error) first_error = found.take_error();
      continue;
    }
    searched = true;
    const scaled_needle& at = scales.back();
    std::vector<phase_needle> phases;
    for (match m : *found) {
      m.x += area.x;
      m.y += area.y;
      m.scale = at.sx;
      // The colour score only ever lowers a score, so it is computed for
      // grey scores at the threshold alone.
      double score = -2;
      if (m.score >= o.threshold) {
        const rgb_image window = sample_area(device, xt, yt, {m.x, m.y, m.w, m.h});
        score = std::min(m.score, color_ncc(window.view(), at.color.view()));
      }
      if (phased && score < 1) {
        if (phases.empty()) {
          phases = make_phases(needle_gray.view(), at.sx, at.sy, search.phases);
        }
        const phase_match p = best_phase(small, area, m.x, m.y, phases, kern);
        if (p.phase >= 0 && p.score >= o.threshold && p.score > score) {
          phase_needle& ph = phases[size_t(p.phase)];
          if (ph.color.w == 0) {
            ph.color = sample_area(needle, ph.xt, ph.yt, {0, 0, ph.t.w, ph.t.h});
          }
          const rgb_image window = sample_area(device, xt, yt, {p.x, p.y, ph.t.w, ph.t.h});
          const double s = std::min(p.score, color_ncc(window.view(), ph.color.view()));
          if (s > score) {
            // The template's own top-left, a fraction of a pixel before
            // the phase's first pixel, to the nearest image pixel.
            m.x = std::clamp(int(std::lround(p.x - ph.px / at.sx)), area.x, area.x + area.w - m.w);
            m.y = std::clamp(int(std::lround(p.y - ph.py / at.sy)), area.y, area.y + area.h - m.h);
            score = s;
          }
        }
      }
      m.score = score;
      if (m.score >= o.threshold && m.score > 0) all.push_back({m, i});
    }
  }
  if (!searched) return *first_error;

  // Best first across the scales; equal scores: the smaller scale, then top
  // to bottom, left to right.
  std::sort(all.begin(), all.end(), [](const found_at& a, const found_at& b) {
    if (a.m.score != b.m.score) return a.m.score > b.m.score;
    if (a.step != b.step) return a.step < b.step;
    if (a.m.y != b.m.y) return a.m.y < b.m.y;
    return a.m.x < b.m.x;
  });
  std::vector<found_at> kept;
  for (const found_at& c : all) {
    const bool overlaps = std::any_of(kept.begin(), kept.end(), [&](const found_at& k) {
      const int64_t ox = std::max(0, std::min(c.m.x + c.m.w, k.m.x + k.m.w) - std::max(c.m.x, k.m.x));
      const int64_t oy = std::max(0, std::min(c.m.y + c.m.h, k.m.y + k.m.h) - std::max(c.m.y, k.m.y));
      const int64_t smaller = std::min(int64_t(c.m.w) * c.m.h, int64_t(k.m.w) * k.m.h);
      return 2 * ox * oy > smaller;
    });
    if (overlaps) continue;
    kept.push_back(c);
    if (int(kept.size()) == o.max_results) break;
  }

  // Each scale's template at its device size, made once for the matches
  // found at that scale, places them.
  const kernels& k = kern;
  std::vector<screen_match> out;
  out.reserve(kept.size());
  for (int i = 0; i <= steps; ++i) {
    std::vector<match> at;
    std::vector<size_t> index;
    for (size_t j = 0; j < kept.size(); ++j) {
      if (kept[j].step == i) {
        at.push_back(kept[j].m);
        index.push_back(j);
      }
    }
    if (at.empty()) continue;
    const scaled_needle& sn = scales[size_t(i)];
    const size2 size{
        std::min(device.w, std::max(1, int(std::lround(needle.w * fx / sn.sx)))),
        std::min(device.h, std::max(1, int(std::lround(needle.h * fy / sn.sy))))};
    place_at_device(device_gray.view(), image, resample(needle_gray.view(), size), at, k);
    for (size_t j = 0; j < at.size(); ++j) kept[index[j]].m = at[j];
  }
  for (const found_at& c : kept) {
    const match& m = c.m;
    const scaled_needle& sn = scales[size_t(c.step)];
    // Where the template lies in the image: its top-left to the nearest
    // image pixel, its size at the scale it matched. Rounding the device
    // rectangle outwards would put it a pixel early.
    const rect in_image{std::min(int(std::lround(m.x / fx)), image.w - sn.gray.w),
                        std::min(int(std::lround(m.y / fy)), image.h - sn.gray.h), sn.gray.w,
                        sn.gray.h};
    out.push_back({in_image, rect{m.x, m.y, m.w, m.h}, m.score, sn.sx});
  }
  return out;
}


result<std::vector<match>> find_template_scaled(const gray_view& device, size2 image,
                                                const gray_view& needle,
                                                const match_options& o, const rect& region,
                                                const gray_image* downscaled) {
  if (!device.data) return invalid("the image to search is empty");
  auto checked = screen_area(device.w, device.h, image, region);
  if (!checked) return checked.take_error();
  const rect area = *checked;
  if (image.w == device.w && image.h == device.h) {
    auto found = find_template(device.crop(area), needle, o);
    if (found) {
      for (match& m : *found) {
        m.x += area.x;
        m.y += area.y;
      }
    }
    return found;
  }

  gray_image own;
  if (downscaled == nullptr || downscaled->w != image.w || downscaled->h != image.h) {
    own = area_downscale(device, image.w, image.h);
    downscaled = &own;
  }
  const gray_image& small = *downscaled;
  auto found = find_template(small.view().crop(area), needle, o);
  if (!found) return found;

  for (match& m : *found) {
    m.x += area.x;
    m.y += area.y;
  }
  place_at_device(device, image, resample(needle, device_size(needle, device, image)), *found,
                  pick_kernels(o.use_simd));
  return found;
}


}  // namespace cu
