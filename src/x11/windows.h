// Owns: finding an application's top-level window and bringing it to the
// front: listing client windows (EWMH _NET_CLIENT_LIST, else the ICCCM way:
// root children with WM_CLASS, or their WM_STATE children under a
// reparenting window manager), matching a name against WM_CLASS and titles,
// and activating a window through the window manager (_NET_ACTIVE_WINDOW)
// or, without one, by raising it and giving it the input focus.
// Thread affinity: the desktop thread (which owns the connection); the
// matching is a pure function.
#pragma once

#include <xcb/xcb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "x11/atoms.h"

namespace cu {

struct window_info {
  xcb_window_t id = 0;
  std::string instance;  // WM_CLASS, first part ("xterm").
  std::string cls;       // WM_CLASS, second part ("XTerm").
  std::string title;     // _NET_WM_NAME, else WM_NAME.
  uint32_t pid = 0;      // _NET_WM_PID, 0 when unknown.
  bool viewable = false;
  // ICCCM 4.1.7: whether the window takes the keyboard focus (its WM_HINTS
  // input field, or WM_TAKE_FOCUS in WM_PROTOCOLS). xclock, for one, does
  // not, and a window manager will then raise it but not focus it.
  bool takes_focus = true;
};

// Top-level client windows, bottom to top where the order is known. A
// client list any client may write is not taken on trust: the root, this
// server's own windows (x11_ours), override-redirect and InputOnly windows,
// a window inside another that no manager manages (no WM_STATE), an unmapped
// window with neither WM_CLASS nor WM_STATE, and repeats are left out.
std::vector<window_info> list_client_windows(xcb_connection_t* c, const x11_atoms& a,
                                             xcb_window_t root);

// What list_client_windows reads of these windows (WM_CLASS, title, pid,
// focus hints, whether viewable), asked all at once; gone ones left out.
std::vector<window_info> describe_clients(xcb_connection_t* c, const x11_atoms& a,
                                          const std::vector<xcb_window_t>& ids);

// Why w is not one of the windows list_client_windows lists (the root, one
// of ours, an override-redirect window, gone, not in the client list, ...),
// as a message naming w that says where ids come from; nothing when it is.
// A few round trips, however many windows there are.
std::optional<std::string> client_window_refusal(xcb_connection_t* c, const x11_atoms& a,
                                                 xcb_window_t root, xcb_window_t w);

// The window app names, case-insensitively: WM_CLASS (instance or class)
// equal, then the title equal, then WM_CLASS containing it, then the title
// containing it. Within a rank a viewable window wins, then the topmost.
std::optional<window_info> match_window(const std::vector<window_info>& windows,
                                        std::string_view app);


// Asks the window manager to activate w (a _NET_ACTIVE_WINDOW client
// message to the root, as a pager would send).
void request_activation(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root,
                        xcb_window_t w);

// Without a window manager: maps w if needed, raises it and sets the input
// focus to it. True when the focus is on w afterwards.
bool focus_directly(xcb_connection_t* c, xcb_window_t w);

// The window _NET_ACTIVE_WINDOW names on the root, or 0.
xcb_window_t active_window(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root);

// The window holding the input focus, or 0.
xcb_window_t focused_window(xcb_connection_t* c);

// "0x1a00022".
std::string window_id_text(xcb_window_t w);

}  // namespace cu
