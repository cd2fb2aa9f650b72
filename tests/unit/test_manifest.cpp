// Tests for src/toolsets/manifest.h: the committed plugin.json, schema document
// and tests/tool-names.json must be exactly what the registry generates, so
// none drifts.
#include "toolsets/manifest.h"

#include <simdjson.h>

#include <catch2/catch.hpp>

#include "tests/support/tool_names.h"
#include "toolsets/registry.h"
#include "source_tree.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kRegenerate =
    "the committed file differs from the registry; run `build/tools/gen-manifest write .` "
    "in the source directory and commit the result";

using cu::test::read_source_file;
using cu::test::first_difference;
using cu::test::source_dir;

}  // namespace

TEST_CASE("the committed plugin.json is what the registry generates") {
  const std::string committed = read_source_file("plugin.json");
  const std::string generated = cu::plugin_json();
  INFO(kRegenerate);
  INFO(first_difference(committed, generated));
  // A bool, so a failure prints the difference above rather than both files.
  const bool same = committed == generated;
  CHECK(same);
}

TEST_CASE("the committed schema document is what the registry generates") {
  const std::string committed = read_source_file("docs/computer-use-mcp-tools-schema.md");
  const std::string generated = cu::schema_doc();
  INFO(kRegenerate);
  INFO(first_difference(committed, generated));
  // A bool, so a failure prints the difference above rather than both files.
  const bool same = committed == generated;
  CHECK(same);
}

TEST_CASE("the committed tests/tool-names.json lists every toolset's tools as the registry does") {
  // gen-manifest writes the file; the suites read it for their expected
  // lists, so this is the one place those lists are checked against the code.
  INFO(kRegenerate);
  std::vector<std::string> committed_sets;
  {
    simdjson::dom::parser parser;
    simdjson::dom::object doc;
    REQUIRE(parser.load(source_dir() + "/tests/tool-names.json").get(doc) == simdjson::SUCCESS);
    for (auto field : doc) committed_sets.emplace_back(field.key);
  }
  std::vector<std::string> registry_sets;
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    registry_sets.emplace_back(set.name);
    std::vector<std::string> names;
    for (const cu::tool_def& t : set.tools) names.emplace_back(t.name);
    CAPTURE(set.name);
    CHECK(cu::test::tool_names_of(set.name) == names);
  }
  CHECK(committed_sets == registry_sets);
}

TEST_CASE("plugin.json describes a service with a namespace, timeouts and no static tools") {
  const std::string json = cu::plugin_json();
  CHECK(json.back() == '\n');
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);

  std::string_view runtime;
  REQUIRE(root["runtime"].get(runtime) == simdjson::SUCCESS);
  CHECK(runtime == "service");

  std::string_view command;
  REQUIRE(root["service"]["command"].get(command) == simdjson::SUCCESS);
  CHECK_FALSE(command.empty());

  std::string_view ns;
  REQUIRE(root["service"]["toolNamespace"].get(ns) == simdjson::SUCCESS);
  CHECK(ns == "computer_use");

  simdjson::dom::object timeouts;
  REQUIRE(root["service"]["tools"].get(timeouts) == simdjson::SUCCESS);
  // The tools that may take longer than a host's default request timeout.
  CHECK(timeouts.size() == 5);
  for (std::string_view tool :
       {"hold_key", "wait", "screenshot_find", "wait_for_change", "wait_until_stable"}) {
    CAPTURE(tool);
    int64_t ms = 0;
    REQUIRE(timeouts[tool]["timeoutMs"].get(ms) == simdjson::SUCCESS);
    CHECK(ms == 120000);
  }

  simdjson::dom::array tools;
  REQUIRE(root["tools"].get(tools) == simdjson::SUCCESS);
  CHECK(tools.size() == 0);

  std::string_view name, version;
  CHECK(root["name"].get(name) == simdjson::SUCCESS);
  CHECK(root["version"].get(version) == simdjson::SUCCESS);
  CHECK_FALSE(version.empty());
}

TEST_CASE("the schema document lists every tool once in a section of its own, toolset by toolset") {
  const std::string doc = cu::schema_doc();
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    for (const std::string& tool : cu::test::tool_names_of(set.name)) {
      CAPTURE(tool);
      const std::string heading = "\n## " + tool + "\n";
      const size_t at = doc.find(heading);
      CHECK(at != std::string::npos);
      CHECK(doc.find(heading, at + 1) == std::string::npos);
    }
  }
  CHECK(doc.find("| 15 | [`hold_key`](#hold_key) | computer | input actor | no | 120000 ms |") !=
        std::string::npos);
  CHECK(doc.find("| 23 | [`wait`](#wait) | computer | loop | yes | 120000 ms |") !=
        std::string::npos);
  CHECK(doc.find("| 25 | [`list_windows`](#list_windows) | windows | desktop thread | yes |") !=
        std::string::npos);
  // The default toolset's section comes first.
  const size_t computer = doc.find("\n# Toolset `computer` (default)\n");
  const size_t windows = doc.find("\n# Toolset `windows`\n");
  REQUIRE(computer != std::string::npos);
  REQUIRE(windows != std::string::npos);
  CHECK(computer < windows);
}
