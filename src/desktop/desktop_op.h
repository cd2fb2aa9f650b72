// Owns: the shape of one operation on the desktop thread (a clipboard read
// or write, open_application, switch_display), and the factories that make
// them. An operation reacts to X events and to its own wake-up time, so one
// that waits (for a slow clipboard owner, a launched program's window) never
// holds up the others.
// Thread affinity: made on the loop thread with validated arguments, then
// run only on the desktop thread.
#pragma once

#include <xcb/xcb.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.h"
#include "core/grant_policy.h"
#include "core/tool_result.h"
#include "x11/windows.h"
#include "util/seconds_text.h"
#include "x11/atoms.h"
#include "x11/subwindows.h"

namespace cu {

class app_identifier;
class clipboard_owner;
using desktop_clock = std::chrono::steady_clock;

// An event's type without the bit that marks events sent by clients.
inline uint8_t event_type(const xcb_generic_event_t* ev) { return ev->response_type & 0x7f; }

// What an operation ends with.
struct desktop_result {
  tool_result result;
  // switch_display: the display area from now on (nothing inside: the whole
  // screen). The loop applies it and clears the coordinate session.
  std::optional<std::optional<rect>> display_area;
};

// What an operation may use; valid while it runs.
struct desktop_context {
  xcb_connection_t* conn = nullptr;
  xcb_window_t root = XCB_NONE;
  xcb_window_t window = XCB_NONE;  // Ours: an unmapped window for selections.
  const x11_atoms* atoms = nullptr;
  clipboard_owner* clipboard = nullptr;
  std::string display;
  app_identifier* apps = nullptr;  // Which application a window is (the grants).
};

// The grants as the windows toolset and open_application apply them
// (docs/grants.md): a view (null: nothing is enforced) and what the
// window-changing operations do with it. Each operation judges its window
// when it starts, before it sends anything.
using view_ptr = std::shared_ptr<const grant_view>;
// Whether view lets the agent touch window w (a client window): always
// without a view or when the view filters nothing; a window whose
// identity cannot be read (gone meanwhile) is judged as one that names no
// application.
bool window_allowed(desktop_context& d, const view_ptr& view, xcb_window_t w);
// Clears the titles of the windows view does not allow, so that matching
// a name against the list (focus_window and open_application by app)
// never looks at a withheld title: "refused" for words of a hidden title
// and "no window matches" for others would tell it word by word.
void withhold_titles(desktop_context& d, const view_ptr& view, std::vector<window_info>& windows);
// A refusal of doing on w, whole (grant_view::refusal), or nothing when
// the view allows w.
std::optional<desktop_result> refuse_window(desktop_context& d, const view_ptr& view,
                                            xcb_window_t w, std::string_view doing);

class desktop_op {
 public:
  virtual ~desktop_op() = default;

  // Operations with the same key run one at a time, in order of arrival.
  virtual const char* serial_key() const { return nullptr; }

  // Begins the work; a result finishes the operation at once.
  virtual std::optional<desktop_result> start(desktop_context& d) = 0;

  // Every X event that arrives while the operation runs.
  virtual std::optional<desktop_result> on_event(desktop_context&, const xcb_generic_event_t*) {
    return std::nullopt;
  }

  // Called at wake_at; must finish or move wake_at later.
  virtual std::optional<desktop_result> on_wake(desktop_context& d) = 0;

  desktop_clock::time_point wake_at = desktop_clock::time_point::max();
};

// clipboard.cpp
// view: the grants' (null: none); when it filters, a clipboard owned by an
// application it does not allow is refused, not read.
std::unique_ptr<desktop_op> make_clipboard_read(view_ptr view = nullptr);
std::unique_ptr<desktop_op> make_clipboard_write(std::string text, size_t characters);

// open_application.cpp and switch_display.cpp
// With a view, the window it would focus is judged by it first (the
// name itself is judged by the handler, before anything starts).
std::unique_ptr<desktop_op> make_open_application(std::string app, view_ptr view = nullptr);
// current_area: the area in use now (nothing: the whole screen).
std::unique_ptr<desktop_op> make_switch_display(std::string requested,
                                                std::optional<rect> current_area);

// window_ops.cpp: the windows toolset. session and area: the coordinate
// session and display area image-space geometry refers to (none: what a
// screenshot would establish now). max_windows: the most windows listed
// (the focused one, then the topmost). view: the windows of applications
// it does not allow are listed with their title withheld and "granted":
// false, and app and title filters do not look at their titles; the
// changing operations below refuse them, sending nothing.
std::unique_ptr<desktop_op> make_list_windows(std::string app, std::string title,
                                              int max_windows,
                                              std::optional<coord_session> session,
                                              std::optional<rect> area, view_ptr view);
// The topmost application window at an image-space point (x, y) of the
// session, with its frame; none when only the desktop is there.
std::unique_ptr<desktop_op> make_window_at(double x, double y,
                                           std::optional<coord_session> session,
                                           std::optional<rect> area, view_ptr view);
// By id, or (id None) the window app names, as open_application matches.
std::unique_ptr<desktop_op> make_focus_window(xcb_window_t id, std::string app, view_ptr view);
// What set_window_geometry changes: the fields given, in image pixels of
// the session (image_units) or in root pixels.
struct geometry_request {
  std::optional<int> x, y, w, h;
  bool image_units = true;
};
std::unique_ptr<desktop_op> make_set_window_geometry(xcb_window_t id, geometry_request req,
                                                     std::optional<coord_session> session,
                                                     std::optional<rect> area, view_ptr view);
enum class window_state_change { minimized, maximized, fullscreen, above, normal };
std::unique_ptr<desktop_op> make_set_window_state(xcb_window_t id, window_state_change change,
                                                  bool enable, view_ptr view);
std::unique_ptr<desktop_op> make_close_window(xcb_window_t id, bool force, view_ptr view);
// A window's title bar as screenshot_marks marks it: the top of its frame,
// in root pixels, cut to its widest piece that no window stacked above it
// covers (none when they cover it all).
struct title_bar {
  xcb_window_t window = XCB_NONE;
  std::string title;
  rect box;
};
// The title bars of the shown client windows, written to *out (at most 64,
// the topmost); the operation answers an empty success. With controls, the
// control windows of the same windows as well (x11/subwindows.h: an X
// program's buttons that are windows of their own), topmost window first,
// at most 200, each in root pixels, those whose centre a window stacked
// above covers left out. view: the windows of applications it does not
// allow give neither title bars nor control windows.
std::unique_ptr<desktop_op> make_title_bars(
    std::shared_ptr<std::vector<title_bar>> out,
    std::shared_ptr<std::vector<control_window>> controls = nullptr, view_ptr view = nullptr);
// Whether view allows the application holding the keyboard focus (the
// gamepad's tools: a game reads the controller while it is focused):
// an empty success, or the refusal of doing. The focus on None (keys go
// nowhere) is refused as well: no application is known to be reading.
std::unique_ptr<desktop_op> make_focus_allowed(view_ptr view, std::string doing);
// area: the display switch_display chose (none: the whole screen).
std::unique_ptr<desktop_op> make_list_displays(std::optional<rect> area);

}  // namespace cu
