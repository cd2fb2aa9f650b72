// Owns: the declarations of every tool handler, one group per file.
// Each handler has the same shape: validate arguments, fetch context, act
// (or hand the work to an executor), finish with a result.
// Thread affinity: the loop thread.
#pragma once

namespace cu {

class tool_call;

// capture_tools.cpp
void handle_screenshot(tool_call& call);
void handle_zoom(tool_call& call);

// pending.cpp: tools declared in the registry whose bodies are not in this
// build yet; they answer an isError result that says so.
void handle_not_available(tool_call& call);

}  // namespace cu
