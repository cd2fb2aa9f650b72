// Owns: the benchmark of the PNG strip encoders on a real screen
// (docs/performance.md, "PNG of photographs: the runs encoder").
//
//   bench-deflate [--runs N] SCREEN.png...
//
// Each SCREEN (a screenshot, such as `tools/bench/bench-capture --save-screen`
// writes) is scaled to the size a screenshot of it is sent at, SUB-filtered
// and cut into the server's 32-row strips; then every strip is deflated by
// ISA-L's igzip at level 1 and by the runs encoder (its plan included), on
// one thread, the two taking turns run by run. Prints a Markdown table of
// the median and p90 milliseconds per whole image and the bytes each wrote,
// and per strip which encoder the server would pick; exits 1 when zlib does
// not inflate the runs encoder's stream to exactly the filtered rows.
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/deflate_runs.h"
#include "capture/png.h"
#include "capture/scale.h"
#include "core/geometry.h"

namespace {

using clock_type = std::chrono::steady_clock;

struct screen {
  int w = 0, h = 0;
  std::vector<uint8_t> bgrx;
};

bool load(const char* path, screen& s) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  std::vector<uint8_t> file;
  uint8_t buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) file.insert(file.end(), buf, buf + n);
  std::fclose(f);
  auto png = cu::decode_png_rgb(file);
  if (!png) return false;
  s.w = png->w;
  s.h = png->h;
  s.bgrx.resize(size_t(s.w) * size_t(s.h) * 4);
  for (size_t i = 0; i < size_t(s.w) * size_t(s.h); ++i) {
    s.bgrx[i * 4] = png->rgb[i * 3 + 2];
    s.bgrx[i * 4 + 1] = png->rgb[i * 3 + 1];
    s.bgrx[i * 4 + 2] = png->rgb[i * 3];
    s.bgrx[i * 4 + 3] = 0;
  }
  return true;
}

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

// The strips' filtered rows, as the server makes them.
std::vector<std::vector<uint8_t>> filtered_strips(const screen& s, cu::size2 out) {
  cu::area_scaler scaler(s.w, s.h, out.w, out.h, cu::pixel_layout{});
  const size_t rgb_bytes = size_t(out.w) * 3;
  std::vector<uint8_t> rgb(rgb_bytes);
  std::vector<std::vector<uint8_t>> strips;
  for (int y0 = 0; y0 < out.h; y0 += 32) {
    const int y1 = std::min(out.h, y0 + 32);
    std::vector<uint8_t> block((rgb_bytes + 1) * size_t(y1 - y0));
    for (int y = y0; y < y1; ++y) {
      scaler.row(s.bgrx.data(), size_t(s.w) * 4, y, rgb.data());
      uint8_t* p = &block[(rgb_bytes + 1) * size_t(y - y0)];
      p[0] = 1;
      for (size_t i = 0; i < rgb_bytes; ++i) p[1 + i] = uint8_t(rgb[i] - (i >= 3 ? rgb[i - 3] : 0));
    }
    strips.push_back(std::move(block));
  }
  return strips;
}

size_t igzip_strips(const std::vector<std::vector<uint8_t>>& strips, std::vector<uint8_t>& out) {
  static uint8_t level_buf[ISAL_DEF_LVL1_DEFAULT];
  size_t at = 0;
  for (size_t i = 0; i < strips.size(); ++i) {
    isal_zstream z;
    isal_deflate_init(&z);
    z.level = 1;
    z.level_buf = level_buf;
    z.level_buf_size = sizeof level_buf;
    z.next_in = const_cast<uint8_t*>(strips[i].data());
    z.avail_in = uint32_t(strips[i].size());
    z.next_out = out.data() + at;
    z.avail_out = uint32_t(out.size() - at);
    z.end_of_stream = i + 1 == strips.size();
    z.flush = z.end_of_stream ? NO_FLUSH : FULL_FLUSH;
    if (isal_deflate(&z) != COMP_OK || z.avail_in != 0) return 0;
    at += z.total_out;
  }
  return at;
}

