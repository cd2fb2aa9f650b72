// The context budget: what a model reads of tools/list on every turn (each
// tool's name, description and input schema, as compact JSON) stays within
// the bounds docs/protocol.md promises. Prints the figures per toolset.
#include <simdjson.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "build_config.h"
#include "core/json_writer.h"
#include "toolsets/registry.h"

namespace {

// The reference server's 24 tools, measured the same way.
constexpr size_t kDefaultBudget = 10'600;
// 25,000 since the marks toolset (930 bytes; 23,686 before it).
constexpr size_t kEveryToolsetBudget = 25'000;
constexpr size_t kBatchBudget = 2'500;

// The bytes a model reads of one tool with these toolsets on.
size_t model_bytes(const cu::tool_def& t, cu::toolset_mask on) {
  std::string out;
  cu::json_writer w(out);
  w.begin_object();
  w.key("name").string(t.name);
  w.key("description").string(t.description);
  w.key("inputSchema").raw(cu::input_schema_of(t, on));
  w.end_object();
  return out.size();
}

size_t toolset_bytes(const cu::toolset_def& set, cu::toolset_mask on) {
  size_t n = 0;
  for (const cu::tool_def& t : set.tools) n += model_bytes(t, on);
  return n;
}

}  // namespace

TEST_CASE("the default 24 tools cost a model no more than the reference's") {
  size_t total = 0;
  for (const cu::tool_def& t : cu::computer_tools()) total += model_bytes(t, cu::kDefaultToolsets);
  std::printf("default toolset: %zu bytes (budget %zu)\n", total, kDefaultBudget);
  CHECK(total <= kDefaultBudget);
}

TEST_CASE("every toolset together stays within its budget, and each says what it costs") {
  const cu::toolset_mask on = cu::every_toolset();
  size_t total = 0;
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    if (!cu::has(on, set.id)) continue;
    const size_t n = toolset_bytes(set, on);
    std::printf("toolset %.*s: %zu bytes with every toolset on (alone: %zu)\n",
                int(set.name.size()), set.name.data(), n,
                toolset_bytes(set, cu::kDefaultToolsets | cu::mask_of(set.id)));
    total += n;
  }
  std::printf("every toolset: %zu bytes (budget %zu)\n", total, kEveryToolsetBudget);
  CHECK(total <= kEveryToolsetBudget);
  // What tools/list sends is more (titles, output schemas, annotations), but
  // is not what the model reads each turn; the figure is kept for the docs.
  std::printf("tools/list with every toolset: %zu bytes\n", cu::tools_list_json(on).size());
}

TEST_CASE("computer_batch stays within its budget with every toolset on") {
  const cu::tool_def* batch = cu::find_tool("computer_batch");
  REQUIRE(batch != nullptr);
  const size_t n = model_bytes(*batch, cu::every_toolset());
  std::printf("computer_batch with every toolset: %zu bytes (budget %zu)\n", n, kBatchBudget);
  CHECK(n <= kBatchBudget);
}
