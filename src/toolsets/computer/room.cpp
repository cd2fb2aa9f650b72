#include "toolsets/computer/room.h"

#include "toolsets/tables.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"screenshot", executor::capture, handle_screenshot},
    {"zoom", executor::capture, handle_zoom},
    {"left_click", executor::input, handle_left_click},
    {"right_click", executor::input, handle_right_click},
    {"middle_click", executor::input, handle_middle_click},
    {"double_click", executor::input, handle_double_click},
    {"triple_click", executor::input, handle_triple_click},
    {"mouse_move", executor::input, handle_mouse_move},
    {"left_click_drag", executor::input, handle_left_click_drag},
    {"scroll", executor::input, handle_scroll},
    {"left_mouse_down", executor::input, handle_left_mouse_down},
    {"left_mouse_up", executor::input, handle_left_mouse_up},
    {"type", executor::input, handle_type},
    {"key", executor::input, handle_key},
    {"hold_key", executor::input, handle_hold_key},
    {"read_clipboard", executor::desktop, handle_read_clipboard},
    {"write_clipboard", executor::desktop, handle_write_clipboard},
    {"request_access", executor::loop, handle_request_access},
    {"list_granted_applications", executor::loop, handle_list_granted_applications},
    {"open_application", executor::desktop, handle_open_application},
    {"switch_display", executor::desktop, handle_switch_display},
    {"computer_batch", executor::loop, handle_computer_batch},
    {"wait", executor::loop, handle_wait},
    {"cursor_position", executor::input, handle_cursor_position},
};

}  // namespace

const toolset_room& computer_room() {
  static const toolset_room kRoom{toolset::computer, tables::computer, kBindings};
  return kRoom;
}

}  // namespace cu
