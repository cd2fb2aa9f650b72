// Owns: the monitors of the screen as RandR 1.5 describes them (including
// ones made with `xrandr --setmonitor`), and choosing one by name or index
// for switch_display.
// Thread affinity: list_monitors on the thread owning the connection (the
// desktop thread); choose_monitor is pure.
#pragma once

#include <xcb/xcb.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/geometry.h"
#include "util/result.h"

namespace cu {

struct monitor {
  std::string name;
  rect geometry;
  bool primary = false;
};

// The active monitors in RandR's order; empty when RandR 1.5 is missing.
std::vector<monitor> list_monitors(xcb_connection_t* c, xcb_window_t root);

// requested: "auto" (nothing: the whole screen), a monitor name
// (case-insensitive) or its index in the list. Error: unknown, with the
// choices listed.
result<std::optional<monitor>> choose_monitor(const std::vector<monitor>& monitors,
                                              std::string_view requested);

// "1920x1080+1920+0".
std::string geometry_text(const rect& r);

}  // namespace cu
