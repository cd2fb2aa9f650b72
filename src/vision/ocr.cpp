#include "vision/ocr.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "util/str_cat.h"

namespace cu {
namespace {

// The few entry points of Tesseract's C API (tesseract/capi.h, stable since
// 3.02) this file uses, declared here so that the build needs no
// libtesseract-dev. The handles are opaque; BOOL is int; the enums are ints.
using tess_api = void;
using tess_result_iterator = void;
using tess_page_iterator = void;
using tess_monitor = void;
using tess_cancel_fn = bool (*)(void* cancel_this, int words);

// TessPageIteratorLevel's RIL_WORD.
constexpr int kRilWord = 3;

struct symbol {
  const char* name;
  void** slot;
};

}  // namespace

struct ocr_engine::api {
  void* lib = nullptr;
  tess_api* handle = nullptr;
  tess_monitor* monitor = nullptr;

  const char* (*version)() = nullptr;
  tess_api* (*create)() = nullptr;
  void (*destroy)(tess_api*) = nullptr;
  int (*init3)(tess_api*, const char*, const char*) = nullptr;
  int (*set_variable)(tess_api*, const char*, const char*) = nullptr;
  void (*set_page_seg_mode)(tess_api*, int) = nullptr;
  void (*set_image)(tess_api*, const unsigned char*, int, int, int, int) = nullptr;
  void (*set_source_resolution)(tess_api*, int) = nullptr;
  int (*recognize)(tess_api*, tess_monitor*) = nullptr;
  tess_result_iterator* (*get_iterator)(tess_api*) = nullptr;
  void (*clear)(tess_api*) = nullptr;
  void (*end)(tess_api*) = nullptr;
  tess_page_iterator* (*page_iterator)(tess_result_iterator*) = nullptr;
  int (*bounding_box)(const tess_page_iterator*, int, int*, int*, int*, int*) = nullptr;
  int (*next)(tess_result_iterator*, int) = nullptr;
  char* (*utf8_text)(const tess_result_iterator*, int) = nullptr;
  float (*confidence)(const tess_result_iterator*, int) = nullptr;
  void (*delete_text)(const char*) = nullptr;
  void (*delete_iterator)(tess_result_iterator*) = nullptr;
  tess_monitor* (*monitor_create)() = nullptr;
  void (*monitor_delete)(tess_monitor*) = nullptr;
  void (*monitor_set_cancel_func)(tess_monitor*, tess_cancel_fn) = nullptr;
  void (*monitor_set_cancel_this)(tess_monitor*, void*) = nullptr;

