// Owns: reading the accessibility bus through libatspi: connecting to it,
// the applications registered there, and an application's tree walked
// depth-first into a11y_elements. Every D-Bus round trip here is bounded:
// by the job's deadline and a per-call timeout (atspi_set_timeout), and it
// stops between calls once the job is cancelled.
// Thread affinity: the a11y thread only (libatspi is not thread-safe and
// keeps its state in globals), or a program's only thread (tools/bench-a11y).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "a11y/element.h"
#include "util/result.h"

typedef struct _GMainContext GMainContext;

namespace cu {

using a11y_clock = std::chrono::steady_clock;
class app_windows;
struct a11y_memory;

// What bounds one job's bus calls.
struct a11y_control {
  a11y_clock::time_point deadline = a11y_clock::time_point::max();
  // The longest one call may wait for its answer; a hung application
  // costs at most this much per job, since the first timeout ends it.
  int call_timeout_ms = 1000;
  // True once the job is cancelled; checked between calls.
  std::function<bool()> cancelled = [] { return false; };
  // The a11y thread's X connection and snapshots (null in tools that only
  // walk, such as tools/bench-a11y).
  app_windows* windows = nullptr;
  a11y_memory* memory = nullptr;
};

// Connects to the accessibility bus once per process (libatspi's
// atspi_init), its messages dispatched on context (nullptr: GLib's global
// default context, for a program that has no other). It refuses,
// with a message that says how to start one, when no bus can be found
// without side effects: with neither AT_SPI_BUS_ADDRESS, nor the X root's
// AT_SPI_BUS property (x_bus_property), nor a session bus
// (DBUS_SESSION_BUS_ADDRESS, or $XDG_RUNTIME_DIR/bus) libdbus would
// "autolaunch" a dbus-launch process, and atspi_init, once it has failed,
// can never be tried again.
result<bool> a11y_connect(GMainContext* context, bool x_bus_property = false);

// The applications on the bus, in the registry's order.
result<std::vector<a11y_app>> read_apps(const a11y_control& c);

// The tree of the application `app` names: its name (case-insensitive),
// else its pid in decimal, else the one application whose name contains
// it. Not found: errc::not_found naming the applications there are.
result<walk_outcome> walk_app(const std::string& app, const walk_limits& limits,
                              const a11y_control& c);

}  // namespace cu
