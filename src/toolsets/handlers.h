// Owns: the declarations of every tool handler, one group per file.
// Each handler has the same shape: validate arguments, fetch context, act
// (or hand the work to an executor), finish with a result.
// Thread affinity: the loop thread.
#pragma once

#include <cstddef>
#include <vector>

#include "input/keys.h"
#include "util/result.h"

namespace cu {

class tool_call;

// capture_tools.cpp
void handle_screenshot(tool_call& call);
void handle_zoom(tool_call& call);

// input_tools.cpp
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
void handle_cursor_position(tool_call& call);

// session_tools.cpp
void handle_request_access(tool_call& call);
void handle_list_granted_applications(tool_call& call);
void handle_read_clipboard(tool_call& call);
void handle_write_clipboard(tool_call& call);
void handle_open_application(tool_call& call);
void handle_switch_display(tool_call& call);

// window_tools.cpp: the windows toolset.
void handle_list_windows(tool_call& call);
void handle_focus_window(tool_call& call);
void handle_set_window_geometry(tool_call& call);
void handle_set_window_state(tool_call& call);
void handle_close_window(tool_call& call);
void handle_list_displays(tool_call& call);

// vision_tools.cpp
void handle_screenshot_find(tool_call& call);
void handle_wait_for_change(tool_call& call);
void handle_wait_until_stable(tool_call& call);

// text_tools.cpp: find_text (the vision toolset).
void handle_find_text(tool_call& call);

// The keys that type the argument "text" (type, type_text), which stand
// for *characters characters; refused beyond kMaxTypeCharacters.
result<std::vector<typed_char>> text_keystrokes(tool_call& call, size_t* characters);

// a11y_tools.cpp: the a11y toolset (over AT-SPI).
void handle_list_apps(tool_call& call);
void handle_get_app_state(tool_call& call);
void handle_a11y_click(tool_call& call);
void handle_perform_secondary_action(tool_call& call);
void handle_scroll_app(tool_call& call);
void handle_a11y_drag(tool_call& call);
void handle_type_text(tool_call& call);
void handle_press_key(tool_call& call);
void handle_set_value(tool_call& call);

// flow_tools.cpp: the tools that order other work.
void handle_wait(tool_call& call);
void handle_computer_batch(tool_call& call);

}  // namespace cu