  std::array<symbol, 23> symbols() {
    return {{
        {"TessVersion", reinterpret_cast<void**>(&version)},
        {"TessBaseAPICreate", reinterpret_cast<void**>(&create)},
        {"TessBaseAPIDelete", reinterpret_cast<void**>(&destroy)},
        {"TessBaseAPIInit3", reinterpret_cast<void**>(&init3)},
        {"TessBaseAPISetVariable", reinterpret_cast<void**>(&set_variable)},
        {"TessBaseAPISetPageSegMode", reinterpret_cast<void**>(&set_page_seg_mode)},
        {"TessBaseAPISetImage", reinterpret_cast<void**>(&set_image)},
        {"TessBaseAPISetSourceResolution", reinterpret_cast<void**>(&set_source_resolution)},
        {"TessBaseAPIRecognize", reinterpret_cast<void**>(&recognize)},
        {"TessBaseAPIGetIterator", reinterpret_cast<void**>(&get_iterator)},
        {"TessBaseAPIClear", reinterpret_cast<void**>(&clear)},
        {"TessBaseAPIEnd", reinterpret_cast<void**>(&end)},
        {"TessResultIteratorGetPageIterator", reinterpret_cast<void**>(&page_iterator)},
        {"TessPageIteratorBoundingBox", reinterpret_cast<void**>(&bounding_box)},
        {"TessResultIteratorNext", reinterpret_cast<void**>(&next)},
        {"TessResultIteratorGetUTF8Text", reinterpret_cast<void**>(&utf8_text)},
        {"TessResultIteratorConfidence", reinterpret_cast<void**>(&confidence)},
        {"TessDeleteText", reinterpret_cast<void**>(&delete_text)},
        {"TessResultIteratorDelete", reinterpret_cast<void**>(&delete_iterator)},
        {"TessMonitorCreate", reinterpret_cast<void**>(&monitor_create)},
        {"TessMonitorDelete", reinterpret_cast<void**>(&monitor_delete)},
        {"TessMonitorSetCancelFunc", reinterpret_cast<void**>(&monitor_set_cancel_func)},
        {"TessMonitorSetCancelThis", reinterpret_cast<void**>(&monitor_set_cancel_this)},
    }};
  }
};

namespace {

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Where the English data is: TESSDATA_PREFIX (the tessdata directory itself,
// as Tesseract 4 and later read it), else where Debian 12's
// tesseract-ocr-eng puts it, else where other builds do.
result<std::string> find_tessdata(const std::string& asked) {
  std::vector<std::string> tried;
  if (!asked.empty()) {
    tried.push_back(asked);
  } else if (const char* prefix = getenv("TESSDATA_PREFIX"); prefix != nullptr && *prefix) {
    tried.push_back(prefix);
  } else {
    tried = {"/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
             "/usr/share/tessdata", "/usr/local/share/tessdata"};
  }
  for (std::string dir : tried) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (is_file(dir + "/eng.traineddata")) return dir;
  }
  std::string where;
  for (const std::string& dir : tried) where += str_cat(where.empty() ? "" : ", ", dir);
  return make_error(errc::not_available,
                    str_cat("find_text reads the screen with Tesseract OCR, whose English data "
                            "(eng.traineddata) is not in ",
                            where, ": install it with `", kTesseractInstall,
                            "` (or set TESSDATA_PREFIX to the directory that holds it)"));
}

bool on_cancel_check(void* cancel_this, int) {
  return static_cast<const std::atomic<bool>*>(cancel_this)->load(std::memory_order_relaxed);
}

// Each pixel scaled so that the lightest pixel around it (a square of
// 2 kRadius + 1, its background once the polarity is fixed) becomes white:
// dark text on a grey button face, or on a band of colour made light,
// keeps its contrast but loses the grey. Tesseract binarises the whole
// image with one threshold (Otsu's), and on a screen of mostly white that
// threshold fell between the grey and the white: the band went black
// with its text, and "Help" was read "Hep", GTK's blue "Apply" "RBpIy)".
// Where even the lightest pixel is dark (under a quarter of white) there
// is no background to go by, and the pixels stay.
void stretch_to_background(gray_image& img) {
  constexpr int kRadius = 5;
  constexpr int kLeastBackground = 64;
  const int w = img.w, h = img.h;
  std::vector<uint8_t> across(img.pixels.size()), light(img.pixels.size());
  for (int y = 0; y < h; ++y) {
    const uint8_t* in = img.pixels.data() + size_t(y) * size_t(w);
    uint8_t* out = across.data() + size_t(y) * size_t(w);
    for (int x = 0; x < w; ++x) {
      uint8_t most = 0;
      for (int k = std::max(0, x - kRadius); k <= std::min(w - 1, x + kRadius); ++k) {
        most = std::max(most, in[k]);
      }
      out[x] = most;
    }
  }
  for (int y = 0; y < h; ++y) {
    uint8_t* out = light.data() + size_t(y) * size_t(w);
    std::fill_n(out, size_t(w), uint8_t(0));
    for (int k = std::max(0, y - kRadius); k <= std::min(h - 1, y + kRadius); ++k) {
      const uint8_t* row = across.data() + size_t(k) * size_t(w);
      for (int x = 0; x < w; ++x) out[x] = std::max(out[x], row[x]);
    }
  }
  for (size_t i = 0; i < img.pixels.size(); ++i) {
    const int bg = light[i];
    if (bg < kLeastBackground || bg == 255) continue;
    img.pixels[i] = uint8_t(std::min(255, int(img.pixels[i]) * 255 / bg));
  }
}

// Thin straight lines erased: a button's or a list's frame, a popup's
// border, a link's underline. Tesseract took a frame drawn a pixel or two
// from its text for part of it ("|PressMe|"), and text inside a frame for
// part of a picture: the options of Chromium's open <select> popup were
// not read at all. A rule is a run of dark pixels (under mid-grey), at
// least kRuleLength long (a text stroke is shorter: a 15-pixel font's
// tallest stem is 11 pixels, its longest bar 8), whose pixels have light
// ones within two pixels on both sides across it (so it is at most three
// pixels thick; a bold stroke or a dark area is not a rule). Its pixels
// take the lighter of the two pixels two away across it.
void erase_rules(gray_image& img) {
  constexpr int kRuleLength = 20;
  const int w = img.w, h = img.h;
  const auto at = [&](int x, int y) -> uint8_t& { return img.pixels[size_t(y) * size_t(w) + size_t(x)]; };
  const auto dark = [&](int x, int y) { return at(x, y) < 128; };
  // Whether (x, y) is a thin dark pixel across the direction (dx, dy):
  // light within two pixels on each side of it.
  const auto thin = [&](int x, int y, int dx, int dy) {
    if (!dark(x, y)) return false;
    const int x1 = x - dx, y1 = y - dy, x2 = x - 2 * dx, y2 = y - 2 * dy;
    const int x3 = x + dx, y3 = y + dy, x4 = x + 2 * dx, y4 = y + 2 * dy;
    if (x2 < 0 || y2 < 0 || x4 >= w || y4 >= h) return false;
    return (!dark(x1, y1) || !dark(x2, y2)) && (!dark(x3, y3) || !dark(x4, y4));
  };
  std::vector<uint8_t> rule(img.pixels.size(), 0);
  // Across rows (horizontal rules: light above and below), then down
  // columns (vertical ones).
  for (int pass = 0; pass < 2; ++pass) {
    const bool rows = pass == 0;
    const int lines = rows ? h : w, length = rows ? w : h;
    for (int line = 0; line < lines; ++line) {
      int start = -1;
      for (int i = 0; i <= length; ++i) {
        const int x = rows ? i : line, y = rows ? line : i;
        const bool on = i < length && (rows ? thin(x, y, 0, 1) : thin(x, y, 1, 0));
        if (on && start < 0) start = i;
        if (on || start < 0) continue;
        if (i - start >= kRuleLength) {
          for (int k = start; k < i; ++k) {
            rule[rows ? size_t(line) * size_t(w) + size_t(k) : size_t(k) * size_t(w) + size_t(line)] =
                uint8_t(rows ? 1 : 2);
          }
        }
        start = -1;
      }
    }
  }
  std::vector<uint8_t> out(img.pixels);
  for (int y = 2; y < h - 2; ++y) {
    for (int x = 2; x < w - 2; ++x) {
      const uint8_t r = rule[size_t(y) * size_t(w) + size_t(x)];
      if (r == 0) continue;
      out[size_t(y) * size_t(w) + size_t(x)] =
          r == 1 ? std::max(at(x, y - 2), at(x, y + 2)) : std::max(at(x - 2, y), at(x + 2, y));
    }
  }
  img.pixels = std::move(out);
}


// Areas whose background is dark made light, their text dark, decided per
// connected region. Pixels are dark (under mid-grey) or light; a region is
// a connected set of one kind (dark ones joined across corners, light ones
// only along sides, so that the two never cross). A dark region is a
// background when some pixel of it has a solid 5x5 dark core and mostly
// dark surroundings (below); a light region is one when some pixel of it
// has a solid light core and mostly light surroundings, or when it has
// kLightArea such cores (a light field or button on a dark panel). A dark
// background is inverted, and so is every light region it touches that is
// not a background itself: the white text on it. The rest stays: dark text
// on a light background, and the light background.
//
// Before, each pixel was inverted or not by its own surroundings, and where
// those held two backgrounds the decision cut through the text: GTK's blue
// "Apply" and red "Remove" buttons kept their rounded, shaded ends dark
// around the turned text (read "RBpIy)"), and the "t" of "total" in an
// xterm beside the black desktop was glued to what was left of the
// desktop's edge ("Veotal"). A region turns over whole, and the black
// desktop and a white window both end up white with no edge between them.
//
// "Mostly dark" is the earlier per-pixel test, only deciding which region is
// a background now: more than 65% of a square of 2 kRadius + 1 around the
// pixel, or of a strip as wide and 2 kStripRadius + 1 rows tall, is dark.
// 65%, not 50%: text along a window's edge has the dark desktop on one side.
// The strip: a narrow band of colour (a menu bar, a coloured button, 20 to 30
// pixels tall) has the page above and below it inside the square. The solid
// core keeps a glyph (no 5x5 of one kind in text of 15-pixel fonts, bold or
// not) from ever being a background.
//
// An inverted pixel is also stretched so that its background's own level
// (the mean of the region's core pixels) becomes white: 255 - v alone left
// a blue face (grey 119) at 136, which the stretch below cannot lift near
// the face's edge (its lightest neighbour is the page outside).
//
// The region table is bounded: a screen of more than kMaxRegions regions
// (noise, a photograph, a fine checkerboard: nothing Tesseract reads
// anyway) keeps its pixels as they are, so the table costs at most 6 MiB
// beside the 4 bytes a pixel of the labels (a 4K screen's worst case was
// 200 MiB).
void fix_polarity(const gray_view& src, gray_image& out) {
  constexpr size_t kMaxRegions = size_t(1) << 18;
  constexpr int kRadius = 16;
  constexpr int kStripRadius = 4;
  constexpr int kCore = 2;
  constexpr uint32_t kLightArea = 200;
  const int w = src.w, h = src.h;
  const size_t n = size_t(w) * size_t(h);
  const auto at = [&](int x, int y) { return src.data[size_t(y) * src.stride + size_t(x)]; };
  // Summed dark pixels, (w + 1) x (h + 1).
  const int iw = w + 1;
  std::vector<uint32_t> dark_sum(size_t(iw) * size_t(h + 1), 0);
  for (int y = 0; y < h; ++y) {
    uint32_t run = 0;
    const uint32_t* above = dark_sum.data() + size_t(y) * size_t(iw);
    uint32_t* here = dark_sum.data() + size_t(y + 1) * size_t(iw);
    for (int x = 0; x < w; ++x) {
      run += at(x, y) < 128 ? 1u : 0u;
      here[x + 1] = above[x + 1] + run;
    }
  }
  const auto dark_in = [&](int x0, int y0, int x1, int y1, uint32_t& cells) {
    x0 = std::max(0, x0), y0 = std::max(0, y0), x1 = std::min(w, x1), y1 = std::min(h, y1);
    cells = uint32_t((x1 - x0) * (y1 - y0));
    const uint32_t* top = dark_sum.data() + size_t(y0) * size_t(iw);
    const uint32_t* bottom = dark_sum.data() + size_t(y1) * size_t(iw);
    return bottom[x1] - top[x1] - bottom[x0] + top[x0];
  };

  // Regions: union-find over the pixels, each pointing at the region's
  // first pixel (the smaller index wins, so one pass in order resolves it).
  std::vector<int32_t> region(n);
  const auto dark = [&](size_t i) { return src.data[(i / size_t(w)) * src.stride + i % size_t(w)] < 128; };
  const auto root = [&](int32_t i) {
    while (region[size_t(i)] != i) {
      region[size_t(i)] = region[size_t(region[size_t(i)])];
      i = region[size_t(i)];
    }
    return i;
  };
  const auto join = [&](int32_t a, int32_t b) {
    a = root(a), b = root(b);
    if (a < b) region[size_t(b)] = a;
    if (b < a) region[size_t(a)] = b;
  };
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = src.data + size_t(y) * src.stride;
    const uint8_t* up = y > 0 ? row - src.stride : nullptr;
    for (int x = 0; x < w; ++x) {
      const int32_t i = int32_t(size_t(y) * size_t(w) + size_t(x));
      region[size_t(i)] = i;
      const bool d = row[x] < 128;
      if (x > 0 && (row[x - 1] < 128) == d) join(i, i - 1);
      if (up == nullptr) continue;
      if ((up[x] < 128) == d) join(i, i - w);
      if (!d) continue;
      if (x > 0 && up[x - 1] < 128) join(i, i - w - 1);
      if (x + 1 < w && up[x + 1] < 128) join(i, i - w + 1);
    }
  }
  // Numbered 0.. in order of their first pixel.
  struct kind {
    bool background = false;
    uint32_t cores = 0;
    uint64_t core_sum = 0;
    int32_t under = -1;  // The dark background a light region lies on.
  };
  size_t regions = 0;
  for (size_t i = 0; i < n; ++i) regions += region[i] == int32_t(i) ? 1 : 0;
  if (regions > kMaxRegions) {
    for (int y = 0; y < h; ++y) {
      std::copy_n(src.data + size_t(y) * src.stride, size_t(w), out.pixels.data() + size_t(y) * size_t(w));
    }
    return;
  }
  std::vector<kind> kinds;
  kinds.reserve(regions);
  for (size_t i = 0; i < n; ++i) {
    if (region[i] == int32_t(i)) {
      region[i] = int32_t(kinds.size());
      kinds.emplace_back();
    } else {
      region[i] = region[size_t(region[i])];
    }
  }
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint32_t cells = 0;
      const uint32_t core = dark_in(x - kCore, y - kCore, x + kCore + 1, y + kCore + 1, cells);
      const bool d = at(x, y) < 128;
      if (core != (d ? cells : 0)) continue;
      kind& k = kinds[size_t(region[size_t(y) * size_t(w) + size_t(x)])];
      ++k.cores;
      k.core_sum += at(x, y);
      if (k.background) continue;
      uint32_t square = 0, strip = 0;
      uint32_t sq_dark = dark_in(x - kRadius, y - kRadius, x + kRadius + 1, y + kRadius + 1, square);
      uint32_t st_dark =
          dark_in(x - kRadius, y - kStripRadius, x + kRadius + 1, y + kStripRadius + 1, strip);
      if (!d) sq_dark = square - sq_dark, st_dark = strip - st_dark;
      k.background = 20 * sq_dark > 13 * square || 20 * st_dark > 13 * strip;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    kind& k = kinds[size_t(region[i])];
    if (!dark(i) && k.cores >= kLightArea) k.background = true;
  }
  // Which dark background each light non-background region touches.
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = size_t(y) * size_t(w) + size_t(x);
      kind& k = kinds[size_t(region[i])];
      if (k.background || k.under >= 0 || at(x, y) < 128) continue;
      const auto touch = [&](int nx, int ny) {
        if (nx < 0 || ny < 0 || nx >= w || ny >= h || at(nx, ny) >= 128) return;
        const int32_t other = region[size_t(ny) * size_t(w) + size_t(nx)];
        if (kinds[size_t(other)].background) k.under = other;
      };
      touch(x - 1, y), touch(x + 1, y), touch(x, y - 1), touch(x, y + 1);
    }
  }
  // And the dark bits inside that white text (the counter of an "o", a
  // darker edge pixel) turn with it, or the "o" is filled and read "e".
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = size_t(y) * size_t(w) + size_t(x);
      kind& k = kinds[size_t(region[i])];
      if (k.background || k.under >= 0 || at(x, y) >= 128) continue;
      const auto touch = [&](int nx, int ny) {
        if (nx < 0 || ny < 0 || nx >= w || ny >= h || at(nx, ny) < 128) return;
        const kind& other = kinds[size_t(region[size_t(ny) * size_t(w) + size_t(nx)])];
        if (!other.background && other.under >= 0) k.under = other.under;
      };
      touch(x - 1, y), touch(x + 1, y), touch(x, y - 1), touch(x, y + 1);
    }
  }
  for (int y = 0; y < h; ++y) {
    const uint8_t* in = src.data + size_t(y) * src.stride;
    uint8_t* o = out.pixels.data() + size_t(y) * size_t(w);
    const int32_t* r = region.data() + size_t(y) * size_t(w);
    for (int x = 0; x < w; ++x) {
      const kind& k = kinds[size_t(r[x])];
      const bool d = in[x] < 128;
      const kind* face = d && k.background ? &k
                         : !k.background && k.under >= 0 ? &kinds[size_t(k.under)]
                                                          : nullptr;
      if (face == nullptr) {
        o[x] = in[x];
        continue;
      }
      const int level = int(face->core_sum / face->cores);
      o[x] = uint8_t(std::min(255, (255 - in[x]) * 255 / (255 - level)));
    }
  }
}

}  // namespace

