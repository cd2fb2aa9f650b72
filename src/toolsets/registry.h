// Owns: the one tool registry: the list of toolsets and the lookup of their
// tools. Each toolset's room (src/toolsets/<name>/) holds its table: the
// tools' titles, descriptions, schemas and annotations as JSON data
// (tools.json, embedded by meson), and its handlers bound by name
// (room.cpp). tools/list, dispatch, plugin.json, the schema document, the
// man page's tool list and the tests' lists are all derived from here.
// Thread affinity: built once on first use (thread-safe), immutable after;
// handlers run on the loop thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cu {

class tool_call;
struct config;
class completion_queue;
class guard_devices;

// Where a tool's work runs once its handler has validated the arguments.
enum class executor { loop, input, capture, desktop, a11y, room };

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
  // An argument is in the screenshot's image space (a `coordinate` or an
  // `image_region` of the tables' fragments): the call maps it through the
  // coordinate session, so it waits for a screenshot sent before it
  // (protocol/call_table.h, the calls that wait).
  bool image_coordinates = false;
  // Its answer is an image that becomes the coordinate session (the
  // table's "session": screenshot, screenshot_marks, get_app_state): calls
  // of image coordinates sent after it wait for it.
  bool makes_session = false;
};

// A tool of a room's table, bound to its code: where its work runs and the
// handler that checks its arguments and hands the work there. The rest of
// the tool (title, description, schemas, annotations) is the room's JSON.
struct tool_binding {
  std::string_view name;
  executor runs_on;
  void (*handler)(tool_call&);
};

// A group of tools switched on together (CU_TOOLSETS, --toolsets).
// `computer` is the contract's 24 tools and is always on; the others add
// tools, and never rename or change the 24.
enum class toolset : uint8_t { computer, windows, vision, a11y, gamepad, marks };

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

// What a room runs while its toolset is on, beside its handlers (the
// gamepad's controller thread): started with the server, told of every
// request, of stdin's end and of the stop. A handler reaches it through
// tool_call::service. Thread affinity: these calls come from the loop thread.
class room_service {
 public:
  virtual ~room_service() = default;
  // A request arrived (the idle release counts from the latest one).
  virtual void note_activity() {}
  // stdin ended: what is held is released now, and holds answer early.
  virtual void end_holds() {}
  // Stops call seq's work (tool_call::room handed it here): it ends in an
  // empty completion, or its result is dropped when it comes.
  virtual void cancel(uint64_t seq) = 0;
  // The server stops: finish, release everything and join.
  virtual void stop() = 0;
};

// What a room's service is started with.
struct room_start {
  const config& cfg;
  completion_queue& done;
  // The input guard's channel for devices (possibly inactive).
  guard_devices& guard;
};

// A toolset's room (src/toolsets/<name>/room.cpp): its table as JSON text
// (its tools.json, embedded; see tables.h) and its bindings, one per tool.
struct toolset_room {
  toolset id;
  std::string_view table;
  std::span<const tool_binding> bindings;
  // Starts the room's service when its toolset is on; null: none.
  std::unique_ptr<room_service> (*start)(room_start& with) = nullptr;
};

// Starts the service of each room that has one among the toolsets on.
std::vector<std::pair<toolset, std::unique_ptr<room_service>>> start_services(toolset_mask on,
                                                                               room_start& with);

// Every toolset, in tools/list order (computer first).
std::span<const toolset_def> all_toolsets();

// Every toolset built (a11y only with libatspi).
toolset_mask every_toolset();

// Whether this server was built with toolset t.
bool toolset_built(toolset t);

// What toolset t needs at build time beyond the libraries every build
// needs ("libatspi2.0-dev" for a11y, which the build leaves out without
// it), or empty: for --help and the refusal of a toolset not built.
std::string_view build_requirement(toolset t);

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

// What a toolset adds to another toolset's tools (the windows toolset gives
// screenshot and zoom `window`; vision gives computer_batch its conditions):
// for the schema document.
struct toolset_extension {
  std::string_view doc;                 // One paragraph, for the schema document.
  std::vector<std::string_view> tools;  // The tools it extends.
  std::string input;   // {"properties":{...}} added to the input schema, or empty.
  std::string output;  // The same for the output schema, or empty.
  std::string where;   // The object extended, as a path of keys from the schema's
                       // root ("properties.actions.items"); empty: the root.
};
std::vector<toolset_extension> extensions_of(toolset t);

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
