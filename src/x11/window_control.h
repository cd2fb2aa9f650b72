// Owns: what the windows toolset reads of a client window beyond what
// open_application needs (its geometry, frame extents, EWMH state, desktop,
// type, transient-for), and the requests that change a window through the
// window manager (EWMH client messages to the root, ICCCM WM_CHANGE_STATE
// and WM_DELETE_WINDOW) or, without one, directly.
// Thread affinity: the desktop thread (which owns the connection).
#pragma once

#include <xcb/xcb.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.h"
#include "util/result.h"
#include "x11/atoms.h"
#include "x11/windows.h"

namespace cu {

struct frame_extents {
  int left = 0, right = 0, top = 0, bottom = 0;
};

struct window_state {
  // _NET_WM_STATE_HIDDEN, or ICCCM IconicState; with no WM_STATE at all (no
  // window manager has managed it), unmapped.
  bool minimized = false;
  bool maximized = false;   // Both _NET_WM_STATE_MAXIMIZED_VERT and _HORZ.
  bool fullscreen = false;
  bool above = false;
  bool operator==(const window_state&) const = default;
};

struct window_details {
  window_info info;
  rect device;          // The window's own area (its content), in root coordinates.
  int border = 0;       // Its X border width (outside device).
  frame_extents frame;  // The decorations around it (_NET_FRAME_EXTENTS; 0 without).
  window_state state;
  std::optional<uint32_t> desktop;  // _NET_WM_DESKTOP; 0xFFFFFFFF: all desktops.
  std::string type;                 // "normal", "dialog", ... (_NET_WM_WINDOW_TYPE).
  xcb_window_t transient_for = XCB_NONE;
};

// The details of these windows, asked for all at once (two round trips in
// all); windows that are gone meanwhile are left out.
std::vector<window_details> describe_windows(xcb_connection_t* c, const x11_atoms& a,
                                             xcb_window_t root,
                                             const std::vector<window_info>& windows);

// The client window with this id (one list_client_windows would list),
// described; an error saying why when it is none (gone, the root, one of
// ours, not an application's window: client_window_refusal). A few round
// trips, however many windows there are.
result<window_details> find_client_window(xcb_connection_t* c, const x11_atoms& a,
                                          xcb_window_t root, xcb_window_t id);

// The running EWMH window manager's _NET_WM_NAME ("Openbox"); nothing
// without one (or with a stale _NET_SUPPORTING_WM_CHECK).
std::optional<std::string> window_manager_name(xcb_connection_t* c, const x11_atoms& a,
                                               xcb_window_t root);

// Whether an EWMH window manager runs whose _NET_SUPPORTED lists hint.
bool wm_supports(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root, xcb_atom_t hint);

// Whether w's WM_PROTOCOLS lists protocol (WM_DELETE_WINDOW).
bool supports_protocol(xcb_connection_t* c, const x11_atoms& a, xcb_window_t w,
                       xcb_atom_t protocol);

// A client message about w of this type, sent to the root as a pager sends
// one (SubstructureRedirect | SubstructureNotify), for the window manager.
void send_to_window_manager(xcb_connection_t* c, xcb_window_t root, xcb_window_t w,
                            xcb_atom_t type, const std::array<uint32_t, 5>& data);

// The window's own area in root coordinates; nothing once it is gone.
std::optional<rect> window_area(xcb_connection_t* c, xcb_window_t root, xcb_window_t w);

// The ancestors of the focus window up to (not including) the root, the
// focus window first; empty when the focus is None or PointerRoot.
std::vector<xcb_window_t> focus_chain(xcb_connection_t* c, xcb_window_t root);

}  // namespace cu