size_t runs_strips(const std::vector<std::vector<uint8_t>>& strips, std::vector<uint8_t>& out,
                   std::vector<size_t>* planned) {
  size_t at = 0;
  cu::runs_deflater d;
  for (size_t i = 0; i < strips.size(); ++i) {
    const size_t p = d.plan(strips[i]);
    if (planned != nullptr) planned->push_back(p);
    at += d.encode(strips[i], i + 1 == strips.size(), out.data() + at);
  }
  return at;
}

bool inflates_to(const std::vector<uint8_t>& deflated, size_t n,
                 const std::vector<std::vector<uint8_t>>& strips) {
  std::vector<uint8_t> want;
  for (const auto& s : strips) want.insert(want.end(), s.begin(), s.end());
  std::vector<uint8_t> got(want.size() + 16);
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return false;
  z.next_in = const_cast<uint8_t*>(deflated.data());
  z.avail_in = uInt(n);
  z.next_out = got.data();
  z.avail_out = uInt(got.size());
  const int rc = inflate(&z, Z_FINISH);
  const size_t total = z.total_out;
  inflateEnd(&z);
  return rc == Z_STREAM_END && total == want.size() && std::memcmp(got.data(), want.data(), total) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 50;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: bench-deflate [--runs N] SCREEN.png...\n");
    return 2;
  }
  int status = 0;
  std::printf("| screen | image | encoder | median ms | p90 ms | bytes | strips the server sends through it |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|\n");
  for (const char* path : files) {
    screen s;
    if (!load(path, s)) {
      std::fprintf(stderr, "bench-deflate: cannot read %s as a PNG\n", path);
      return 2;
    }
    const cu::size2 out = cu::image_size_for({s.w, s.h});
    const auto strips = filtered_strips(s, out);
    size_t raw = 0;
    for (const auto& st : strips) raw += st.size();
    std::vector<uint8_t> buf(cu::runs_deflater::max_size(raw) + strips.size() * 1024);
    std::vector<size_t> planned;
    const size_t runs_bytes = runs_strips(strips, buf, &planned);
    if (!inflates_to(buf, runs_bytes, strips)) {
      std::fprintf(stderr, "bench-deflate: %s: the runs encoder's stream does not inflate to its input\n", path);
      status = 1;
    }
    size_t photographic = 0;
    for (size_t i = 0; i < strips.size(); ++i) {
      // The server's rule (src/capture/png.cpp).
      if (double(planned[i]) > cu::runs_deflater::kPhotographicShare * double(strips[i].size())) {
        ++photographic;
      }
    }
    const size_t igzip_bytes = igzip_strips(strips, buf);
    std::vector<double> t_igzip, t_runs;
    for (int r = 0; r < runs + 3; ++r) {
      auto t = clock_type::now();
      igzip_strips(strips, buf);
      const double a = ms_since(t);
      t = clock_type::now();
      runs_strips(strips, buf, nullptr);
      const double b = ms_since(t);
      if (r >= 3) {  // Three untimed runs first.
        t_igzip.push_back(a);
        t_runs.push_back(b);
      }
    }
    const std::string name = std::strrchr(path, '/') != nullptr ? std::strrchr(path, '/') + 1 : path;
    std::printf("| %s | %dx%d to %dx%d | igzip level 1 | %.3f | %.3f | %zu | %zu of %zu |\n",
                name.c_str(), s.w, s.h, out.w, out.h, percentile(t_igzip, 0.5),
                percentile(t_igzip, 0.9), igzip_bytes, strips.size() - photographic,
                strips.size());
    std::printf("| %s | %dx%d to %dx%d | runs | %.3f | %.3f | %zu | %zu of %zu |\n", name.c_str(),
                s.w, s.h, out.w, out.h, percentile(t_runs, 0.5), percentile(t_runs, 0.9),
                runs_bytes, photographic, strips.size());
  }
  return status;
}
