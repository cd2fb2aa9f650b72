// Owns: the `vision` room (finding images and text on the screen, waiting
// on it): its table (tools.json beside this file, embedded by the build)
// bound to its handlers, and the handlers' declarations.
// Thread affinity: the loop thread; handlers hand work to their executor.
#pragma once

#include "toolsets/registry.h"

namespace cu {

class tool_call;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& vision_room();

void handle_screenshot_find(tool_call& call);
void handle_find_text(tool_call& call);
void handle_wait_for_change(tool_call& call);
void handle_wait_until_stable(tool_call& call);

}  // namespace cu
