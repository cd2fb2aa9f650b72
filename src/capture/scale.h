// Owns: turning captured 32-bit pixels into RGB rows, with area-averaging
// downscaling (a box filter with exact fractional coverage, so text stays
// legible; never nearest-neighbour).
// Thread affinity: none; a scaler's scratch row belongs to one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cu {

// Where the red, green and blue bytes sit inside one 4-byte source pixel.
struct pixel_layout {
  int r = 2;
  int g = 1;
  int b = 0;
  bool operator==(const pixel_layout&) const = default;
};

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
  area_scaler(int src_w, int src_h, int dst_w, int dst_h, pixel_layout layout);

  // Writes destination row y (dst_w * 3 bytes of RGB) into rgb.
  void row(const uint8_t* src, size_t src_stride, int y, uint8_t* rgb);

  int dst_w() const { return dst_w_; }
  int dst_h() const { return dst_h_; }

 private:
  template <int K>
  void horizontal(uint8_t* rgb) const;

  int src_w_, dst_w_, dst_h_;
  pixel_layout layout_;
  filter_taps xtaps_, ytaps_;
  std::vector<uint16_t> acc_;  // One vertically filtered source row, in 1/256ths.
};

}  // namespace cu
