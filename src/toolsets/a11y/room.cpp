#include "toolsets/a11y/room.h"

#include "toolsets/tables.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"list_apps", executor::a11y, handle_list_apps},
    {"get_app_state", executor::a11y, handle_get_app_state},
    {"click", executor::a11y, handle_a11y_click},
    {"perform_secondary_action", executor::a11y, handle_perform_secondary_action},
    {"scroll_app", executor::a11y, handle_scroll_app},
    {"drag", executor::input, handle_a11y_drag},
    {"type_text", executor::a11y, handle_type_text},
    {"press_key", executor::a11y, handle_press_key},
    {"set_value", executor::a11y, handle_set_value},
};

}  // namespace

const toolset_room& a11y_room() {
  static const toolset_room kRoom{toolset::a11y, tables::a11y, kBindings};
  return kRoom;
}

}  // namespace cu
