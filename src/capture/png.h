// Owns: PNG encoding of RGB rows, tuned for screen content and latency; and
// decoding a PNG someone hands us (a screenshot_find template, a benchmark's
// screen) to RGB.
// Two encoders sit behind one function: ISA-L's igzip (level 1) writing the
// PNG container itself, when the build has libisal, because it deflates
// screen content five to six times faster than zlib; otherwise libspng at
// zlib level 1. Both use the SUB filter and stream rows as they are produced.
// With ISA-L and a task runner, horizontal strips of the image are produced
// and deflated at once on several threads, each as its own run of deflate
// blocks, and joined into one zlib stream (as pigz does).
// Thread affinity: none; each call has its own encoder state.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/byte_buffer.h"
#include "core/geometry.h"
#include "util/result.h"

namespace cu {

class task_runner;

enum class png_engine { fastest, spng };

// Writes image row y (width*3 bytes of RGB) into row.
using row_filler = std::function<void(int y, uint8_t* row)>;

// Encodes a width x height 8-bit RGB image whose rows fill_row writes on
// demand (each row once, top to bottom), so no whole RGB image is ever held.
// `fastest` is ISA-L when built in, else libspng.
result<byte_buffer> encode_png_rgb(int width, int height, const row_filler& fill_row,
                                   png_engine engine = png_engine::fastest);

// As above, but make_filler is called once per strip (from the thread that
// encodes it) for a filler with its own scratch state, and the strips may be
// encoded at once through runner. Without ISA-L it is the sequential
// libspng encoder.
result<byte_buffer> encode_png_rgb_parallel(int width, int height,
                                            const std::function<row_filler()>& make_filler,
                                            task_runner& runner);

// One horizontal strip of a PNG's image data, filtered and deflated on its
// own: its deflate blocks end byte-aligned and refer to nothing before the
// strip, so a strip whose rows did not change can be kept from an earlier
// encode of the same image size and joined with new ones.
struct png_strip {
  int y0 = 0;
  int y1 = 0;
  std::shared_ptr<const byte_buffer> deflated;  // Null: to be encoded.
  uint32_t adler = 1;    // Adler-32 of the strip's filtered rows.
  size_t raw_bytes = 0;  // Their length.
};

// A PNG file as the pieces it is made of, in order: its strips' bytes are
// shared (with the cache), not copied into one buffer.
struct png_pieces {
  std::vector<uint8_t> head;
  std::vector<std::shared_ptr<const byte_buffer>> body;
  std::vector<uint8_t> tail;
  size_t size() const;
  std::vector<std::span<const uint8_t>> spans() const;
  // The file as shared buffers: the body's strips shared, head and tail
  // copied (a few dozen bytes).
  std::vector<std::shared_ptr<const byte_buffer>> shared_pieces() const;
  // The file in one buffer.
  byte_buffer join() const;
};

// The strips an image of this height is cut into; empty when strips cannot
// be kept (without ISA-L, libspng encodes the image in one piece).
std::vector<png_strip> png_strip_layout(int height);

// Deflates the strips that have no bytes yet, several at once through
// runner, and joins every strip into one PNG. When the deflated bytes pass
// give_up_above, it stops early and answers nothing: the PNG would be too
// big. make_filler is called once per run of strips, from the thread that
// encodes it, for a filler with its own scratch state.
result<std::optional<png_pieces>> encode_png_strips(
    int width, int height, std::vector<png_strip>& strips,
    const std::function<row_filler()>& make_filler, task_runner& runner, size_t give_up_above);

// The engine `fastest` resolves to in this build: "isa-l" or "libspng".
const char* png_fastest_engine_name();

// A decoded PNG: 8-bit RGB, rows packed (3 * w bytes each).
struct rgb_pixels {
  int w = 0;
  int h = 0;
  std::vector<uint8_t> rgb;
};

// The width and height a PNG's header declares, read from its first 24
// bytes (the signature and the IHDR chunk's start) without decoding
// anything, so a caller can refuse an image too large before a byte of it
// is allocated. An invalid_argument error when the bytes do not start as a
// PNG does (the same words as decode_png_rgb's).
result<size2> png_header_size(std::span<const uint8_t> png);

// Decodes a PNG of any colour type and depth to 8-bit RGB (alpha dropped),
// at most max_side pixels a side (checked from the header, before the
// pixels' memory is allocated). An invalid_argument error saying why
// libspng refused it otherwise.
result<rgb_pixels> decode_png_rgb(std::span<const uint8_t> png, uint32_t max_side = 16384);

}  // namespace cu
