#include "toolsets/marks/room.h"

#include "toolsets/tables.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"screenshot_marks", executor::capture, handle_screenshot_marks},
};

}  // namespace

const toolset_room& marks_room() {
  static const toolset_room kRoom{toolset::marks, tables::marks, kBindings};
  return kRoom;
}

}  // namespace cu
