#include "capture/scale.h"

#include <algorithm>
#include <cassert>

namespace cu {

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

area_scaler::area_scaler(int src_w, int src_h, int dst_w, int dst_h, pixel_layout layout)
    : src_w_(src_w), dst_w_(dst_w), dst_h_(dst_h), layout_(layout) {
  if (dst_w != src_w || dst_h != src_h) {
    xtaps_ = make_area_taps(src_w, dst_w);
    ytaps_ = make_area_taps(src_h, dst_h);
    acc_.resize(size_t(src_w) * 4);
  }
}

template <int K>
void area_scaler::horizontal(uint8_t* rgb) const {
  // K is the tap count when the compiler knows it (the common downscales
  // need 2 to 4), so the inner loop unrolls; K == 0 reads it at run time.
  const int count = K > 0 ? K : xtaps_.count;
  const int r = layout_.r, g = layout_.g, b = layout_.b;
  const uint16_t* acc = acc_.data();
  const uint16_t* wx = xtaps_.weights.data();
  const int* start = xtaps_.start.data();
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

void area_scaler::row(const uint8_t* src, size_t stride, int y, uint8_t* rgb) {
  if (acc_.empty()) {
    const int r = layout_.r, g = layout_.g, b = layout_.b;
    const uint8_t* s = src + size_t(y) * stride;
    for (int x = 0; x < dst_w_; ++x, s += 4, rgb += 3) {
      rgb[0] = s[r];
      rgb[1] = s[g];
      rgb[2] = s[b];
    }
    return;
  }
  // Vertical pass over whole source rows, all four bytes of each pixel at
  // once: a plain multiply-add over contiguous memory that vectorizes.
  const size_t n = size_t(src_w_) * 4;
  const int ycount = ytaps_.count;
  const uint16_t* wy = &ytaps_.weights[size_t(y) * size_t(ycount)];
  const uint8_t* row0 = src + size_t(ytaps_.start[size_t(y)]) * stride;
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
  switch (xtaps_.count) {
    case 2: horizontal<2>(rgb); break;
    case 3: horizontal<3>(rgb); break;
    case 4: horizontal<4>(rgb); break;
    default: horizontal<0>(rgb); break;
  }
}

}  // namespace cu
