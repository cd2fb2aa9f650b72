// open_application as a desktop-thread operation: focus the window that
// matches, or start the program and wait for its window to appear.
#include <xcb/xcb.h>

#include <chrono>

#include "core/json_writer.h"
#include "desktop/app_lookup.h"
#include "desktop/desktop_op.h"
#include "desktop/spawn.h"
#include "util/str_cat.h"
#include "x11/windows.h"

namespace cu {
namespace {

using namespace std::chrono_literals;

// How long a launched program has to show a window.
constexpr auto kLaunchPatience = 10s;
// How long a window manager has to make a window active.
constexpr auto kActivatePatience = 2s;
// While waiting for a launched program's window, look again this often
// even without an event (a window may get its WM_CLASS after mapping).
constexpr auto kRescan = 100ms;

class open_application final : public desktop_op {
 public:
  explicit open_application(std::string app) : app_(std::move(app)) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    auto windows = list_client_windows(d.conn, *d.atoms, d.root);
    if (auto w = match_window(windows, app_)) return activate(d, *w);
    auto spec = find_launchable(app_, launch_env::from_environment());
    if (!spec) {
      return answer(false, str_cat("no window matches \"", app_,
                                   "\" and no executable or desktop entry of that name was found"));
    }
    auto pid = spawn_detached(spec->argv);
    if (!pid) return desktop_result{tool_result::failure(pid.err().message), {}};
    pid_ = *pid;
    launched_ = true;
    give_up_ = desktop_clock::now() + kLaunchPatience;
    wake_at = desktop_clock::now() + kRescan;
    return std::nullopt;
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    uint8_t type = event_type(ev);
    if (window_ != XCB_NONE) {
      // Waiting for the window manager to make our window active.
      if (type == XCB_PROPERTY_NOTIFY &&
          reinterpret_cast<const xcb_property_notify_event_t*>(ev)->atom ==
              d.atoms->_NET_ACTIVE_WINDOW &&
          active_window(d.conn, *d.atoms, d.root) == window_) {
        return answer(true);
      }
      return std::nullopt;
    }
    if (launched_ && (type == XCB_MAP_NOTIFY || type == XCB_PROPERTY_NOTIFY)) return look(d);
    return std::nullopt;
  }

  std::optional<desktop_result> on_wake(desktop_context& d) override {
    if (window_ != XCB_NONE) {
      bool ok = active_window(d.conn, *d.atoms, d.root) == window_;
      return answer(ok, ok ? std::string()
                           : str_cat("the window manager did not activate the window within ",
                                     seconds_text(kActivatePatience), " s"));
    }
    if (auto r = look(d)) return r;
    if (desktop_clock::now() >= give_up_) {
      return answer(false, str_cat("started pid ", std::to_string(pid_),
                                   " but no window of it appeared within ",
                                   seconds_text(kLaunchPatience), " s"));
    }
    wake_at = desktop_clock::now() + kRescan;
    return std::nullopt;
  }

 private:
  // A launched program's window: the one carrying its pid, else the one
  // its name matches; only once it can take the focus.
  std::optional<desktop_result> look(desktop_context& d) {
    auto windows = list_client_windows(d.conn, *d.atoms, d.root);
    std::optional<window_info> found;
    for (const window_info& w : windows) {
      if (w.pid == uint32_t(pid_) && w.viewable) found = w;
    }
    if (!found) {
      found = match_window(windows, app_);
      if (found && !found->viewable) found.reset();
    }
    if (!found) return std::nullopt;
    return activate(d, *found);
  }

  std::optional<desktop_result> activate(desktop_context& d, const window_info& w) {
    target_ = w.id;
    if (wm_supports_active_window(d.conn, *d.atoms, d.root)) {
      via_ = "ewmh";
      request_activation(d.conn, *d.atoms, d.root, w.id);
      if (!w.takes_focus) {
        // The manager raises it but, rightly, will not focus it.
        return answer(false, "the window was raised; it does not take the keyboard focus "
                             "(ICCCM input hint false)");
      }
      if (active_window(d.conn, *d.atoms, d.root) == w.id) return answer(true);
      window_ = w.id;
      wake_at = desktop_clock::now() + kActivatePatience;
      return std::nullopt;
    }
    via_ = "x11";
    bool focused = focus_directly(d.conn, w.id);
    return answer(focused, focused ? std::string()
                                   : "the window could not take the input focus (not viewable)");
  }

  desktop_result answer(bool focused, const std::string& note = {}) {
    std::string out;
    json_writer j(out);
    j.begin_object().key("app").string(app_).key("focused").boolean(focused);
    if (!via_.empty()) j.key("via").string(via_);
    if (!note.empty()) j.key("note").string(note);
    j.key("launched").boolean(launched_);
    if (target_ != XCB_NONE) j.key("window").string(window_id_text(target_));
    if (launched_) j.key("pid").number(int64_t(pid_));
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  std::string app_;
  std::string via_;
  bool launched_ = false;
  pid_t pid_ = 0;
  desktop_clock::time_point give_up_;
  xcb_window_t target_ = XCB_NONE;  // The window chosen.
  xcb_window_t window_ = XCB_NONE;  // Set while waiting for the WM.
};

}  // namespace

std::unique_ptr<desktop_op> make_open_application(std::string app) {
  return std::make_unique<open_application>(std::move(app));
}

}  // namespace cu
