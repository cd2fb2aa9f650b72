// Owns: writing capture files into CU_SAVE_DIR safely: the directory is
// created 0700, files are created 0600 with unique names, and no symlink is
// ever followed (neither the directory itself nor a planted file name).
// Thread affinity: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "util/result.h"

namespace cu {

// Writes the file's pieces, in order, to a new file
// "<prefix>-<time>-<pid>-<n>.<extension>" in dir (extension "png" or "jpg");
// returns its full path.
result<std::string> save_image_file(const std::string& dir, const char* prefix,
                                    const char* extension,
                                    std::span<const std::span<const uint8_t>> pieces);

}  // namespace cu
