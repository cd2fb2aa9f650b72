// Owns: the `marks` room (issue 32): its table (tools.json beside this file,
// embedded by the build) bound to its handlers, and the handlers'
// declarations.
// Thread affinity: the loop thread; handlers hand work to the a11y thread,
// the desktop thread and the capture pool.
#pragma once

#include <optional>

#include "capture/pool.h"
#include "toolsets/registry.h"
#include "util/result.h"

namespace cu {

class tool_call;
class looks;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& marks_room();

void handle_screenshot_marks(tool_call& call);

// The look the call's `since` names among those kept (nothing: no since),
// or an invalid-argument error naming the kept looks.
result<std::optional<since_look>> read_since(tool_call& call, const looks& kept);

}  // namespace cu
