// Owns: timing and checking the OCR under find_text (src/vision/ocr.h) on a
// saved screen, for the numbers in docs/vision.md.
//
//   bench_ocr SCREEN.png [X,Y,W,H] [options]
//
// Loads the PNG, turns it grey with to_gray, optionally crops it to
// X,Y,W,H, and reads it with ocr_engine::recognize: one untimed call, then
// --runs N (3) timed ones. Options: --scale S (2), --psm M (11),
// --no-polarity, --words (print every word with its box and confidence),
// --expect "a phrase" (repeatable: whether find_phrase finds it),
// --labels FILE (lines "X Y W H text": a label shown there, in the image's
// pixels; whether find_phrase finds it with a box overlapping that one, and
// the words read nearest to each one missed: tools/bench/bench-recall's
// measure).
//
// Prints the engine's start-up time, each recognition's time in
// milliseconds (and, beside it, the time of prepare_for_ocr alone), the
// number of words and the expected phrases found or not.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/png.h"
#include "vision/ocr.h"
#include "vision/phrase.h"

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

bool read_file(const char* path, std::vector<uint8_t>& out) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return false;
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_ocr SCREEN.png [X,Y,W,H] [--runs N] [--scale S] [--psm M] "
                    "[--no-polarity] [--words] [--expect PHRASE]...\n");
    return 2;
  }
  // As the server does with the vision toolset on: Tesseract's OpenMP on
  // one thread (OMP_THREAD_LIMIT, when set, wins).
  const bool limited = cu::limit_ocr_threads();
  cu::ocr_options options;
  int runs = 3;
  bool print_words = false;
  const char* dump = nullptr;
  std::vector<std::string> expect;
  const char* labels_path = nullptr;
  int cx = 0, cy = 0, cw = 0, ch = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (a == "--scale" && i + 1 < argc) {
      options.scale = atoi(argv[++i]);
    } else if (a == "--psm" && i + 1 < argc) {
      options.page_seg_mode = atoi(argv[++i]);
    } else if (a == "--no-polarity") {
      options.fix_polarity = false;
    } else if (a == "--dump" && i + 1 < argc) {
      dump = argv[++i];
    } else if (a == "--words") {
      print_words = true;
    } else if (a == "--labels" && i + 1 < argc) {
      labels_path = argv[++i];
    } else if (a == "--expect" && i + 1 < argc) {
      expect.emplace_back(argv[++i]);
    } else if (sscanf(a.c_str(), "%d,%d,%d,%d", &cx, &cy, &cw, &ch) != 4) {
      fprintf(stderr, "bench_ocr: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<uint8_t> png;
  if (!read_file(argv[1], png)) {
    fprintf(stderr, "bench_ocr: cannot read %s\n", argv[1]);
    return 1;
  }
  auto rgb = cu::decode_png_rgb(png);
  if (!rgb) {
    fprintf(stderr, "bench_ocr: %s\n", rgb.err().message.c_str());
    return 1;
  }
  const cu::gray_image gray =
      cu::to_gray(rgb->rgb.data(), rgb->w, rgb->h, size_t(rgb->w) * 3, cu::kLayoutRgb);
  cu::gray_view view = gray.view();
  if (cw > 0) view = view.crop(cu::rect{cx, cy, cw, ch});

  if (dump != nullptr) {
    // The image Tesseract is given, as a PGM.
    const cu::gray_image ready = cu::prepare_for_ocr(view, options);
    FILE* f = fopen(dump, "wb");
    if (f == nullptr) return 1;
    fprintf(f, "P5\n%d %d\n255\n", ready.w, ready.h);
    fwrite(ready.pixels.data(), 1, ready.pixels.size(), f);
    fclose(f);
  }
  auto t0 = clock_type::now();
  auto engine = cu::ocr_engine::open("", "");
  if (!engine) {
    fprintf(stderr, "bench_ocr: %s\n", engine.err().message.c_str());
    return 1;
  }
  printf("tesseract %s, start-up %.1f ms, image %dx%d, scale %d, psm %d, polarity %s, "
         "OpenMP threads %s\n",
         (*engine)->version().c_str(), ms_since(t0), view.w, view.h, options.scale,
         options.page_seg_mode, options.fix_polarity ? "fixed" : "as is",
         limited ? (getenv("OMP_THREAD_LIMIT") ? getenv("OMP_THREAD_LIMIT") : "1") : "all");
  std::vector<cu::ocr_word> words;
  for (int r = 0; r <= runs; ++r) {
    auto t = clock_type::now();
    auto got = (*engine)->recognize(view, options);
    const double ms = ms_since(t);
    if (!got) {
      fprintf(stderr, "bench_ocr: %s\n", got.err().message.c_str());
      return 1;
    }
    words = std::move(*got);
    // The preparation alone (recognize does it again inside the time above).
    auto p = clock_type::now();
    const cu::gray_image prepared = cu::prepare_for_ocr(view, options);
    const double prepare_ms = ms_since(p);
    printf("%s %.1f ms, %zu words (preparing the %dx%d image: %.1f ms)\n",
           r == 0 ? "untimed" : "run", ms, words.size(), prepared.w, prepared.h, prepare_ms);
  }
  if (print_words) {
    for (const cu::ocr_word& w : words) {
      printf("  (%d,%d %dx%d) %.2f %s\n", w.box.x, w.box.y, w.box.w, w.box.h,
             w.confidence, w.text.c_str());
    }
  }
  int missing = 0;
  for (const std::string& p : expect) {
    auto found = cu::find_phrase(words, p, false, 10);
    printf("%s \"%s\"", found.empty() ? "MISSING" : "found", p.c_str());
    for (const cu::phrase_match& m : found) {
      printf(" (%d,%d %dx%d %.2f)", m.box.x, m.box.y, m.box.w, m.box.h, m.confidence);
    }
    printf("\n");
    if (found.empty()) ++missing;
  }
  if (labels_path != nullptr) {
    FILE* f = fopen(labels_path, "r");
    if (f == nullptr) {
      fprintf(stderr, "bench_ocr: cannot read %s\n", labels_path);
      return 1;
    }
    char line[1024];
    int shown = 0, found = 0;
    while (fgets(line, sizeof line, f) != nullptr) {
      int x, y, w, h, at = 0;
      if (sscanf(line, "%d %d %d %d %n", &x, &y, &w, &h, &at) != 4) continue;
      std::string text(line + at);
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      const cu::rect truth{x - (cw > 0 ? cx : 0), y - (cw > 0 ? cy : 0), w, h};
      ++shown;
      bool hit = false;
      for (const cu::phrase_match& m : cu::find_phrase(words, text, false, 100)) {
        hit = hit || (m.box.x < truth.x + truth.w && truth.x < m.box.x + m.box.w &&
                      m.box.y < truth.y + truth.h && truth.y < m.box.y + m.box.h);
      }
      if (hit) {
        ++found;
        continue;
      }
      printf("label MISSED \"%s\" at (%d,%d %dx%d); nearest:", text.c_str(), truth.x, truth.y,
             truth.w, truth.h);
      for (const cu::near_text& n : cu::nearest_words(words, text, 3)) {
        printf(" \"%s\" (%d,%d %.2f)", n.text.c_str(), n.box.x, n.box.y, n.similarity);
      }
      printf("\n");
    }
    fclose(f);
    printf("labels found %d of %d\n", found, shown);
    if (found < shown) ++missing;
  }
  return missing == 0 ? 0 : 3;
}
