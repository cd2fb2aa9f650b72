// Owns: finding a template image inside a bigger one, the core of
// screenshot_find: grayscale conversion, zero-mean normalized
// cross-correlation (what OpenCV calls TM_CCOEFF_NORMED) computed everywhere
// or coarse-to-fine on binomial pyramids, the suppression of overlapping
// matches, matching a template cut from a downscaled screenshot against
// the device pixels the screenshot was made from, and screenshot_find's
// whole search (find_on_screen): a colour template at the scales a
// downscaled screen makes sense of, scored in grey and in colour.
// Thread affinity: none; pure functions over pixels the caller owns and keeps
// alive for the call. Nothing is shared between calls, so any number of
// threads may match at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/geometry.h"
#include "util/result.h"

namespace cu {

// A read-only 8-bit grayscale image the caller owns: h rows of w bytes, row y
// starting at data + y * stride (stride >= w).
struct gray_view {
  const uint8_t* data = nullptr;
  int w = 0;
  int h = 0;
  size_t stride = 0;

  uint8_t at(int x, int y) const { return data[size_t(y) * stride + size_t(x)]; }
  // The sub-image r, sharing these pixels. r must lie inside the image.
  gray_view crop(const rect& r) const {
    return {data + size_t(r.y) * stride + size_t(r.x), r.w, r.h, stride};
  }
};

// An 8-bit grayscale image with its own pixels, rows packed (stride == w).
struct gray_image {
  int w = 0;
  int h = 0;
  std::vector<uint8_t> pixels;

  gray_view view() const { return {pixels.data(), w, h, size_t(w)}; }
};

// Where the colour bytes sit in one source pixel: its size, and the byte
// index of red, green and blue within it (capture/scale.h's pixel_layout
// gives the last three for an X frame).
struct color_layout {
  int bytes_per_pixel = 4;  // 3 (packed RGB) or 4 (a 32-bit X pixel).
  int r = 2;
  int g = 1;
  int b = 0;
};
inline constexpr color_layout kLayoutBgrx{4, 2, 1, 0};  // A 24-bit X visual, little-endian.
inline constexpr color_layout kLayoutRgb{3, 0, 1, 2};   // A decoded 8-bit RGB PNG.

// A read-only image of colour pixels the caller owns: h rows of w pixels
// laid out as layout says, row y starting at data + y * stride.
struct color_view {
  const uint8_t* data = nullptr;
  int w = 0;
  int h = 0;
  size_t stride = 0;
  color_layout layout = kLayoutBgrx;

  const uint8_t* px(int x, int y) const {
    return data + size_t(y) * stride + size_t(x) * size_t(layout.bytes_per_pixel);
  }
};

// An 8-bit RGB image with its own pixels, rows packed.
struct rgb_image {
  int w = 0;
  int h = 0;
  std::vector<uint8_t> pixels;

