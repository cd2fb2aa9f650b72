// Owns: the `a11y` room (applications through their accessibility tree,
// AT-SPI): its table (tools.json beside this file, embedded by the build)
// bound to its handlers, and the handlers' declarations.
// Thread affinity: the loop thread; handlers hand work to their executor.
#pragma once

#include "toolsets/registry.h"

namespace cu {

class tool_call;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& a11y_room();

void handle_list_apps(tool_call& call);
void handle_get_app_state(tool_call& call);
void handle_a11y_click(tool_call& call);
void handle_perform_secondary_action(tool_call& call);
void handle_scroll_app(tool_call& call);
void handle_a11y_drag(tool_call& call);
void handle_type_text(tool_call& call);
void handle_press_key(tool_call& call);
void handle_set_value(tool_call& call);

}  // namespace cu
