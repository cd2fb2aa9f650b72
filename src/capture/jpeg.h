// Owns: JPEG encoding of RGB rows through libjpeg-turbo (its libjpeg API,
// which takes the image row by row, so no whole RGB image is held), for
// screens whose PNG would not fit a client's result budget.
// Thread affinity: none; each call has its own encoder state.
#pragma once

#include <functional>

#include "capture/png.h"
#include "core/byte_buffer.h"
#include "util/result.h"

namespace cu {

// The quality JPEG starts from when nothing is known about a screen: the
// best quality worth its bytes (above it files grow fast for little gain).
constexpr int kJpegBestQuality = 90;

// Encodes a width x height RGB image whose rows fill_row writes on demand
// (each row once, top to bottom) as a baseline JPEG at quality (1..100),
// with 4:2:0 chroma.
result<byte_buffer> encode_jpeg_rgb(int width, int height, const row_filler& fill_row,
                                    int quality);

// Rows per strip of a strip encode: whole MCU rows at 4:2:0 (16 rows).
constexpr int kJpegStripRows = 64;

// A JPEG cut into horizontal strips, each one restart interval: a restart
// marker resets the DC prediction, so strips encoded apart join exactly,
// and a strip whose rows did not change can be kept from an earlier
// encode of the same size and quality.
struct jpeg_strips {
  int width = 0;
  int height = 0;
  int quality = 0;
  // SOI to the end of SOS, as the first strip encoded wrote them (the
  // height in SOF0, at offset sof, is patched on assembly).
  std::shared_ptr<const byte_buffer> header;
  size_t sof = 0;
  // Each strip's entropy-coded data (in `deflated`); null: to be encoded.
  std::vector<png_strip> strips;
};

// Empty strips for an image of this size and quality.
jpeg_strips jpeg_strip_layout(int width, int height, int quality);

// Encodes the strips without data (several at once through runner) and
// joins all of them into one JPEG. make_filler is called once per run of
// strips, from the thread that encodes it.
result<byte_buffer> encode_jpeg_strips(jpeg_strips& j,
                                       const std::function<row_filler()>& make_filler,
                                       task_runner& runner);

}  // namespace cu
