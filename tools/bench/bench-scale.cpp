// Owns: the benchmark of the downscale and BGRX to RGB conversion at each
// instruction-set level (docs/performance.md, "Downscale: vector paths").
//
//   bench-scale [--runs N]
//
// Times whole frames on one thread (building the scaler included, as each
// capture strip builds its own), for the screen sizes the server scales and
// the 1920x1080 conversion without scaling. The levels take turns frame by
// frame, so a change in the machine's speed hits every level alike. Prints
// a Markdown table of medians and p90s; exits 1 when a level's frame differs
// from the scalar level's in any byte.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "capture/scale.h"

namespace {

struct frame {
  int w, h;
  size_t stride;
  std::vector<uint8_t> bytes;
};

// A BGRX screen of sorts: a flat desktop, a photograph's worth of noise on
// the left, a gradient, and a white window of dark "text" specks, so the
// timing is not that of one flat colour or of pure noise.
frame make_frame(int w, int h) {
  frame f{w, h, size_t(w) * 4, {}};
  f.bytes.resize(f.stride * size_t(h));
  uint32_t state = 0x9E3779B9u;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (int y = 0; y < h; ++y) {
    uint8_t* p = &f.bytes[size_t(y) * f.stride];
    for (int x = 0; x < w; ++x, p += 4) {
      uint32_t v;
      if (x < w * 2 / 5 && y < h * 3 / 4) {
        v = next();
      } else if (x >= w / 2 && y >= h / 8 && y < h * 5 / 8) {
        v = next() % 9 == 0 ? 0x202020u : 0xFFFFFFu;
      } else if (y >= h * 3 / 4) {
        v = uint32_t(x * 255 / w) * 0x010101u;
      } else {
        v = 0x3A6EA5u;
      }
      std::memcpy(p, &v, 4);
    }
  }
  return f;
}

struct bench_case {
  const char* name;
  int sw, sh, dw, dh;
};

using clock_type = std::chrono::steady_clock;

// One whole frame through a new scaler, in milliseconds.
double time_frame(const frame& src, const bench_case& c, cu::simd_level level,
                  std::vector<uint8_t>& out) {
  const auto t0 = clock_type::now();
  cu::area_scaler s(c.sw, c.sh, c.dw, c.dh, cu::pixel_layout{}, level);
  const size_t row_bytes = size_t(c.dw) * 3;
  for (int y = 0; y < c.dh; ++y) s.row(src.bytes.data(), src.stride, y, &out[size_t(y) * row_bytes]);
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  if (argc == 3 && std::strcmp(argv[1], "--runs") == 0 && std::atoi(argv[2]) > 0) {
    runs = std::atoi(argv[2]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: bench-scale [--runs N]\n");
    return 2;
  }
  const bench_case cases[] = {
      {"1920x1080 to 1366x768", 1920, 1080, 1366, 768},
      {"1920x1080 convert only", 1920, 1080, 1920, 1080},
      {"3840x2160 to 1366x768", 3840, 2160, 1366, 768},
      {"3440x1440 to 1568x656", 3440, 1440, 1568, 656},
  };
  std::vector<cu::simd_level> levels{cu::simd_level::scalar};
  for (cu::simd_level l : {cu::simd_level::ssse3, cu::simd_level::avx2}) {
    if (l <= cu::simd_best()) levels.push_back(l);
  }
  std::printf("%d frames per level after 5 untimed; best level on this CPU: %s\n\n", runs,
              cu::simd_name(cu::simd_best()));
  std::printf("| frame | level | median ms | p90 ms | speedup (median) |\n");
  std::printf("|---|---|---:|---:|---:|\n");
  bool same = true;
  for (const bench_case& c : cases) {
    const frame src = make_frame(c.sw, c.sh);
    const size_t out_bytes = size_t(c.dw) * size_t(c.dh) * 3;
    std::vector<std::vector<uint8_t>> out(levels.size(), std::vector<uint8_t>(out_bytes));
    std::vector<std::vector<double>> ms(levels.size());
    for (int r = -5; r < runs; ++r) {
      for (size_t i = 0; i < levels.size(); ++i) {
        const double t = time_frame(src, c, levels[i], out[i]);
        if (r >= 0) ms[i].push_back(t);
      }
    }
    const double scalar_ms = percentile(ms[0], 0.5);
    for (size_t i = 0; i < levels.size(); ++i) {
      const double median = percentile(ms[i], 0.5);
      std::printf("| %s | %s | %.3f | %.3f | %.2fx |\n", c.name, cu::simd_name(levels[i]), median,
                  percentile(ms[i], 0.9), scalar_ms / median);
      if (out[i] != out[0]) {
        std::fprintf(stderr, "bench-scale: %s: %s differs from scalar\n", c.name,
                     cu::simd_name(levels[i]));
        same = false;
      }
    }
  }
  return same ? 0 : 1;
}
