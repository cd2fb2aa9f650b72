// Owns: timing find_template (src/vision/match.h) on saved images, for
// tools/bench/bench-match, which runs it beside OpenCV's matchTemplate on the same
// pixels (docs/vision.md).
//
//   bench_match HAYSTACK.png NEEDLE.png [options]
//   bench_match HAYSTACK.png X,Y,W,H --scaled WxH [options]
//   bench_match HAYSTACK.png NEEDLE.png|X,Y,W,H --scaled WxH --on-screen [options]
//
// Loads the PNGs (any colour type, through libspng), turns them grey with
// to_gray and times find_template on them, one thread, after two untimed
// calls. With --scaled the haystack is a device screen: it is downscaled to
// WxH as a screenshot would be, the template cut from that at X,Y,W,H, and
// find_template_scaled is timed instead. With --on-screen as well,
// find_on_screen is timed on the colour pixels: a NEEDLE.png at whatever
// scale it is (a crop of the device screen: the screen's real size) over
// every scale of search_scales, or X,Y,W,H cut from the screenshot in
// colour (screenshot_part) at scale 1 alone, as screenshot_find's
// template_region; the matches then carry their scale. --phases N sets how
// many sub-pixel phases of a downscaled template it tries along each axis
// (screen_search::phases; 1: the plain downscale, as before they were tried).
//
// Options: --runs N (30), --warmup N (untimed calls first, 2),
// --method automatic|exhaustive|pyramid, --scalar (no AVX2), --threshold T
// (0.9), --max-results K (10), --no-best (skip the call for "best"),
// --gray-out PREFIX (writes PREFIX-haystack.pgm and PREFIX-needle.pgm, the
// grey images searched, so another program can search the same ones).
//
// Prints one JSON object: the sizes, the options, every time and the
// p50/p90/min in milliseconds, the peak resident memory the searches added
// (KiB), the matches, and the best position (one more call with threshold
// 0 and one result, same method).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/png.h"
#include "vision/match.h"

namespace {

using clock_type = std::chrono::steady_clock;

// The whole file; false when it cannot be read.
bool read_file(const char* path, std::vector<uint8_t>& out) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  uint8_t buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return true;
}

bool load_png(const char* path, cu::gray_image& out) {
  std::vector<uint8_t> file;
  if (!read_file(path, file)) return false;
  auto png = cu::decode_png_rgb(file);
  if (!png) return false;
  out = cu::to_gray(png->rgb.data(), png->w, png->h, size_t(png->w) * 3, cu::kLayoutRgb);
  return true;
}

bool load_rgb(const char* path, cu::rgb_image& out) {
  std::vector<uint8_t> file;
  if (!read_file(path, file)) return false;
  auto png = cu::decode_png_rgb(file);
  if (!png) return false;
  out = {int(png->w), int(png->h), std::move(png->rgb)};
  return true;
}

bool write_pgm(const std::string& path, const cu::gray_image& g) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  std::fprintf(f, "P5\n%d %d\n255\n", g.w, g.h);
  const bool ok = std::fwrite(g.pixels.data(), 1, g.pixels.size(), f) == g.pixels.size();
  return std::fclose(f) == 0 && ok;
}

// A line of /proc/self/status in KiB ("VmRSS", "VmHWM").
long status_kib(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long v = -1;
  const size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, n) == 0 && line[n] == ':') v = std::atol(line + n + 1);
  }
  std::fclose(f);
  return v;
}

// Starts VmHWM again from the current resident size (Linux 4.0 and later).
void reset_peak() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

