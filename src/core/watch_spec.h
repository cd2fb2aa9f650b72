// Owns: what a wait on the screen waits for (wait_for_change,
// wait_until_stable, screenshot_find's until): handlers fill it in, the
// loop's screen watches (protocol/screen_watch.h) carry it out.
// Thread affinity: a value type.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/geometry.h"
#include "core/grant_policy.h"

namespace cu {

struct watch_spec {
  enum class kind {
    change,  // wait_for_change: the first change (then quiet_ms of quiet).
    stable,  // wait_until_stable: quiet_ms without any change.
    touch,   // screenshot_find until: every change, told as it comes.
  };
  kind what = kind::change;
  // Image pixels [x0, y0, x1, y1] of the basis (below); nothing: all of it.
  std::optional<std::array<int, 4>> region;
  uint32_t window = 0;  // Nonzero: the window's inside is the basis.
  // The session region refers to, when the last screenshot was of this
  // target; otherwise the basis is the session a screenshot of it would
  // make now.
  std::optional<coord_session> session;
  std::optional<rect> display_area;  // switch_display's area (screen targets).
  double timeout_secs = 10;
  double quiet_ms = 0;
  // The grants of the call (change and stable): with a view that filters,
  // only what it shows counts as a change, and a window it does not allow
  // is not watched; the answer says nothing of what it hides.
  std::shared_ptr<const grant_view> view;
};

}  // namespace cu
