// Owns: PNG encoding of RGB rows, tuned for screen content and latency.
// Two encoders sit behind one function: ISA-L's igzip (level 1) writing the
// PNG container itself, when the build has libisal, because it deflates
// screen content five to six times faster than zlib; otherwise libspng at
// zlib level 1. Both use the SUB filter and stream rows as they are produced.
// Thread affinity: none; each call has its own encoder state.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>

#include "util/result.h"

namespace cu {

// Bytes allocated with malloc, freed with free (libspng hands us such a
// buffer, and the ISA-L path grows its own with realloc).
struct byte_buffer {
  struct free_deleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, free_deleter> data;
  size_t size = 0;
};

enum class png_engine { fastest, spng };

// Encodes a width x height 8-bit RGB image whose rows fill_row writes on
// demand (row y into a buffer of width*3 bytes, top to bottom, once each), so
// no whole RGB image is ever held. `fastest` is ISA-L when built in, else
// libspng.
result<byte_buffer> encode_png_rgb(int width, int height,
                                   const std::function<void(int y, uint8_t* row)>& fill_row,
                                   png_engine engine = png_engine::fastest);

// The engine `fastest` resolves to in this build: "isa-l" or "libspng".
const char* png_fastest_engine_name();

}  // namespace cu