gray_image prepare_for_ocr(const gray_view& src, const ocr_options& options) {
  const int scale = std::clamp(options.scale, 1, 4);
  gray_image fixed;
  fixed.w = src.w;
  fixed.h = src.h;
  fixed.pixels.resize(size_t(src.w) * size_t(src.h));
  if (options.fix_polarity) {
    fix_polarity(src, fixed);
  } else {
    for (int y = 0; y < src.h; ++y) {
      std::copy_n(src.data + size_t(y) * src.stride, size_t(src.w),
                  fixed.pixels.data() + size_t(y) * size_t(src.w));
    }
  }
  if (options.fix_polarity) {
    stretch_to_background(fixed);
    erase_rules(fixed);
  }
  if (scale == 1) return fixed;

  // Bilinear enlargement: output pixel centre (x + 0.5) / scale - 0.5 in
  // the source, weights in 1/(2 scale)ths, edges clamped.
  gray_image big;
  big.w = src.w * scale;
  big.h = src.h * scale;
  big.pixels.resize(size_t(big.w) * size_t(big.h));
  const int den = 2 * scale;
  auto tap = [&](int i, int n, int& a, int& b, int& wb) {
    // Position (2i + 1 - scale) / den in source pixels.
    const int num = 2 * i + 1 - scale;
    int base = num >= 0 ? num / den : -1;
    wb = num - base * den;
    a = std::clamp(base, 0, n - 1);
    b = std::clamp(base + 1, 0, n - 1);
  };
  std::vector<int> xa(size_t(big.w)), xb(size_t(big.w)), xw(size_t(big.w));
  for (int x = 0; x < big.w; ++x) tap(x, src.w, xa[size_t(x)], xb[size_t(x)], xw[size_t(x)]);
  for (int y = 0; y < big.h; ++y) {
    int ya, yb, yw;
    tap(y, src.h, ya, yb, yw);
    const uint8_t* r0 = fixed.pixels.data() + size_t(ya) * size_t(src.w);
    const uint8_t* r1 = fixed.pixels.data() + size_t(yb) * size_t(src.w);
    uint8_t* out = big.pixels.data() + size_t(y) * size_t(big.w);
    for (int x = 0; x < big.w; ++x) {
      const int a = xa[size_t(x)], b = xb[size_t(x)], w = xw[size_t(x)];
      const int top = r0[a] * (den - w) + r0[b] * w;
      const int bottom = r1[a] * (den - w) + r1[b] * w;
      out[x] = uint8_t((top * (den - yw) + bottom * yw + den * den / 2) / (den * den));
    }
  }
  return big;
}

