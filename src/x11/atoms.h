// Owns: the atoms the desktop thread uses (selections, ICCCM and EWMH
// window properties), interned once per connection in one batch; the capture
// workers intern them too, to tell an application's window from others.
// Thread affinity: plain values; intern_atoms runs on the thread that owns
// the connection.
#pragma once

#include <xcb/xcb.h>

#include "util/result.h"

namespace cu {

struct x11_atoms {
  // Selections (ICCCM section 2).
  xcb_atom_t CLIPBOARD = 0, TARGETS = 0, MULTIPLE = 0, TIMESTAMP = 0, INCR = 0;
  xcb_atom_t UTF8_STRING = 0, TEXT = 0, text_plain_utf8 = 0, text_plain = 0;
  xcb_atom_t CU_SELECTION = 0;  // Where our reads ask owners to put the data.
  xcb_atom_t CU_TIMESTAMP = 0;  // Appended to (empty) to learn the server time.
  // Windows (ICCCM and EWMH).
  xcb_atom_t WM_PROTOCOLS = 0, WM_TAKE_FOCUS = 0;
  xcb_atom_t WM_STATE = 0, _NET_WM_NAME = 0, _NET_WM_PID = 0, _NET_CLIENT_LIST = 0;
  xcb_atom_t _NET_CLIENT_LIST_STACKING = 0, _NET_ACTIVE_WINDOW = 0, _NET_SUPPORTED = 0;
  xcb_atom_t _NET_SUPPORTING_WM_CHECK = 0;
  xcb_atom_t WM_CLIENT_LEADER = 0;  // ICCCM 5.1: a popup's way to its application.
  // The windows toolset (ICCCM 4.1.4, 4.2.8; EWMH).
  xcb_atom_t WM_DELETE_WINDOW = 0, WM_CHANGE_STATE = 0;
  xcb_atom_t _NET_WM_STATE = 0, _NET_WM_STATE_HIDDEN = 0, _NET_WM_STATE_MAXIMIZED_VERT = 0;
  xcb_atom_t _NET_WM_STATE_MAXIMIZED_HORZ = 0, _NET_WM_STATE_FULLSCREEN = 0;
  xcb_atom_t _NET_WM_STATE_ABOVE = 0, _NET_FRAME_EXTENTS = 0, _NET_WM_DESKTOP = 0;
  xcb_atom_t _NET_WM_WINDOW_TYPE = 0, _NET_MOVERESIZE_WINDOW = 0, _NET_CLOSE_WINDOW = 0;
  // _NET_WM_WINDOW_TYPE_<NAME>, in the order of kWindowTypeNames.
  xcb_atom_t window_types[12] = {};
};

// The EWMH window types, lower-case, as list_windows names them.
inline constexpr const char* kWindowTypeNames[12] = {
    "normal", "dialog", "utility", "toolbar", "splash", "menu",
    "dock", "desktop", "dropdown_menu", "popup_menu", "tooltip", "notification"};

// Interns every atom above (one round trip for all of them).
result<x11_atoms> intern_atoms(xcb_connection_t* c);

}  // namespace cu
