#include "toolsets/marks/room.h"

#include "toolsets/marks/looks.h"
#include "toolsets/tables.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"screenshot_marks", executor::capture, handle_screenshot_marks},
};

// The room's service is its record of looks: no thread of its own.
std::unique_ptr<room_service> start(room_start&) { return std::make_unique<looks>(); }

}  // namespace

const toolset_room& marks_room() {
  static const toolset_room kRoom{toolset::marks, tables::marks, kBindings, start};
  return kRoom;
}

}  // namespace cu
