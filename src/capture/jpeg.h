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

// As above, but the image is cut into horizontal strips encoded at once
// through runner, each a restart interval of the one JPEG (restart markers
// reset the DC prediction, so strips encoded apart join exactly).
// make_filler is called once per strip, from the thread that encodes it.
result<byte_buffer> encode_jpeg_rgb_parallel(int width, int height,
                                             const std::function<row_filler()>& make_filler,
                                             int quality, task_runner& runner);

}  // namespace cu