bool limit_ocr_threads() {
  if (const char* set = getenv("OMP_THREAD_LIMIT"); set != nullptr) return true;
  // Already loaded (a sanitizer runtime, say): too late to limit it.
  if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD) != nullptr) return false;
  setenv("OMP_THREAD_LIMIT", "1", 1);
  // Kept loaded for the process, as libtesseract will be.
  void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
  unsetenv("OMP_THREAD_LIMIT");
  return gomp != nullptr;
}

ocr_engine::ocr_engine(std::unique_ptr<api> a) : api_(std::move(a)) {}

ocr_engine::~ocr_engine() {
  if (api_->monitor != nullptr) api_->monitor_delete(api_->monitor);
  if (api_->handle != nullptr) {
    api_->end(api_->handle);
    api_->destroy(api_->handle);
  }
  // The library stays loaded: unloading a C++ library with OpenMP threads
  // and static state is not worth the risk for the memory it would give
  // back, and a later engine would load it again.
}

result<std::unique_ptr<ocr_engine>> ocr_engine::open(const std::string& library,
                                                     const std::string& tessdata) {
  const std::string name = library.empty() ? "libtesseract.so.5" : library;
  auto a = std::make_unique<api>();
  a->lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (a->lib == nullptr) {
    const char* why = dlerror();
    return make_error(errc::not_available,
                      str_cat("find_text reads the screen with Tesseract OCR, which is not "
                              "installed: ",
                              name, " could not be loaded (", why != nullptr ? why : "?",
                              "). Install it with `", kTesseractInstall, "`"));
  }
  for (const symbol& s : a->symbols()) {
    *s.slot = dlsym(a->lib, s.name);
    if (*s.slot == nullptr) {
      return make_error(errc::not_available,
                        str_cat(name, " has no ", s.name,
                                ": it is not the Tesseract 4 or 5 library find_text needs. "
                                "Install it with `",
                                kTesseractInstall, "`"));
    }
  }
  auto data = find_tessdata(tessdata);
  if (!data) return data.take_error();
  a->handle = a->create();
  if (a->handle == nullptr) return make_error(errc::io, "Tesseract could not make a recognizer");
  auto engine = std::unique_ptr<ocr_engine>(new ocr_engine(std::move(a)));
  api& t = *engine->api_;
  // Tesseract's own messages ("Detected 12 diacritics", resolution
  // warnings) would land in the server's log: send them nowhere.
  t.set_variable(t.handle, "debug_file", "/dev/null");
  if (t.init3(t.handle, data->c_str(), "eng") != 0) {
    return make_error(errc::not_available,
                      str_cat("Tesseract could not load its English data from ", *data,
                              ": reinstall it with `", kTesseractInstall, "`"));
  }
  t.set_variable(t.handle, "debug_file", "/dev/null");
  t.monitor = t.monitor_create();
  return engine;
}