const char* method_name(cu::match_method m) {
  switch (m) {
    case cu::match_method::exhaustive: return "exhaustive";
    case cu::match_method::pyramid: return "pyramid";
    case cu::match_method::automatic: break;
  }
  return "automatic";
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_match HAYSTACK.png NEEDLE.png [options]\n"
               "       bench_match HAYSTACK.png X,Y,W,H --scaled WxH [options]\n"
               "options: --runs N --warmup N --method automatic|exhaustive|pyramid --scalar\n"
               "         --threshold T --max-results K --no-best --gray-out PREFIX\n"
               "         --on-screen (with --scaled: find_on_screen, in colour)\n"
               "         --phases N (with --on-screen: sub-pixel phases an axis, 1 for none)\n");
  return 2;
}

void print_matches(const std::vector<cu::match>& ms) {
  std::printf("[");
  for (size_t i = 0; i < ms.size(); ++i) {
    std::printf(
        "%s{\"x\": %d, \"y\": %d, \"w\": %d, \"h\": %d, \"score\": %.9f, \"scale\": %.4f}",
        i ? ", " : "", ms[i].x, ms[i].y, ms[i].w, ms[i].h, ms[i].score, ms[i].scale);
  }
  std::printf("]");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const char* hay_path = argv[1];
  const char* needle_arg = argv[2];
  int runs = 30, warmup = 2;
  bool want_best = true;
  bool on_screen = false;
  cu::match_options opt;
  const char* gray_out = nullptr;
  cu::size2 scaled{};
  int phases = cu::kPhases;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--scalar") {
      opt.use_simd = false;
      continue;
    }
    if (a == "--on-screen") {
      on_screen = true;
      continue;
    }
    if (a == "--no-best") {
      want_best = false;
      continue;
    }
    if (v == nullptr) return usage();
    ++i;
    if (a == "--runs") {
      runs = std::max(1, std::atoi(v));
    } else if (a == "--warmup") {
      warmup = std::max(0, std::atoi(v));
    } else if (a == "--method") {
      const std::string m = v;
      if (m == "exhaustive") opt.method = cu::match_method::exhaustive;
      else if (m == "pyramid") opt.method = cu::match_method::pyramid;
      else if (m == "automatic") opt.method = cu::match_method::automatic;
      else return usage();
    } else if (a == "--threshold") {
      opt.threshold = std::atof(v);
    } else if (a == "--max-results") {
      opt.max_results = std::atoi(v);
    } else if (a == "--gray-out") {
      gray_out = v;
    } else if (a == "--phases") {
      phases = std::atoi(v);
    } else if (a == "--scaled") {
      if (std::sscanf(v, "%dx%d", &scaled.w, &scaled.h) != 2) return usage();
    } else {
      return usage();
    }
  }

  cu::gray_image hay, needle;
  if (!load_png(hay_path, hay)) {
    std::fprintf(stderr, "bench_match: cannot read %s as a PNG\n", hay_path);
    return 1;
  }
  cu::rect cut{};
  cu::rgb_image hay_rgb, needle_rgb;
  bool cut_from_image = false;
  if (on_screen) {
    if (scaled.w <= 0 || !load_rgb(hay_path, hay_rgb)) return usage();
    if (std::sscanf(needle_arg, "%d,%d,%d,%d", &cut.x, &cut.y, &cut.w, &cut.h) == 4) {
      cut_from_image = true;
      needle_rgb = cu::screenshot_part(hay_rgb.view(), scaled, cut);
    } else if (!load_rgb(needle_arg, needle_rgb)) {
      std::fprintf(stderr, "bench_match: cannot read %s as a PNG\n", needle_arg);
      return 1;
    }
    needle = cu::to_gray(needle_rgb.pixels.data(), needle_rgb.w, needle_rgb.h,
                         size_t(needle_rgb.w) * 3, cu::kLayoutRgb);
  } else if (scaled.w > 0) {
    if (std::sscanf(needle_arg, "%d,%d,%d,%d", &cut.x, &cut.y, &cut.w, &cut.h) != 4 ||
        scaled.w > hay.w || scaled.h > hay.h || cut.x < 0 || cut.y < 0 || cut.w <= 0 ||
        cut.h <= 0 || cut.x + cut.w > scaled.w || cut.y + cut.h > scaled.h) {
      return usage();
    }
    const cu::gray_image small = cu::area_downscale(hay.view(), scaled.w, scaled.h);
    const cu::gray_view v = small.view().crop(cut);
    needle = {cut.w, cut.h, std::vector<uint8_t>(size_t(cut.w) * size_t(cut.h))};
    for (int y = 0; y < cut.h; ++y) {
      std::memcpy(&needle.pixels[size_t(y) * size_t(cut.w)], v.data + size_t(y) * v.stride,
                  size_t(cut.w));
    }
  } else if (!load_png(needle_arg, needle)) {
    std::fprintf(stderr, "bench_match: cannot read %s as a PNG\n", needle_arg);
    return 1;
  }
  if (gray_out != nullptr && (!write_pgm(std::string(gray_out) + "-haystack.pgm", hay) ||
                              !write_pgm(std::string(gray_out) + "-needle.pgm", needle))) {
    std::fprintf(stderr, "bench_match: cannot write %s-*.pgm\n", gray_out);
    return 1;
  }

  auto search = [&](const cu::match_options& o) -> cu::result<std::vector<cu::match>> {
    if (on_screen) {
      cu::screen_search ss;
      ss.match = o;
      ss.cut_from_image = cut_from_image;
      ss.phases = phases;
      auto r = cu::find_on_screen(hay_rgb.view(), scaled, needle_rgb.view(), ss);
      if (!r) return r.take_error();
      std::vector<cu::match> out;
      for (const cu::screen_match& m : *r) {
        out.push_back({m.image.x, m.image.y, m.image.w, m.image.h, m.score, m.scale});
      }
      return out;
    }
    return scaled.w > 0 ? cu::find_template_scaled(hay.view(), scaled, needle.view(), o)
                        : cu::find_template(hay.view(), needle.view(), o);
  };
  std::vector<cu::match> found;
  std::vector<double> ms;
  reset_peak();
  const long rss_before = status_kib("VmRSS");
  for (int r = -warmup; r < runs; ++r) {
    const auto t0 = clock_type::now();
    auto res = search(opt);
    const double t = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    if (!res) {
      std::fprintf(stderr, "bench_match: %s\n", res.err().message.c_str());
      return 1;
    }
    if (r >= 0) ms.push_back(t);
    found = std::move(*res);
  }
  const long peak = status_kib("VmHWM");
  cu::match_options best_opt = opt;
  best_opt.threshold = 0;
  best_opt.max_results = 1;
  std::vector<cu::match> best;
  if (want_best) {
    auto b = search(best_opt);
    if (b) best = std::move(*b);
  }

  std::printf("{\"haystack\": [%d, %d], \"needle\": [%d, %d], ", hay.w, hay.h, needle.w,
              needle.h);
  if (scaled.w > 0) {
    std::printf("\"scaled\": [%d, %d], \"cut\": [%d, %d, %d, %d], ", scaled.w, scaled.h, cut.x,
                cut.y, cut.w, cut.h);
  }
  std::printf("\"method\": \"%s\", \"simd\": %s, \"threshold\": %g, \"max_results\": %d, ",
              method_name(opt.method), opt.use_simd ? "true" : "false", opt.threshold,
              opt.max_results);
  if (on_screen) std::printf("\"phases\": %d, ", phases);
  std::printf("\"times_ms\": [");
  for (size_t i = 0; i < ms.size(); ++i) std::printf("%s%.3f", i ? ", " : "", ms[i]);
  std::printf("], ");
  std::printf("\"runs\": %d, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"min_ms\": %.3f, ", runs,
              percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 0.0));
  std::printf("\"rss_added_kib\": %ld, \"matches\": ", peak - rss_before);
  print_matches(found);
  std::printf(", \"best\": ");
  print_matches(best);
  std::printf("}\n");
  return 0;
}
