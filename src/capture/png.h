// Owns: PNG encoding of RGB rows, tuned for screen content and latency.
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

#include "core/byte_buffer.h"
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

// The engine `fastest` resolves to in this build: "isa-l" or "libspng".
const char* png_fastest_engine_name();

}  // namespace cu
