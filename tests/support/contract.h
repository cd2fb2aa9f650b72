// Owns: facts of the tool-surface contract that several suites check against,
// written down once (from ../shared/spec/tool-surface.md, not from the code).
#pragma once

#include <array>
#include <string_view>

namespace cu::test {

// The default toolset's 24 tools, in the contract's order.
inline constexpr std::array<std::string_view, 24> kContractTools = {
    "screenshot",      "zoom",           "left_click",      "right_click",
    "middle_click",    "double_click",   "triple_click",    "mouse_move",
    "left_click_drag", "scroll",         "left_mouse_down", "left_mouse_up",
    "type",            "key",            "hold_key",        "read_clipboard",
    "write_clipboard", "request_access", "list_granted_applications",
    "open_application", "switch_display", "computer_batch", "wait",
    "cursor_position",
};

}  // namespace cu::test
