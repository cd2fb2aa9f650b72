// Owns: the `windows` room (windows and monitors): its table (tools.json
// beside this file, embedded by the build) bound to its handlers, and the
// handlers' declarations.
// Thread affinity: the loop thread; handlers hand work to their executor.
#pragma once

#include "toolsets/registry.h"

namespace cu {

class tool_call;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& windows_room();

void handle_list_windows(tool_call& call);
void handle_window_at(tool_call& call);
void handle_focus_window(tool_call& call);
void handle_set_window_geometry(tool_call& call);
void handle_set_window_state(tool_call& call);
void handle_close_window(tool_call& call);
void handle_list_displays(tool_call& call);

}  // namespace cu
