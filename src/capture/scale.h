// Owns: turning captured 32-bit pixels into RGB rows, with area-averaging
// downscaling (a box filter with exact fractional coverage, so text stays
// legible; never nearest-neighbour), in portable C++ and in SSSE3 and AVX2
// versions chosen at run time that give the same bytes.
// Thread affinity: none; a scaler's scratch row belongs to one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cu {

// Where the red, green and blue bytes sit inside one 4-byte source pixel.
struct pixel_layout {
  int r = 2;
  int g = 1;
  int b = 0;
  bool operator==(const pixel_layout&) const = default;
};

// The instruction sets the scaler's inner loops come in, slowest first. Every
// level writes exactly the bytes the scalar one does; scalar is the portable
// reference and the only level off x86-64.
enum class simd_level { scalar, ssse3, avx2 };

// "scalar", "ssse3" or "avx2".
const char* simd_name(simd_level level);

// The fastest level this CPU runs (asked of the CPU once, on first use). The
// build targets generic x86-64, so this is what turns on AVX2.
simd_level simd_best();

// One source pixel's share of one destination pixel, in 1/256ths.
struct filter_taps {
  std::vector<int> start;    // First source index per destination index.
  int count = 0;             // Taps per destination index (the widest span).
  std::vector<uint16_t> weights;  // count weights per destination index; sum 256.
};

// Area-averaging weights for mapping src_len samples onto dst_len
// (dst_len <= src_len). Each destination sample covers src_len/dst_len
// source samples; partial coverage is weighted by its exact fraction.
filter_taps make_area_taps(int src_len, int dst_len);

// Produces destination rows one at a time from a source image of 4-byte
// pixels. When the sizes match, it only converts.
class area_scaler {
 public:
  // level picks the inner loops; one above simd_best() runs as simd_best(),
  // so tests and benchmarks can ask for each level on any CPU.
  area_scaler(int src_w, int src_h, int dst_w, int dst_h, pixel_layout layout,
              simd_level level = simd_best());

  // What a scale between two sizes needs besides the pixels: the filter
  // taps of both axes, and the vector levels' horizontal weights (for each
  // pair of taps p, for each destination pixel, taps 2p and 2p+1, 0 past
  // the last, four times over, one pair per channel, as pmaddwd takes
  // them). Immutable, and shared between scalers of the same sizes.
  struct plan {
    filter_taps x, y;
    std::vector<int16_t> xpairs;
  };

  // Writes destination row y (dst_w * 3 bytes of RGB) into rgb.
  void row(const uint8_t* src, size_t src_stride, int y, uint8_t* rgb);

  int dst_w() const { return dst_w_; }
  int dst_h() const { return dst_h_; }
  // The level this scaler runs.
  simd_level level() const { return level_; }

 private:
  template <int K>
  void horizontal(uint8_t* rgb) const;
  void scalar_row(const uint8_t* src, size_t stride, int y, uint8_t* rgb);

  int src_w_, dst_w_, dst_h_;
  pixel_layout layout_;
  simd_level level_;
  std::shared_ptr<const plan> plan_;  // Null when the sizes are equal.
  // One vertically filtered source row, in 1/256ths, and one spare pixel the
  // vector loops may read (under a zero weight). The vector levels store each
  // value offset to fit a signed 16-bit number (see kVerticalBias).
  std::vector<uint16_t> acc_;
};

// The plan of a scale from src to dst (with the vector levels' pairs when
// pairs_too), from the few most recently used, or made now. Thread-safe.
std::shared_ptr<const area_scaler::plan> scale_plan_for(int src_w, int src_h, int dst_w,
                                                        int dst_h, bool pairs_too);

}  // namespace cu