  color_view view() const { return {pixels.data(), w, h, size_t(w) * 3, kLayoutRgb}; }
};

// The luma of a w x h image of colour pixels whose rows lie stride bytes
// apart, as OpenCV's cvtColor(COLOR_RGB2GRAY) computes it for 8-bit pixels,
// byte for byte: (4899 R + 9617 G + 1868 B + 8192) >> 14, BT.601's 0.299,
// 0.587 and 0.114 in 14-bit fixed point. So an image converted here and one
// converted by OpenCV score alike. Bytes outside the layout's three
// channels are never read. w and h must be positive.
gray_image to_gray(const uint8_t* pixels, int w, int h, size_t stride, color_layout layout);

// The area-averaging downscale of src to dst_w x dst_h (0 < dst_w <= src.w,
// 0 < dst_h <= src.h): each destination pixel is the mean of the source
// area it covers, partly covered source pixels weighted by their fraction.
// It is capture/scale.h's filter with its arithmetic (weights in 1/256ths,
// rows first, one rounding at the end) on one channel, so the grey of a
// screenshot and the downscale of the same screen's grey differ by a grey
// level at most (to_gray's rounding before or after the mean).
gray_image area_downscale(const gray_view& src, int dst_w, int dst_h);

// One place the template was found, in the pixels of the image searched.
struct match {
  int x = 0;  // Top-left corner.
  int y = 0;
  int w = 0;  // The template's size.
  int h = 0;
  // The zero-mean normalized cross-correlation there, in [-1, 1] (see
  // ncc_at); 1 is the template's own pixels up to brightness and contrast.
  double score = 0;
  // The template's pixels per pixel of the image searched at which it was
  // found (find_on_screen); 1 for every other search.
  double scale = 1;
  bool operator==(const match&) const = default;
};

// How find_template searches. Both ways compute every score they report
// exactly; they differ in which positions they score.
enum class match_method {
  // exhaustive when the template is too small for a pyramid level (its
  // smaller side under 2 * kCoarseMinSide) or the whole search is cheap,
  // otherwise pyramid.
  automatic,
  // Every position at full resolution: the reference, and the one that
  // never misses.
  exhaustive,
  // Coarse-to-fine: every position at the coarsest level where the
  // template's smaller side is still kCoarseMinSide pixels, then at most
  // 256 candidates (more for a large max_results) refined level by level,
  // each in a few pixels around its doubled position (docs/vision.md).
  // Meant to find what exhaustive finds at a fraction of its cost; tests
  // check it on many scenes, but a pathological image can make it miss a
  // match whose coarse score is poor.
  pyramid,
};

// The smallest side the template keeps at the pyramid's coarsest level.
inline constexpr int kCoarseMinSide = 12;

struct match_options {
  // The lowest score a match may have, from 0 to 1. A match also needs a
  // score above 0, so a flat stretch of the image (scored 0) never matches.
  double threshold = 0.9;
  // The most matches returned, from 1 to kMaxResults.
  int max_results = 10;
  match_method method = match_method::automatic;
  // false runs the portable scalar loops even where the CPU has AVX2, so
  // tests and benchmarks can compare the two; the scores are the same.
  bool use_simd = true;
};

inline constexpr int kMaxResults = 1000;

// The largest template, on either side: the one limit on a template,
// whatever its source. find_template refuses more; screenshot_find checks
// a PNG's header against it before decoding a pixel, so a small file that
// declares a huge image costs nothing (docs/vision.md). 2048 is more than
// any screenshot's side (core/geometry.h's kMaxImageEdge), so every
// template that could be found is taken, and it keeps every sum a score is
// made of exact: at most 2^22 pixels, so n * sum(T * I) fits 64-bit
// integers, and a row's or a column's sums (2048 * 255^2) fit 32 bits.
inline constexpr int kMaxTemplateSide = 2048;

// Whether a template of w x h pixels is within kMaxTemplateSide: done,
// or the invalid_argument error every refusal of a large template gives.
status check_template_size(int w, int h);

// A template whose grey levels' standard deviation is below this is flat:
// it would match any stretch of one colour as well as any other.
inline constexpr double kFlatTemplateStddev = 1.0;

// The score of needle at (x, y) in haystack, computed straight from the
// definition in double precision; the reference the searches are tested
// against. It is OpenCV's TM_CCOEFF_NORMED on these grey levels:
//
//   sum(T' * I') / sqrt(sum(T'^2) * sum(I'^2))
//
// where T' is the template minus its mean and I' the haystack window under
// it minus the window's mean. A window of one grey level (zero variance)
// scores 0, as OpenCV's does; so does a flat template. The needle must fit
// inside the haystack at (x, y).
double ncc_at(const gray_view& haystack, const gray_view& needle, int x, int y);

// Where needle appears in haystack: the positions scoring at least
// options.threshold (and above 0), best first (equal scores: top to bottom,
// then left to right), at most options.max_results of them.
//
// Overlapping matches are suppressed: going down that list, a position is
// dropped when its rectangle and one already kept share more than half the
// template's area. And only a local maximum (no better score among its
// eight neighbours) is a match at all, so one strong match is one answer.
//
// Errors (invalid_argument, the message says which and what to do): an
// empty haystack or template; a template larger than the haystack in either
// direction, or above kMaxTemplateSide on a side (check_template_size); a flat template
// (standard deviation under kFlatTemplateStddev grey levels); a threshold
// outside [0, 1] or max_results outside [1, kMaxResults]. No match is an
// empty list, not an error.
result<std::vector<match>> find_template(const gray_view& haystack, const gray_view& needle,
                                         const match_options& options = {});

// Finds a template cut from a screenshot in the device pixels that
// screenshot was downscaled from, and answers in device pixels.
//
// device is the whole device area of the screenshot (the session's device
// rectangle, its top-left at (0, 0)) and image the size the screenshot had;
// the screenshot was area-averaged from one to the other. needle is in
// image pixels; region (image pixels, inside the image; empty: all of it)
// is where to look.
//
// The device pixels are downscaled to the image's size with the
// screenshot's own filter (area_downscale) and searched there, so a
// template cut from a screenshot of an unchanged screen meets its own
// pixels again and scores about 1, and options.threshold means what it
// means for find_template. Each match is then placed at device resolution:
// the template, upscaled bilinearly to its device size, is matched within
// a pixel and a half of an image pixel around the spot the image match
// maps to, so content that moved by a fraction of an image pixel since the
// screenshot is still placed to the device pixel. A match's x, y, w and h
// are device pixels (w and h the template's size times the scale, rounded),
// its score the image-space score.
//
// Errors: as find_template, and invalid_argument for an image size that is
// not positive or larger than device, or a region outside the image.
// downscaled: device already downscaled to image (a caller that cut the
// template from it passes it so the screen is not downscaled twice).
result<std::vector<match>> find_template_scaled(const gray_view& device, size2 image,
                                                const gray_view& needle,
                                                const match_options& options = {},
                                                const rect& region = {},
                                                const gray_image* downscaled = nullptr);

// The part r (image pixels, inside the image) of the screenshot made from
// device at size image, in colour: area_downscale's filter on each channel,
// so these are the screenshot's own pixels there (capture/scale.h filters
// the same way), computed for r alone.
rgb_image screenshot_part(const color_view& device, size2 image, const rect& r);

// The colour score of two images of one size: the zero-mean normalized
// cross-correlation of their R, G and B values taken together, each
// channel less its own mean (OpenCV's TM_CCOEFF_NORMED on a 3-channel
// image):
//
//   sum_c sum(T'_c * I'_c) / sqrt(sum_c sum(T'_c^2) * sum_c sum(I'_c^2))
//
// Brightness and contrast still do not count, but a channel that varies in
// the template and not in the window counts against it: a green box's
// template scores about 0.7 on a red box of its shape, where the grey
// score is the same for both. Flat windows score 0.
double color_ncc(const color_view& window, const color_view& needle);

// The scales find_on_screen tries for a screenshot of device pixels sent
// at size image, as template pixels per screenshot pixel along x: 1 (cut
// from the screenshot), the screen's own factor device.w / image.w (an icon
// file, a zoom crop: the screen's real size), and steps between them no
// more than 1.2 apart (for 1920x1080 sent as 1366x768: 1, 1.186, 1.406).
// Just 1 when the screenshot is not downscaled.
std::vector<double> search_scales(size2 device, size2 image);

// One match of find_on_screen.
struct screen_match {
  rect image;   // In the screenshot's pixels: where to click.
  rect device;  // In device pixels, relative to the device area's top-left.
  // The lower of the grey score (ncc_at, as find_template computes it) and
  // the colour score (color_ncc) there, both in the screenshot's pixels.
  double score = 0;
  // Template pixels per screenshot pixel (one of search_scales).
  double scale = 1;
};

// The sub-pixel offsets (phases) find_on_screen tries along each axis when
// it downscales a template: a crop of the screen at its real size starts
// anywhere within a screenshot pixel, and its plain downscale averages
// other groups of device pixels than the screenshot did (docs/vision.md).
inline constexpr int kPhases = 3;

// How far below the threshold a grey match at a scale above 1 may score
// and still have its phases tried: the most the plain downscale was
// measured to lose on fine text is 0.25 on an xterm and 0.39 on synthetic
// one-pixel glyphs (0.61 where the right phase scores 0.998).
inline constexpr double kPhaseMargin = 0.35;

struct screen_search {
  match_options match;
  // Where to look, in image pixels (empty: all of the image).
  rect region;
  // The template was cut from the screenshot (template_region): it is
  // searched at scale 1 alone.
  bool cut_from_image = false;
  // How many sub-pixel offsets of the template's downscale are tried along
  // each axis at a scale above 1, from 1 (the plain downscale alone) to 8.
  int phases = kPhases;
};

// Finds a colour template on a screen whose screenshot is device (the whole
// device area, its top-left at (0, 0)) downscaled to image.
//
// The template is tried at every scale of search_scales (one with
// cut_from_image): downscaled to the screenshot's pixels (area_downscale)
// and searched with find_template in the screenshot as the screen looks
// now, at threshold; then each of the best few grey matches (2 *
// max_results + 8 a scale) is scored in colour at its place, and its score
// becomes the lower of the two. At a scale above 1 the template is also
// downscaled at search.phases sub-pixel offsets along each axis (a crop
// starts anywhere within a screenshot pixel): the grey candidates are
// taken from kPhaseMargin below the threshold (at least 32 of them, two
// dropped as one only when they overlap by nine tenths), each is scored
// with every phase within an image pixel of its place, and the best
// phase's grey and colour score replaces the plain one when higher. The matches of every scale are then taken
// best first, one dropped when it shares more than half the smaller's area
// with one kept, up to max_results, and each is placed at device
// resolution as find_template_scaled places them, with the template at its
// device size (at the screen's own scale: the template itself).
//
// Errors: as find_template_scaled; search.phases outside [1, 8]; a
// template that fits no scale's search (too large, flat) gets the error of
// the first scale tried.
result<std::vector<screen_match>> find_on_screen(const color_view& device, size2 image,
                                                 const color_view& needle,
                                                 const screen_search& search);

}  // namespace cu
