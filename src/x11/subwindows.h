// Owns: the controls an X program shows as X windows of their own (Xaw's
// and Motif's buttons, each a subwindow of its top-level window): reading
// the subwindow trees of top-level client windows a level at a time, every
// window of a level asked about in one round trip (QueryTree, GetGeometry,
// GetWindowAttributes batched with xcb cookies), and the pure rule that
// picks which of those windows are control-sized leaves.
// Thread affinity: the thread whose connection is passed (the desktop
// thread); pick_control_windows is a pure function.
#pragma once

#include <xcb/xcb.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/geometry.h"

namespace cu {

// One window of a top-level client's subtree as the walk read it.
struct subwindow_node {
  xcb_window_t id = XCB_NONE;
  size_t parent = SIZE_MAX;  // Index in the same list; SIZE_MAX: a child of the top-level.
  int depth = 1;             // 1 for the top-level's children.
  rect box;                  // Its inside, in root pixels, cut to its ancestors' insides.
  bool shown = false;        // Viewable and InputOutput.
};

// Which nodes are controls, as indexes into nodes: shown; at least 6x6
// pixels as cut; at most a quarter of top's area; not a strip at least nine
// tenths of top's width or height (an xterm's text window, a scroll bar);
// and with no node of their own subtree that is one (a leaf: a form that
// holds buttons is no control, the buttons are).
std::vector<size_t> pick_control_windows(const std::vector<subwindow_node>& nodes,
                                         const rect& top);

// A control window found under a top-level client window.
struct control_window {
  xcb_window_t id = XCB_NONE;
  xcb_window_t top = XCB_NONE;  // Its top-level client window.
  rect box;                     // Root pixels, cut to its ancestors.
  std::string name;             // WM_NAME, usually empty (Xt widgets set no properties).
  std::string instance, cls;    // WM_CLASS, usually empty.
};

// A top-level client window whose subtree is read: its id and its inside
// in root pixels.
struct control_top {
  xcb_window_t id = XCB_NONE;
  rect box;
};

// The control windows (pick_control_windows) of these top-level windows,
// depth at most 4 below each, in tops' order and each top's in the order
// X lists its children. At most most_windows subwindows are asked about in
// all (a level past it is not read), and at most most_controls returned.
// One round trip per level of depth, and one more for the controls' names.
std::vector<control_window> read_control_windows(xcb_connection_t* c,
                                                 const std::vector<control_top>& tops,
                                                 size_t most_windows, size_t most_controls);

}  // namespace cu
