// Owns: the tool names the suites expect, read from tests/tool-names.json,
// which build/tools/gen-manifest writes from the registry and the manifest
// suite keeps from drifting (a change to the tool surface is then a reviewed
// diff of that one file, and every suite follows it).
// Thread affinity: any; each call reads the file again.
#pragma once

#include <simdjson.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace cu::test {

// The names of toolset `toolset` ("computer", "windows", "vision", "a11y") in
// tools/list order. The test fails when CU_SOURCE_DIR (set by meson) is
// missing or the file does not list the toolset.
inline std::vector<std::string> tool_names_of(std::string_view toolset) {
  const char* dir = std::getenv("CU_SOURCE_DIR");
  INFO("CU_SOURCE_DIR is not set; run the test through `meson test`");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/tests/tool-names.json";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  INFO("cannot read " << path);
  REQUIRE(parser.load(path).get(doc) == simdjson::SUCCESS);
  simdjson::dom::array names;
  INFO(path << " lists no toolset " << toolset);
  REQUIRE(doc[toolset].get(names) == simdjson::SUCCESS);
  std::vector<std::string> out;
  for (simdjson::dom::element n : names) out.emplace_back(n.get_string().value());
  return out;
}

}  // namespace cu::test
