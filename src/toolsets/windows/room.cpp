#include "toolsets/windows/room.h"

#include "toolsets/tables.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"list_windows", executor::desktop, handle_list_windows},
    {"window_at", executor::desktop, handle_window_at},
    {"focus_window", executor::desktop, handle_focus_window},
    {"set_window_geometry", executor::desktop, handle_set_window_geometry},
    {"set_window_state", executor::desktop, handle_set_window_state},
    {"close_window", executor::desktop, handle_close_window},
    {"list_displays", executor::desktop, handle_list_displays},
};

}  // namespace

const toolset_room& windows_room() {
  static const toolset_room kRoom{toolset::windows, tables::windows, kBindings};
  return kRoom;
}

}  // namespace cu
