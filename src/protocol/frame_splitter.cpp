#include "protocol/frame_splitter.h"

#include <cstring>

namespace cu {

const void* frame_splitter::memchr_(const char* p, size_t n) { return memchr(p, '\n', n); }

}  // namespace cu
