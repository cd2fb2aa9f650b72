// Owns: making one window the active one, the way open_application and
// focus_window both do it: through the window manager's
// _NET_ACTIVE_WINDOW request when one supports it (then waiting, without
// blocking the desktop thread, until the manager says it is done), straight
// to X with SetInputFocus when none does.
// Thread affinity: the desktop thread, inside an operation.
#pragma once

#include <xcb/xcb.h>

#include <chrono>
#include <optional>
#include <string>

#include "desktop/desktop_op.h"
#include "x11/windows.h"

namespace cu {

// How long a window manager has to make a window active.
inline constexpr auto kActivatePatience = std::chrono::seconds(2);

class window_activation {
 public:
  struct outcome {
    bool focused = false;
    std::string note;  // Why not, when not.
  };

  // Asks for w to be made active. An outcome when it is known at once;
  // nothing when the manager has to be waited for, with wake_at set to
  // when to give up (the operation's own wake_at).
  std::optional<outcome> start(desktop_context& d, const window_info& w,
                               desktop_clock::time_point& wake_at);

  // While waiting(): an X event; the outcome once the manager made the
  // window active.
  std::optional<outcome> on_event(desktop_context& d, const xcb_generic_event_t* ev) const;

  // While waiting(), at wake_at: the outcome, whatever it is by now.
  outcome on_wake(desktop_context& d) const;

  bool waiting() const { return waiting_; }
  xcb_window_t window() const { return window_; }
  // "ewmh" or "x11" once started.
  const std::string& via() const { return via_; }

 private:
  xcb_window_t window_ = XCB_NONE;
  std::string via_;
  bool waiting_ = false;
};

}  // namespace cu
