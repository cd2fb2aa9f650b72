// Owns: the `marks` room (issue 32): its table (tools.json beside this file,
// embedded by the build) bound to its handlers, and the handlers'
// declarations.
// Thread affinity: the loop thread; handlers hand work to the a11y thread,
// the desktop thread and the capture pool.
#pragma once

#include "toolsets/registry.h"

namespace cu {

class tool_call;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& marks_room();

void handle_screenshot_marks(tool_call& call);

}  // namespace cu
