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

namespace cu {

class tool_call;

// Where a tool's work runs once its handler has validated the arguments.
enum class executor { loop, input, capture, desktop };

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

// The default toolset `computer`: the 24 tools, in the contract's order.
std::span<const tool_def> computer_tools();

// The tool with this name, or null.
const tool_def* find_tool(std::string_view name);

// The answer to a call of a tool by a name find_tool does not know.
std::string unknown_tool_message(std::string_view name);

const char* executor_name(executor e);

}  // namespace cu

namespace cu {

// The result of tools/list for these tools: {"tools":[{name, title,
// description, inputSchema, annotations}, ...]}.
std::string tools_list_json(std::span<const tool_def> tools);

}  // namespace cu
