// Owns: the one tool registry. Every tool's name, title, description, input
// schema, annotations, executor and handler live here and nowhere else:
// tools/list, dispatch, plugin.json and docs/computer-use-mcp-tools-schema.md
// are all derived from it.
// Thread affinity: immutable static data; handlers run on the loop thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cu {

class tool_call;

// Where a tool's work runs once its handler has validated the arguments.
enum class executor { loop, input, capture, desktop, a11y };

// MCP tool annotations (hints for the host; truthful, not a security boundary).
struct tool_annotations {
  bool read_only = false;
  bool destructive = false;
  bool idempotent = false;
  bool open_world = false;
};

struct tool_def {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::string_view input_schema;  // A JSON Schema object, as JSON text.
  executor runs_on;
  tool_annotations annotations;
  uint32_t timeout_ms;  // Host timeout override in plugin.json; 0 for the default.
  void (*handler)(tool_call&);
  // A JSON Schema of the result's structuredContent, as JSON text; empty
  // when the tool returns none.
  std::string_view output_schema = {};
};

// A group of tools switched on together (CU_TOOLSETS, --toolsets).
// `computer` is the contract's 24 tools and is always on; the others add
// tools, and never rename or change the 24.
enum class toolset : uint8_t { computer, windows, vision, a11y };

// A set of toolsets, one bit per toolset.
using toolset_mask = uint32_t;
constexpr toolset_mask mask_of(toolset t) { return toolset_mask{1} << unsigned(t); }
constexpr toolset_mask kDefaultToolsets = mask_of(toolset::computer);
constexpr bool has(toolset_mask m, toolset t) { return (m & mask_of(t)) != 0; }

struct toolset_def {
  toolset id;
  std::string_view name;
  std::string_view summary;  // One line, for the schema document and --help.
  std::span<const tool_def> tools;
};

// Every toolset, in tools/list order (computer first).
std::span<const toolset_def> all_toolsets();

// Every toolset built (a11y only with libatspi).
toolset_mask every_toolset();

// Whether this server was built with toolset t.
bool toolset_built(toolset t);

// CU_TOOLSETS or --toolsets: toolset names separated by commas (spaces
// around them ignored), or "all". computer is always in the result. An
// unknown or empty name is an invalid_argument error naming the toolsets
// there are.
result<toolset_mask> parse_toolsets(std::string_view text);

// "computer,windows".
std::string toolsets_text(toolset_mask on);

// The default toolset `computer`: the 24 tools, in the contract's order.
std::span<const tool_def> computer_tools();

// The tool with this name among the toolsets that are on, or null (also
// for a tool of a toolset that is off: it answers as an unknown tool).
const tool_def* find_tool(std::string_view name, toolset_mask on = kDefaultToolsets);

// A tool's input schema as tools/list gives it with these toolsets on:
// computer_batch's step names list every tool that is on.
// With the windows toolset on, screenshot and zoom also take `window`.
// With the vision toolset on, computer_batch also takes `stop_on_error`,
// and each of its actions `capture` and `if` (its conditions' values are
// the input schemas of the tools that check them).
std::string input_schema_of(const tool_def& t, toolset_mask on);

// A tool's output schema as tools/list gives it with these toolsets on:
// screenshot's and zoom's say `window` and `source` with the windows
// toolset; computer_batch's counts `skipped_by_condition` and describes a
// step's `skipped` and `condition` with the vision toolset.
std::string output_schema_of(const tool_def& t, toolset_mask on);

// What the windows toolset adds to screenshot and zoom (for the schema
// document): the input property, and the output properties.
std::string_view capture_window_input_property();
std::string_view capture_window_output_properties();

// The answer to a call of a tool by a name find_tool does not know.
std::string unknown_tool_message(std::string_view name);

const char* executor_name(executor e);

}  // namespace cu

namespace cu {

// The result of tools/list with these toolsets on: {"tools":[{name, title,
// description, inputSchema, outputSchema, annotations}, ...]}, toolset by
// toolset.
std::string tools_list_json(toolset_mask on);

}  // namespace cu
