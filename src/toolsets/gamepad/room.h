// Owns: the `gamepad` room (seed 003's controller): its table (tools.json
// beside this file, embedded by the build) bound to its handlers, the
// handlers' declarations, and the start of its service, the pad thread
// (pad_actor.h) with the controller it drives (pad.h).
// Thread affinity: the loop thread; handlers hand work to the pad thread.
#pragma once

#include "toolsets/registry.h"

namespace cu {

class tool_call;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& gamepad_room();

void handle_gamepad_button(tool_call& call);
void handle_gamepad_trigger(tool_call& call);
void handle_gamepad_stick(tool_call& call);
void handle_gamepad_dpad(tool_call& call);
void handle_gamepad_reset(tool_call& call);
void handle_gamepad_state(tool_call& call);

}  // namespace cu
