// Owns: how the unit tests that hold committed files to the code (the
// manifest, the documents' lists) find and read the source tree: meson
// passes its root in CU_SOURCE_DIR.
// Thread affinity: the test thread.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cu::test {

// The source directory (fails the test when CU_SOURCE_DIR is not set).
inline std::string source_dir() {
  const char* dir = std::getenv("CU_SOURCE_DIR");
  INFO("CU_SOURCE_DIR is not set; run the test through `meson test`");
  REQUIRE(dir != nullptr);
  return dir;
}

// A file's bytes (fails the test when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  INFO("cannot read " << path.string());
  REQUIRE(f);
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

// A file of the source tree, by its path from the root.
inline std::string read_source_file(const std::string& relative) {
  return read_file(std::filesystem::path(source_dir()) / relative);
}

// Where committed and generated text first differ: the 1-based line (of
// `what`, e.g. " of the block") with both versions of it, `end` standing for
// a side that ended, for a failure message that points at the drift.
inline std::string first_difference(const std::string& committed, const std::string& generated,
                                    const std::string& what = "",
                                    const std::string& end = "<end of file>") {
  std::istringstream a(committed), b(generated);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = bool(std::getline(a, la)), more_b = bool(std::getline(b, lb));
    if (!more_a && !more_b) return "only in line endings or the final newline";
    if (!more_a || !more_b || la != lb) {
      return "first difference at line " + std::to_string(line) + what +
             ":\n  committed: " + (more_a ? la : end) + "\n  generated: " + (more_b ? lb : end);
    }
  }
}

}  // namespace cu::test
