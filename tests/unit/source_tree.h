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

}  // namespace cu::test
