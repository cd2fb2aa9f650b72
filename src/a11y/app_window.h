// Owns: the a11y thread's own X connection, and what the a11y toolset asks
// of X: which top-level window shows an application (AT-SPI knows a
// window's title and frame, X its id) and giving that window the keyboard
// focus before keys are sent to the application.
// Thread affinity: the a11y thread (the connection is opened there, on the
// first use, and belongs to it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/geometry.h"
#include "util/result.h"
#include "x11/atoms.h"
#include "x11/connection.h"
#include "x11/window_control.h"

namespace cu {

struct app_window {
  uint32_t id = 0;
  std::string title;
  rect device;  // Its content area, in root window pixels.
};

// A top-level window as AT-SPI sees it: its title and frame on the screen.
struct a11y_window_hint {
  std::string title;
  std::optional<rect> frame;
  bool active = false;  // AT-SPI's "active" state: the focused window.
};

class app_windows {
 public:
  explicit app_windows(std::string display) : display_(std::move(display)) {}

  // The X window of the process pid that shows one of hints: the active
  // one first, then the one whose title and frame agree with X, then any
  // viewable window of pid. Nothing when X has none (an application of
  // another display, or not yet mapped).
  result<std::optional<app_window>> find(int pid, const std::vector<a11y_window_hint>& hints);

  // Whether the root window has AT_SPI_BUS, the accessibility bus's address
  // that at-spi-bus-launcher publishes on its display (libatspi reads it
  // before it asks the session bus).
  bool root_names_a11y_bus();

  // The client windows shown (viewable and not minimized), bottom to top,
  // with their areas: which one the screen shows at a point.
  result<std::vector<window_details>> shown_clients();

  // Gives w the keyboard focus: through the window manager when one runs
  // (_NET_ACTIVE_WINDOW), else directly. Waits up to wait_ms for X to say
  // the focus is there; false when it is not, or as soon as stop() says so
  // (the job was cancelled or the server is stopping: the wait is no bus
  // call, which the end's watchdog could cut).
  result<bool> focus(uint32_t w, const std::function<bool()>& stop, int wait_ms = 1000);

 private:
  status connect();

  std::string display_;
  xcb_ptr conn_;
  xcb_window_t root_ = 0;
  std::optional<x11_atoms> atoms_;
};

}  // namespace cu
