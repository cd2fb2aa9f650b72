// Owns: which arguments each tool takes, read once per set of toolsets from
// the input schemas tools/list gives (registry.h input_schema_of), and the
// refusal of an argument a tool does not take. Every tools/call and every
// computer_batch step and condition probe is checked here before its
// handler runs, so a misspelt or foreign argument (`"txt": "ctrl"` on a
// click) never reaches a handler that would ignore it.
// Thread affinity: any; the tables are built under a lock on first use and
// never change after.
#pragma once

#include <simdjson.h>

#include <optional>
#include <span>
#include <string>

#include "toolsets/registry.h"
#include "util/result.h"

namespace cu {

// The top-level properties of input_schema_of(t, on), in the schema's
// order (empty for a tool that takes no arguments). The span stays valid
// for the life of the program.
std::span<const std::string> argument_names(const tool_def& t, toolset_mask on);

// What a computer_batch action object may hold with these toolsets on
// (name, arguments; capture and if with the vision toolset), from the
// items of computer_batch's `actions` in its schema.
std::span<const std::string> batch_action_keys(toolset_mask on);

// The first argument in args that t does not take with these toolsets on,
// refused: `Invalid argument "x": TOOL takes a, b` (args.h
// unknown_argument), then, when a toolset that is off would add it,
// `; "x" needs the windows toolset (CU_TOOLSETS=windows or --toolsets
// windows)`.
// Done when t takes every argument given. A name whose value is null
// is not refused: null means absent, for every argument, so nothing given
// is ignored.
status refuse_unknown_arguments(const tool_def& t, toolset_mask on,
                                simdjson::dom::object args);

}  // namespace cu
