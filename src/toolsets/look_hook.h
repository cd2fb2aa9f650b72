// Owns: how a tool of another room makes its capture a look of the marks
// toolset. The marks room's service keeps the looks (toolsets/marks/
// looks.h), and rooms never include each other, so the computer room's
// screenshot reaches it through these declarations, which the marks room
// defines (toolsets/marks/since_tools.cpp), as the call table implements
// batch_host for the computer room.
// Thread affinity: the loop thread (handlers).
#pragma once

#include "capture/pool.h"
#include "toolsets/tool_call.h"

namespace cu {

// With the marks toolset on, makes job (a screenshot) a look: reads the
// call's `since` (absent: none), reserves the look's id, and chains the
// step that keeps what the capture saw once it succeeded. Call it just
// before handing job to the capture pool. False when it finished the call
// itself (a `since` naming no kept look: the error says which are kept);
// true, and nothing changed, when the toolset is off.
bool make_look(tool_call& call, capture_job& job);

}  // namespace cu
