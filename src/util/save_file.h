// Owns: writing capture files into CU_SAVE_DIR safely: the directory is
// created 0700, files are created 0600 with unique names, and no symlink is
// ever followed (neither the directory itself nor a planted file name).
// Thread affinity: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/result.h"

namespace cu {

// Writes data to a new file "<prefix>-<time>-<pid>-<n>.png" in dir; returns
// its full path.
result<std::string> save_png_file(const std::string& dir, const char* prefix,
                                  const uint8_t* data, size_t size);

}  // namespace cu
