// Owns: the small helpers the X11 tests share for calling tools and reading
// their answers (a call that must succeed or fail, an integer field, a
// window id as the server writes it), for waiting on another program, and
// for starting openbox as the window manager.
// Thread affinity: the test thread.
#pragma once

#include <xcb/xcb.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "support/harness.h"
#include "support/session_probe.h"

namespace cu::test {

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A window id as list_windows writes it: "0x1a00022".
std::string hex(xcb_window_t w);

// Calls a tool that must succeed; its response.
json_ptr ok_call(server_process& s, std::string_view tool, std::string_view args = "{}");

// Calls a tool that must answer isError; its text.
std::string error_text(server_process& s, std::string_view tool, std::string_view args = "{}");

// A rectangle in root (or image) pixels.
struct area {
  int x = 0, y = 0, w = 0, h = 0;
  bool operator==(const area&) const = default;
};
std::ostream& operator<<(std::ostream& os, const area& a);

// A rectangle as the tools write it: {"x","y","width","height"}.
area json_area(simdjson::dom::element e);

// What X says of a window's own area, in root coordinates.
area x_area(x_observer& obs, xcb_window_t w);

// An image region as the tools take it: "[x0,y0,x1,y1]".
std::string region(int x0, int y0, int x1, int y1);

// The integer field k of the object e (the test fails without).
int64_t num(simdjson::dom::element e, const char* k);

// Polls until pred holds, for another program (a window manager, a client)
// whose progress no event of ours tells; fails after timeout_ms.
template <class F>
void wait_until(F pred, const char* what, int timeout_ms = 20000) {
  const int64_t deadline = now_ms() + timeout_ms;
  while (!pred()) {
    INFO("waiting for " << what);
    REQUIRE(now_ms() < deadline);
    usleep(10000);
  }
}

// Starts openbox on display d and waits until it has announced itself
// (_NET_SUPPORTING_WM_CHECK on the root).
void start_openbox(x_observer& obs, std::optional<background_program>& wm, const std::string& d);

}  // namespace cu::test
