#include "toolsets/vision/room.h"

#include "toolsets/tables.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"screenshot_find", executor::capture, handle_screenshot_find},
    {"find_text", executor::capture, handle_find_text},
    {"wait_for_change", executor::loop, handle_wait_for_change},
    {"wait_until_stable", executor::loop, handle_wait_until_stable},
};

}  // namespace

const toolset_room& vision_room() {
  static const toolset_room kRoom{toolset::vision, tables::vision, kBindings};
  return kRoom;
}

}  // namespace cu
