// Owns: which application a window on the screen belongs to, for the
// grants (core/grant_policy.h, docs/grants.md): the top-level window a
// press at a point reaches, the one holding the keyboard focus, the
// top-level windows shown bottom to top with their boxes, and, for each,
// its client's WM_CLASS, _NET_WM_PID and that process's executable (a
// popup without them: its WM_TRANSIENT_FOR or WM_CLIENT_LEADER's); and the
// parts of a capture that windows the view does not allow cover.
// Thread affinity: an app_identifier belongs to the thread that owns its
// connection; hidden_rects is pure.
#pragma once

#include <xcb/xcb.h>

#include <optional>
#include <unordered_map>
#include <vector>

#include "core/geometry.h"
#include "core/grant_policy.h"
#include "util/result.h"
#include "x11/atoms.h"

namespace cu {

// A top-level window as shown: its box on the root (border included) and
// its application.
struct shown_window {
  uint32_t top = 0;
  rect box;
  app_identity app;
  // A shaped window's bounding shape as rectangles on the root: it covers
  // only those. Empty: not shaped, it covers its box.
  std::vector<rect> shape;
};

class app_identifier {
 public:
  // Interns its atoms on c (one round trip) at the first question.
  app_identifier(xcb_connection_t* c, xcb_window_t root);

  // The application whose window a press at p (root pixels) reaches: the
  // topmost top-level window there as X finds it (input shapes included),
  // the desktop where there is none. No cache: asked fresh each time.
  result<app_identity> at_point(point p);
  // The application holding the keyboard focus (PointerRoot: the one under
  // the pointer); the desktop when the focus is on the root; nothing when
  // the focus is None (keys then go nowhere).
  result<std::optional<app_identity>> of_focus();
  // The application of window w (any window: its top-level's).
  result<app_identity> of_window(xcb_window_t w);
  // The top-level window holding w (w itself when a child of the root).
  result<xcb_window_t> top_of(xcb_window_t w);
  // The application of top-level window top, read afresh.
  result<app_identity> of_top(xcb_window_t top);
  // Whether an event on this connection can change what a window it
  // identified says of its application: its destruction or reparenting, a
  // child made (a client into a frame), a change of a property it reads
  // (WM_CLASS, _NET_WM_PID, WM_CLIENT_MACHINE, _NET_WM_WINDOW_TYPE,
  // WM_TRANSIENT_FOR, WM_CLIENT_LEADER, WM_STATE), or an error. Not a move,
  // a title or a user time, which programs change on every key.
  bool changes_identity(const xcb_generic_event_t* ev) const;
  // The viewable top-level windows, bottom to top. Identities are kept
  // per top-level window while it stays in the tree.
  result<std::vector<shown_window>> layout();

 private:
  status ensure_atoms();
  // Identifies a top-level window: its client (the window with WM_STATE
  // inside a frame, or itself), else what it names itself.
  app_identity identify_top(xcb_window_t top);
  // The application of the X client that made top (by the resource base
  // of its id): the desktop for the window manager's, else the first
  // window of that client's that names its WM_CLASS; nothing when none does.
  std::optional<app_identity> by_client(xcb_window_t top);
  // Reads what w says of its application; false when it says nothing.
  bool read_names(xcb_window_t w, app_identity& out, int depth);

  xcb_connection_t* c_;
  xcb_window_t root_;
  std::optional<x11_atoms> atoms_;
  std::string host_;  // This machine's name, to trust a pid only from it.
  std::unordered_map<uint32_t, app_identity> cache_;
};

// An application known by its process alone (an AT-SPI application, whose
// name on the bus is GTK's program name, as its WM_CLASS instance is): name
// as its instance, pid with its executable and command names read from
// /proc. Unknown when it has neither name nor pid.
app_identity process_identity(uint32_t pid, std::string_view name);

// The parts of area (root pixels) whose topmost window view does not
// allow, as rectangles that do not overlap; the desktop's parts when the
// view keeps it out. shown is bottom to top, as layout() gives it.
std::vector<rect> hidden_rects(const std::vector<shown_window>& shown, const grant_view& view,
                               const rect& area);

// The parts of area that view shows: area less hidden_rects, as
// rectangles that do not overlap (empty: all of it is hidden).
std::vector<rect> shown_rects(const std::vector<shown_window>& shown, const grant_view& view,
                              const rect& area);

}  // namespace cu