std::string ocr_engine::version() const { return api_->version(); }

result<std::vector<ocr_word>> ocr_engine::recognize(const gray_view& image,
                                                    const ocr_options& options,
                                                    const std::atomic<bool>* stop) {
  api& t = *api_;
  if (image.w <= 0 || image.h <= 0) return std::vector<ocr_word>{};
  const gray_image ready = prepare_for_ocr(image, options);
  const int scale = ready.w / image.w;
  t.set_page_seg_mode(t.handle, options.page_seg_mode);
  // Copied by Tesseract (into a Leptonica image): ready may go after this.
  t.set_image(t.handle, ready.pixels.data(), ready.w, ready.h, 1, ready.w);
  // A screen is about 96 pixels per inch; enlarged, proportionally more.
  t.set_source_resolution(t.handle, 96 * scale);
  static const std::atomic<bool> never{false};
  t.monitor_set_cancel_func(t.monitor, on_cancel_check);
  t.monitor_set_cancel_this(t.monitor, const_cast<std::atomic<bool>*>(stop != nullptr ? stop : &never));
  const int status = t.recognize(t.handle, t.monitor);
  if (stop != nullptr && stop->load()) {
    t.clear(t.handle);
    return make_error(errc::cancelled, "the text recognition was cancelled");
  }
  if (status != 0) {
    t.clear(t.handle);
    return make_error(errc::io, "Tesseract could not read the image");
  }
  std::vector<ocr_word> words;
  tess_result_iterator* it = t.get_iterator(t.handle);
  if (it != nullptr) {
    do {
      tess_page_iterator* page = t.page_iterator(it);
      char* text = t.utf8_text(it, kRilWord);
      int left = 0, top = 0, right = 0, bottom = 0;
      if (text != nullptr && *text != '\0' &&
          t.bounding_box(page, kRilWord, &left, &top, &right, &bottom)) {
        ocr_word w;
        w.text = text;
        // Back to the pixels given: the enlarged box, divided, rounded out.
        const int x0 = left / scale, y0 = top / scale;
        const int x1 = std::min(image.w, (right + scale - 1) / scale);
        const int y1 = std::min(image.h, (bottom + scale - 1) / scale);
        w.box = rect{x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0)};
        w.confidence = std::clamp(double(t.confidence(it, kRilWord)) / 100.0, 0.0, 1.0);
        words.push_back(std::move(w));
      }
      if (text != nullptr) t.delete_text(text);
    } while (t.next(it, kRilWord));
    t.delete_iterator(it);
  }
  t.clear(t.handle);
  return words;
}

}  // namespace cu
