#include "desktop/activation.h"

#include "util/seconds_text.h"
#include "util/str_cat.h"
#include "x11/window_control.h"

namespace cu {

std::optional<window_activation::outcome> window_activation::start(
    desktop_context& d, const window_info& w, desktop_clock::time_point& wake_at) {
  window_ = w.id;
  waiting_ = false;
  if (wm_supports(d.conn, *d.atoms, d.root, d.atoms->_NET_ACTIVE_WINDOW)) {
    via_ = "ewmh";
    request_activation(d.conn, *d.atoms, d.root, w.id);
    if (!w.takes_focus) {
      // The manager raises it but, rightly, will not focus it.
      return outcome{false,
                     "the window was raised; it does not take the keyboard focus "
                     "(ICCCM input hint false)"};
    }
    if (active_window(d.conn, *d.atoms, d.root) == w.id) return outcome{true, {}};
    waiting_ = true;
    wake_at = desktop_clock::now() + kActivatePatience;
    return std::nullopt;
  }
  via_ = "x11";
  if (focus_directly(d.conn, w.id)) return outcome{true, {}};
  return outcome{false, "the window could not take the input focus (not viewable)"};
}

std::optional<window_activation::outcome> window_activation::on_event(
    desktop_context& d, const xcb_generic_event_t* ev) const {
  if (waiting_ && event_type(ev) == XCB_PROPERTY_NOTIFY &&
      reinterpret_cast<const xcb_property_notify_event_t*>(ev)->atom ==
          d.atoms->_NET_ACTIVE_WINDOW &&
      active_window(d.conn, *d.atoms, d.root) == window_) {
    return outcome{true, {}};
  }
  return std::nullopt;
}

window_activation::outcome window_activation::on_wake(desktop_context& d) const {
  if (active_window(d.conn, *d.atoms, d.root) == window_) return outcome{true, {}};
  return outcome{false, str_cat("the window manager did not activate the window within ",
                                seconds_text(kActivatePatience), " s")};
}

}  // namespace cu
