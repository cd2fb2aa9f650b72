// The windows toolset's tools: arguments checked here, the work done on
// the desktop thread (desktop/window_ops.cpp), which judges the window
// acted on with the grants' current view before it changes anything.
#include "desktop/desktop_op.h"
#include "toolsets/args.h"
#include "toolsets/windows/room.h"
#include "toolsets/tool_call.h"

namespace cu {
namespace {

constexpr size_t kMaxFilterBytes = 1024;
// How many windows list_windows lists by default and at most: a desktop
// rarely has a hundred, and a client list any client may write can name
// thousands (each entry is about 900 bytes of JSON).
constexpr int64_t kDefaultWindowsListed = 100;
constexpr int64_t kMaxWindowsListed = 1000;
// Window geometry stays within what X can express (16-bit sizes, and
// positions a window can have on a screen of up to 32767 pixels).
constexpr int64_t kMaxPosition = 32767;
constexpr int64_t kMaxSize = 32767;

// An optional filter string; "" when absent.
result<std::string> filter(simdjson::dom::object args, std::string_view name) {
  if (!arg_present(args, name)) return std::string();
  auto v = arg_name(args, name, kMaxFilterBytes);
  if (!v) return v.take_error();
  return std::string(*v);
}

}  // namespace

void handle_list_windows(tool_call& call) {
  auto app = filter(call.args, "app");
  if (!app) return call.fail(app.err().message);
  auto title = filter(call.args, "title");
  if (!title) return call.fail(title.err().message);
  auto most = arg_integer(call.args, "max_windows", 1, kMaxWindowsListed, kDefaultWindowsListed);
  if (!most) return call.fail(most.err().message);
  call.desktop(make_list_windows(std::move(*app), std::move(*title), int(*most), call.session(),
                                 call.display_area(), call.policy().view()));
}

void handle_focus_window(tool_call& call) {
  bool by_id = arg_present(call.args, "window");
  bool by_app = arg_present(call.args, "app");
  if (by_id == by_app) {
    return call.fail("focus_window needs exactly one of \"window\" (an id from list_windows) "
                     "and \"app\" (a name, window class or title)");
  }
  if (by_id) {
    auto id = arg_window(call.args, "window");
    if (!id) return call.fail(id.err().message);
    return call.desktop(make_focus_window(*id, {}, call.policy().view()));
  }
  auto app = arg_name(call.args, "app", kMaxFilterBytes);
  if (!app) return call.fail(app.err().message);
  call.desktop(make_focus_window(XCB_NONE, std::string(*app), call.policy().view()));
}

void handle_set_window_geometry(tool_call& call) {
  auto id = arg_window(call.args, "window");
  if (!id) return call.fail(id.err().message);
  geometry_request req;
  struct field {
    const char* name;
    std::optional<int>* slot;
    int64_t min, max;
  };
  for (const field& f : {field{"x", &req.x, -kMaxPosition, kMaxPosition},
                         field{"y", &req.y, -kMaxPosition, kMaxPosition},
                         field{"width", &req.w, 1, kMaxSize},
                         field{"height", &req.h, 1, kMaxSize}}) {
    if (!arg_present(call.args, f.name)) continue;
    auto v = arg_integer(call.args, f.name, f.min, f.max);
    if (!v) return call.fail(v.err().message);
    *f.slot = int(*v);
  }
  if (!req.x && !req.y && !req.w && !req.h) {
    return call.fail("set_window_geometry needs at least one of \"x\", \"y\", \"width\" and "
                     "\"height\"");
  }
  if (arg_present(call.args, "units")) {
    auto units = arg_choice(call.args, "units", {"image", "device"});
    if (!units) return call.fail(units.err().message);
    req.image_units = *units == "image";
  }
  call.desktop(
      make_set_window_geometry(*id, req, call.session(), call.display_area(), call.policy().view()));
}

void handle_set_window_state(tool_call& call) {
  auto id = arg_window(call.args, "window");
  if (!id) return call.fail(id.err().message);
  auto state =
      arg_choice(call.args, "state", {"minimized", "maximized", "fullscreen", "above", "normal"});
  if (!state) return call.fail(state.err().message);
  auto enable = arg_bool(call.args, "enable", true);
  if (!enable) return call.fail(enable.err().message);
  window_state_change change = window_state_change::normal;
  if (*state == "minimized") change = window_state_change::minimized;
  if (*state == "maximized") change = window_state_change::maximized;
  if (*state == "fullscreen") change = window_state_change::fullscreen;
  if (*state == "above") change = window_state_change::above;
  if (change == window_state_change::normal && !*enable) {
    return call.fail("Invalid argument \"enable\": 'normal' can only be set (enable: true)");
  }
  call.desktop(make_set_window_state(*id, change, *enable, call.policy().view()));
}

void handle_close_window(tool_call& call) {
  auto id = arg_window(call.args, "window");
  if (!id) return call.fail(id.err().message);
  auto force = arg_bool(call.args, "force", false);
  if (!force) return call.fail(force.err().message);
  call.desktop(make_close_window(*id, *force, call.policy().view()));
}

void handle_list_displays(tool_call& call) { call.desktop(make_list_displays(call.display_area())); }

}  // namespace cu

namespace cu {

void handle_window_at(tool_call& call) {
  auto c = arg_coordinate(call.args, "coordinate");
  if (!c) return call.fail(c.err().message);
  call.desktop(
      make_window_at((*c)[0], (*c)[1], call.session(), call.display_area(), call.policy().view()));
}

}  // namespace cu
