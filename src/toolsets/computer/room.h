// Owns: the `computer` room, the default toolset (the contract's 24 tools):
// its table (tools.json beside this file, embedded by the build) bound to
// its handlers, and the handlers' declarations.
// Thread affinity: the loop thread; handlers hand work to their executor.
#pragma once

#include "toolsets/registry.h"

namespace cu {

class tool_call;

// The table and its bindings, for the registry's list of toolsets.
const toolset_room& computer_room();

void handle_screenshot(tool_call& call);
void handle_zoom(tool_call& call);
void handle_left_click(tool_call& call);
void handle_right_click(tool_call& call);
void handle_middle_click(tool_call& call);
void handle_double_click(tool_call& call);
void handle_triple_click(tool_call& call);
void handle_mouse_move(tool_call& call);
void handle_left_click_drag(tool_call& call);
void handle_scroll(tool_call& call);
void handle_left_mouse_down(tool_call& call);
void handle_left_mouse_up(tool_call& call);
void handle_type(tool_call& call);
void handle_key(tool_call& call);
void handle_hold_key(tool_call& call);
void handle_read_clipboard(tool_call& call);
void handle_write_clipboard(tool_call& call);
void handle_request_access(tool_call& call);
void handle_list_granted_applications(tool_call& call);
void handle_open_application(tool_call& call);
void handle_switch_display(tool_call& call);
void handle_computer_batch(tool_call& call);
void handle_wait(tool_call& call);
void handle_cursor_position(tool_call& call);


}  // namespace cu
