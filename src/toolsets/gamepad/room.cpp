#include "toolsets/gamepad/room.h"

#include "toolsets/gamepad/pad_actor.h"
#include "toolsets/tables.h"
#include "util/config.h"

namespace cu {
namespace {

// Each tool of tools.json, in its order, with where its work runs and its
// handler. A tool is one entry there and one line here.
constexpr tool_binding kBindings[] = {
    {"gamepad_button", executor::room, handle_gamepad_button},
    {"gamepad_trigger", executor::room, handle_gamepad_trigger},
    {"gamepad_stick", executor::room, handle_gamepad_stick},
    {"gamepad_dpad", executor::room, handle_gamepad_dpad},
    {"gamepad_reset", executor::room, handle_gamepad_reset},
    {"gamepad_state", executor::room, handle_gamepad_state},
};

std::unique_ptr<room_service> start(room_start& with) {
  return std::make_unique<pad_actor>(with.cfg.uinput_path, with.cfg.idle_release_secs,
                                     std::move(with.guard), with.done);
}

}  // namespace

const toolset_room& gamepad_room() {
  static const toolset_room kRoom{toolset::gamepad, tables::gamepad, kBindings, start};
  return kRoom;
}

}  // namespace cu
