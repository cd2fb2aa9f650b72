// Owns: a malloc'd byte buffer that changes hands between threads: a capture
// worker encodes a PNG into one, the loop writes it out base64'd.
// Thread affinity: a value; one owner at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

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

}  // namespace cu
