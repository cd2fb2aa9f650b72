// The windows toolset as desktop-thread operations: list windows and
// monitors, and focus, move, resize, change the state of and close a window.
// Every change goes through the window manager when one runs (EWMH client
// messages, as a pager sends them) and straight to the window otherwise;
// each answers what X says afterwards, once the change was seen or its
// patience ran out, never what was asked for.
#include <xcb/xcb.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <unordered_map>

#include "core/json_writer.h"
#include "desktop/activation.h"
#include "desktop/desktop_op.h"
#include "vision/marks.h"
#include "x11/app_identity.h"
#include "util/ascii.h"
#include "util/str_cat.h"
#include "x11/connection.h"
#include "x11/monitors.h"
#include "x11/subwindows.h"
#include "x11/window_control.h"
#include "x11/windows.h"

namespace cu {
namespace {

using namespace std::chrono_literals;

// How long a window manager has to carry out a request, and how long the
// window must then stay still before its geometry counts as final.
constexpr auto kChangePatience = 1s;
constexpr auto kSettle = 150ms;
// How long a window resized by a state change may still move.
constexpr auto kStill = 50ms;
// How long a window has to go away after a polite close, and after its
// program was disconnected.
constexpr auto kClosePatience = 2s;
constexpr auto kKillPatience = 1s;
// ICCCM 4.1.4: the state WM_CHANGE_STATE asks for.
constexpr uint32_t kIconicState = 3;
// EWMH _NET_WM_STATE actions and the pager's source indication.
constexpr uint32_t kStateRemove = 0, kStateAdd = 1;
constexpr uint32_t kSourcePager = 2;

desktop_result fail(std::string message) {
  return desktop_result{tool_result::failure(std::move(message)), {}};
}

// The application of client window w, for the grants: one that cannot be
// read (gone meanwhile, or no identifier) names no application.
app_identity identity_of(desktop_context& d, xcb_window_t w) {
  if (d.apps != nullptr) {
    if (auto a = d.apps->of_window(w)) return std::move(*a);
  }
  app_identity unknown;
  unknown.window = w;
  return unknown;
}

// The basis image-space geometry is given in: the coordinate session (a
// window's, placed where that window is now), else what a screenshot would
// establish now.
coord_session basis(desktop_context& d, const std::optional<coord_session>& session,
                    const std::optional<rect>& area) {
  if (session && session->window == 0) return *session;
  if (session) {
    reply_ptr<xcb_translate_coordinates_reply_t> at(xcb_translate_coordinates_reply(
        d.conn, xcb_translate_coordinates(d.conn, session->window, d.root, 0, 0), nullptr));
    if (at) {
      coord_session s = *session;
      s.device.x += at->dst_x;
      s.device.y += at->dst_y;
      s.window = 0;
      return s;
    }
    // The session's window is gone: as if there were no session.
  }
  if (area) return make_session(*area);
  reply_ptr<xcb_get_geometry_reply_t> g(
      xcb_get_geometry_reply(d.conn, xcb_get_geometry(d.conn, d.root), nullptr));
  return make_session(rect{0, 0, g ? g->width : 1, g ? g->height : 1});
}

void write_state(json_writer& j, const window_state& s, bool viewable) {
  j.key("minimized").boolean(s.minimized).key("maximized").boolean(s.maximized);
  j.key("fullscreen").boolean(s.fullscreen).key("above").boolean(s.above);
  j.key("viewable").boolean(viewable);
}

// Whether an event tells of a change to w (or to anything, for the root's
// children: a frame around w).
bool concerns(const xcb_generic_event_t* ev, xcb_window_t w) {
  switch (event_type(ev)) {
    case XCB_CONFIGURE_NOTIFY: return true;  // w, or its frame among the root's children.
    case XCB_PROPERTY_NOTIFY:
      return reinterpret_cast<const xcb_property_notify_event_t*>(ev)->window == w;
    case XCB_MAP_NOTIFY: case XCB_UNMAP_NOTIFY: case XCB_DESTROY_NOTIFY: return true;
    default: return false;
  }
}

void watch_window(desktop_context& d, xcb_window_t w) {
  const uint32_t mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY | XCB_EVENT_MASK_PROPERTY_CHANGE;
  xcb_change_window_attributes(d.conn, w, XCB_CW_EVENT_MASK, &mask);
  xcb_flush(d.conn);
}

// A window's first fields as list_windows and window_at answer them: id,
// title, class, instance, pid, and its area in device and image pixels.
// granted: nothing when nothing is enforced; false withholds the title
// (the grants keep what such a window shows from the agent).
void write_window_identity(json_writer& j, const window_details& w, const coord_session& s,
                           std::optional<bool> granted) {
  j.key("id").string(window_id_text(w.info.id));
  j.key("title").string(granted.value_or(true) ? w.info.title : std::string());
  j.key("class").string(w.info.cls);
  j.key("instance").string(w.info.instance).key("pid");
  if (w.info.pid != 0) j.number(int64_t(w.info.pid)); else j.null();
  j.key("device");
  write_rect(j, w.device);
  j.key("image");
  write_rect(j, device_rect_to_image(s, w.device));
  if (granted) j.key("granted").boolean(*granted);
}

class list_windows final : public desktop_op {
 public:
  list_windows(std::string app, std::string title, int max_windows,
               std::optional<coord_session> session, std::optional<rect> area, view_ptr view)
      : app_(ascii_lower(app)),
        title_(ascii_lower(title)),
        max_windows_(max_windows),
        session_(session),
        area_(area),
        view_(std::move(view)) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    std::vector<window_info> all = list_client_windows(d.conn, *d.atoms, d.root);
    std::vector<window_info> chosen;
    const bool judging = view_ && view_->filtering();
    std::unordered_map<xcb_window_t, bool> granted;
    for (window_info& w : all) {
      // A withheld title is not searched either: a filter that matched it
      // would tell what it says.
      if (judging) granted[w.id] = window_allowed(d, view_, w.id);
      if (judging && !granted[w.id]) w.title.clear();
      std::string title = ascii_lower(w.title);
      bool app_ok = app_.empty() || ascii_lower(w.instance).find(app_) != std::string::npos ||
                    ascii_lower(w.cls).find(app_) != std::string::npos ||
                    title.find(app_) != std::string::npos;
      if (app_ok && (title_.empty() || title.find(title_) != std::string::npos)) {
        chosen.push_back(std::move(w));
      }
    }
    std::optional<std::string> wm = window_manager_name(d.conn, *d.atoms, d.root);
    xcb_window_t active = wm ? active_window(d.conn, *d.atoms, d.root) : XCB_NONE;
    std::vector<xcb_window_t> focus = focus_chain(d.conn, d.root);
    auto is_focused = [&](xcb_window_t id) {
      return wm && active != XCB_NONE ? active == id
                                      : std::find(focus.begin(), focus.end(), id) != focus.end();
    };
    // Past the bound, the windows kept are the focused one and then the
    // topmost: the ones a caller is likeliest to act on. Only those are
    // described, so a desktop of thousands costs no more than the bound.
    std::vector<size_t> order;
    for (size_t i = chosen.size(); i-- > 0;) {
      if (is_focused(chosen[i].id)) order.insert(order.begin(), i); else order.push_back(i);
    }
    if (order.size() > size_t(max_windows_)) order.resize(size_t(max_windows_));
    std::vector<window_info> kept;
    std::unordered_map<xcb_window_t, size_t> index_of;  // In chosen: the stacking order.
    for (size_t i : order) {
      kept.push_back(chosen[i]);
      index_of[chosen[i].id] = i;
    }
    std::vector<window_details> windows = describe_windows(d.conn, *d.atoms, d.root, kept);
    coord_session s = basis(d, session_, area_);

    // Each window's entry, in the order kept; then, under the byte bound,
    // written bottom to top as the stacking order has them.
    std::vector<std::pair<size_t, std::string>> entries;  // Index in chosen, JSON.
    size_t bytes = 0;
    for (const window_details& w : windows) {
      std::string e;
      json_writer j(e);
      j.begin_object();
      std::optional<bool> is_granted;
      if (judging) is_granted = granted[w.info.id];
      write_window_identity(j, w, s, is_granted);
      j.key("frame_extents").begin_object().key("left").number(int64_t(w.frame.left));
      j.key("right").number(int64_t(w.frame.right)).key("top").number(int64_t(w.frame.top));
      j.key("bottom").number(int64_t(w.frame.bottom)).end_object();
      j.key("focused").boolean(is_focused(w.info.id));
      write_state(j, w.state, w.info.viewable);
      j.key("desktop");
      if (w.desktop) j.number(int64_t(*w.desktop)); else j.null();
      j.key("type").string(w.type).key("transient_for");
      if (w.transient_for != XCB_NONE) j.string(window_id_text(w.transient_for)); else j.null();
      j.end_object();
      if (bytes + e.size() > kMaxListBytes) break;
      bytes += e.size();
      entries.emplace_back(index_of[w.info.id], std::move(e));
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    // Windows that matched but are not listed; those gone meanwhile are not
    // counted (they are no longer there to list).
    const size_t omitted = chosen.size() - kept.size() +
                           (windows.size() - entries.size());

    std::string out;
    json_writer j(out);
    j.begin_object().key("windows").begin_array();
    for (const auto& e : entries) j.raw(e.second);
    j.end_array().key("active");
    if (active != XCB_NONE) j.string(window_id_text(active)); else j.null();
    j.key("window_manager");
    if (wm) j.string(*wm); else j.null();
    j.key("truncated").boolean(omitted != 0).key("omitted").number(int64_t(omitted));
    if (omitted != 0) {
      j.key("note").string(str_cat(
          "the list is cut: ", std::to_string(omitted), " of ", std::to_string(chosen.size()),
          " matching windows left out (at most ", std::to_string(max_windows_),
          " windows and 512 KiB of them are listed: the focused one, then the topmost); app or "
          "title narrows the list"));
    }
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  std::optional<desktop_result> on_wake(desktop_context&) override { return std::nullopt; }

 private:
  // The most of one answer's window entries: 1000 windows of ordinary
  // titles (max_windows' most) are some 460 KiB, while one title may be 4 KiB
  // that JSON escapes make 24. The answer holds the list twice (its text and
  // structuredContent), so its line stays under about 1.1 MiB.
  static constexpr size_t kMaxListBytes = 512 * 1024;  // The note says "512 KiB".

  std::string app_, title_;
  int max_windows_;
  std::optional<coord_session> session_;
  std::optional<rect> area_;
  view_ptr view_;
};

class focus_window final : public desktop_op {
 public:
  focus_window(xcb_window_t id, std::string app, view_ptr view)
      : id_(id), app_(std::move(app)), view_(std::move(view)) {}

  const char* serial_key() const override { return "windows"; }

  std::optional<desktop_result> start(desktop_context& d) override {
    std::optional<window_info> w;
    if (id_ != XCB_NONE) {
      auto found = find_client_window(d.conn, *d.atoms, d.root, id_);
      if (!found) return fail(found.err().message);
      w = found->info;
    } else {
      std::vector<window_info> windows = list_client_windows(d.conn, *d.atoms, d.root);
      withhold_titles(d, view_, windows);
      w = match_window(windows, app_);
      if (!w) {
        return fail(str_cat("no window matches \"", app_,
                            "\" (focus_window launches nothing; open_application does)"));
      }
    }
    if (auto refused = refuse_window(d, view_, w->id, "focus_window")) return refused;
    target_ = w->id;
    if (auto done = activation_.start(d, *w, wake_at)) return answer(*done);
    return std::nullopt;
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    if (auto done = activation_.on_event(d, ev)) return answer(*done);
    return std::nullopt;
  }

  std::optional<desktop_result> on_wake(desktop_context& d) override {
    return answer(activation_.on_wake(d));
  }

 private:
  desktop_result answer(const window_activation::outcome& done) {
    std::string out;
    json_writer j(out);
    j.begin_object().key("window").string(window_id_text(target_)).key("focused").boolean(
        done.focused);
    j.key("via").string(activation_.via());
    if (!done.note.empty()) j.key("note").string(done.note);
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  xcb_window_t id_;
  std::string app_;
  view_ptr view_;
  xcb_window_t target_ = XCB_NONE;
  window_activation activation_;
};

class set_window_geometry final : public desktop_op {
 public:
  set_window_geometry(xcb_window_t id, geometry_request req, std::optional<coord_session> session,
                      std::optional<rect> area, view_ptr view)
      : id_(id), req_(req), session_(session), area_(area), view_(std::move(view)) {}

  const char* serial_key() const override { return "windows"; }

  std::optional<desktop_result> start(desktop_context& d) override {
    auto w = find_client_window(d.conn, *d.atoms, d.root, id_);
    if (!w) return fail(w.err().message);
    if (auto refused = refuse_window(d, view_, id_, "set_window_geometry")) return refused;
    s_ = basis(d, session_, area_);
    // Image pixels to device pixels: positions through the session's
    // origin, sizes by its scale.
    auto pos = [&](int v, int origin, int dev, int image) {
      return req_.image_units ? origin + int((int64_t(v) * dev + image / 2) / image) : v;
    };
    auto len = [&](int v, int dev, int image) {
      return req_.image_units ? std::max(1, int((int64_t(v) * dev + image / 2) / image)) : v;
    };
    target_ = w->device;
    if (req_.x) target_.x = pos(*req_.x, s_.device.x, s_.device.w, s_.image.w);
    if (req_.y) target_.y = pos(*req_.y, s_.device.y, s_.device.h, s_.image.h);
    if (req_.w) target_.w = len(*req_.w, s_.device.w, s_.image.w);
    if (req_.h) target_.h = len(*req_.h, s_.device.h, s_.image.h);
    before_ = w->device;
    watch_window(d, id_);
    ewmh_ = wm_supports(d.conn, *d.atoms, d.root, d.atoms->_NET_MOVERESIZE_WINDOW);
    via_ = ewmh_ ? "ewmh" : "x11";
    // A window's position is its border's outer corner.
    request(d, target_.x - w->border, target_.y - w->border, req_.x.has_value(),
            req_.y.has_value(), req_.w.has_value(), req_.h.has_value());
    return check(d);
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    if (!concerns(ev, id_)) return std::nullopt;
    if (auto r = check(d)) return r;
    // Something moved: give the manager a moment more to finish.
    wake_at = std::min(give_up_, desktop_clock::now() + kSettle);
    return std::nullopt;
  }

  std::optional<desktop_result> on_wake(desktop_context& d) override {
    auto now = window_area(d.conn, d.root, id_);
    if (!now) return fail(str_cat("the window ", window_id_text(id_), " went away"));
    // Window managers read a position through the window's gravity and
    // their own idea of its border (Openbox puts a window with static
    // gravity one pixel off: the border it took away). A small miss is
    // corrected once, by the miss; a large one is the manager's choice
    // (keeping the window on screen), and stands.
    int dx = now->x - target_.x, dy = now->y - target_.y;
    if (!corrected_ && (req_.x || req_.y) && (dx != 0 || dy != 0) && std::abs(dx) <= kSmallMiss &&
        std::abs(dy) <= kSmallMiss) {
      corrected_ = true;
      int x = sent_x_ - dx, y = sent_y_ - dy;
      request(d, x, y, req_.x.has_value(), req_.y.has_value(), false, false);
      return check(d);
    }
    return answer(*now);
  }

 private:
  static constexpr int kSmallMiss = 64;

  // Asks for the move and/or resize: x and y are where the window (its
  // border's corner) goes.
  void request(desktop_context& d, int x, int y, bool move_x, bool move_y, bool width,
               bool height) {
    sent_x_ = x;
    sent_y_ = y;
    if (ewmh_) {
      // Static gravity: x and y place the window itself, not its frame
      // (EWMH _NET_MOVERESIZE_WINDOW).
      constexpr uint32_t kStaticGravity = 10;
      uint32_t flags = kStaticGravity | (kSourcePager << 12);
      if (move_x) flags |= 1u << 8;
      if (move_y) flags |= 1u << 9;
      if (width) flags |= 1u << 10;
      if (height) flags |= 1u << 11;
      send_to_window_manager(d.conn, d.root, id_, d.atoms->_NET_MOVERESIZE_WINDOW,
                             {flags, uint32_t(x), uint32_t(y), uint32_t(target_.w),
                              uint32_t(target_.h)});
    } else {
      uint16_t mask = 0;
      uint32_t values[4];
      int n = 0;
      if (move_x) { mask |= XCB_CONFIG_WINDOW_X; values[n++] = uint32_t(x); }
      if (move_y) { mask |= XCB_CONFIG_WINDOW_Y; values[n++] = uint32_t(y); }
      if (width) { mask |= XCB_CONFIG_WINDOW_WIDTH; values[n++] = uint32_t(target_.w); }
      if (height) { mask |= XCB_CONFIG_WINDOW_HEIGHT; values[n++] = uint32_t(target_.h); }
      xcb_configure_window(d.conn, id_, mask, values);
      xcb_flush(d.conn);
    }
    give_up_ = desktop_clock::now() + kChangePatience;
    wake_at = give_up_;
  }

  std::optional<desktop_result> check(desktop_context& d) {
    auto now = window_area(d.conn, d.root, id_);
    if (!now) return fail(str_cat("the window ", window_id_text(id_), " went away"));
    if (*now == target_) return answer(*now);
    return std::nullopt;
  }

  desktop_result answer(const rect& now) {
    std::string out;
    json_writer j(out);
    j.begin_object().key("window").string(window_id_text(id_)).key("requested");
    write_rect(j, target_);
    j.key("device");
    write_rect(j, now);
    j.key("image");
    write_rect(j, device_rect_to_image(s_, now));
    j.key("changed").boolean(now != before_).key("via").string(via_);
    if (now != target_) {
      j.key("note").string(str_cat("the window is at ", geometry_text(now), ", not the ",
                                   geometry_text(target_),
                                   " asked for (the window manager or the program adjusted it)"));
    }
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  xcb_window_t id_;
  geometry_request req_;
  std::optional<coord_session> session_;
  std::optional<rect> area_;
  view_ptr view_;
  coord_session s_;
  rect target_, before_;
  std::string via_;
  bool ewmh_ = false;
  bool corrected_ = false;
  int sent_x_ = 0, sent_y_ = 0;
  desktop_clock::time_point give_up_;
};

const char* state_name(window_state_change s) {
  switch (s) {
    case window_state_change::minimized: return "minimized";
    case window_state_change::maximized: return "maximized";
    case window_state_change::fullscreen: return "fullscreen";
    case window_state_change::above: return "above";
    case window_state_change::normal: return "normal";
  }
  return "?";
}

class set_window_state final : public desktop_op {
 public:
  set_window_state(xcb_window_t id, window_state_change change, bool enable, view_ptr view)
      : id_(id), change_(change), enable_(enable), view_(std::move(view)) {}

  const char* serial_key() const override { return "windows"; }

  std::optional<desktop_result> start(desktop_context& d) override {
    auto w = find_client_window(d.conn, *d.atoms, d.root, id_);
    if (!w) return fail(w.err().message);
    if (auto refused = refuse_window(d, view_, id_, "set_window_state")) return refused;
    const x11_atoms& a = *d.atoms;
    bool wm = window_manager_name(d.conn, a, d.root).has_value();
    bool ewmh_state = wm_supports(d.conn, a, d.root, a._NET_WM_STATE);
    before_ = w->device;
    already_ = reached(*w);
    // Maximizing, fullscreen and restoring from them change the window's
    // size too, and a manager sets the state before it resizes (Openbox: a
    // few ms later).
    resizes_ = change_ == window_state_change::maximized ||
               change_ == window_state_change::fullscreen ||
               (change_ == window_state_change::normal &&
                (w->state.maximized || w->state.fullscreen));
    watch_window(d, id_);
    auto net_state = [&](bool add, xcb_atom_t first, xcb_atom_t second = XCB_NONE) {
      send_to_window_manager(d.conn, d.root, id_, a._NET_WM_STATE,
                             {add ? kStateAdd : kStateRemove, first, second, kSourcePager, 0});
    };
    auto needs_wm = [&] {
      return fail(str_cat("set_window_state ", state_name(change_),
                          " needs a window manager that supports _NET_WM_STATE; ",
                          wm ? "this one does not" : "none runs on this display"));
    };
    auto restore = [&] {
      if (wm_supports(d.conn, a, d.root, a._NET_ACTIVE_WINDOW)) {
        request_activation(d.conn, a, d.root, id_);
      } else {
        xcb_map_window(d.conn, id_);
        xcb_flush(d.conn);
      }
    };
    switch (change_) {
      case window_state_change::minimized:
        if (!enable_) {
          restore();
        } else if (wm) {
          send_to_window_manager(d.conn, d.root, id_, a.WM_CHANGE_STATE,
                                 {kIconicState, 0, 0, 0, 0});
        } else {
          xcb_unmap_window(d.conn, id_);
          xcb_flush(d.conn);
        }
        break;
      case window_state_change::maximized:
        if (!ewmh_state) return needs_wm();
        net_state(enable_, a._NET_WM_STATE_MAXIMIZED_VERT, a._NET_WM_STATE_MAXIMIZED_HORZ);
        break;
      case window_state_change::fullscreen:
        if (!ewmh_state) return needs_wm();
        net_state(enable_, a._NET_WM_STATE_FULLSCREEN);
        break;
      case window_state_change::above:
        if (!ewmh_state) return needs_wm();
        net_state(enable_, a._NET_WM_STATE_ABOVE);
        break;
      case window_state_change::normal:
        if (w->state.minimized || !w->info.viewable) restore();
        if (ewmh_state && w->state.maximized) {
          net_state(false, a._NET_WM_STATE_MAXIMIZED_VERT, a._NET_WM_STATE_MAXIMIZED_HORZ);
        }
        if (ewmh_state && w->state.fullscreen) net_state(false, a._NET_WM_STATE_FULLSCREEN);
        break;
    }
    wake_at = desktop_clock::now() + kChangePatience;
    return check(d);
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    if (!concerns(ev, id_)) return std::nullopt;
    return check(d);
  }

  std::optional<desktop_result> on_wake(desktop_context& d) override {
    auto w = find_client_window(d.conn, *d.atoms, d.root, id_);
    if (!w) return fail(str_cat("the window ", window_id_text(id_), " went away"));
    // Reached, and the manager has not resized the window within kSettle:
    // it keeps its size (a window already as large as maximized).
    if (reached(*w)) return answer(*w, {});
    return answer(*w, str_cat("the window is not ", reached_text(), " after ",
                              seconds_text(kChangePatience), " s"));
  }

 private:
  // Whether the window is as asked.
  bool reached(const window_details& w) const {
    switch (change_) {
      case window_state_change::minimized:
        return enable_ ? !w.info.viewable : w.info.viewable && !w.state.minimized;
      case window_state_change::maximized: return w.state.maximized == enable_;
      case window_state_change::fullscreen: return w.state.fullscreen == enable_;
      case window_state_change::above: return w.state.above == enable_;
      case window_state_change::normal:
        return w.info.viewable && !w.state.minimized && !w.state.maximized && !w.state.fullscreen;
    }
    return false;
  }

  std::string reached_text() const {
    if (change_ == window_state_change::normal) return "back to normal";
    return str_cat(enable_ ? "" : "no longer ", state_name(change_));
  }

  std::optional<desktop_result> check(desktop_context& d) {
    auto w = find_client_window(d.conn, *d.atoms, d.root, id_);
    if (!w) return fail(str_cat("the window ", window_id_text(id_), " went away"));
    if (!reached(*w)) return std::nullopt;
    // Answer once the size has followed the state, so that what comes
    // next (list_windows, a screenshot) sees the window as it will stay;
    // a window whose size does not change is answered kSettle after its
    // state is reached. A manager moves the frame, and the client with it,
    // apart from resizing the client (two requests; Openbox's can be seen
    // in between), so a moved window of the old size is halfway; a resized
    // one is done once it has moved too, or kStill after, when its place
    // stays (a window maximized where it already was).
    const bool resized = w->device.w != before_.w || w->device.h != before_.h;
    const bool moved = w->device.x != before_.x || w->device.y != before_.y;
    if (!resizes_ || already_ || (resized && moved)) return answer(*w, {});
    wake_at = std::min(wake_at, desktop_clock::now() + (resized ? kStill : kSettle));
    return std::nullopt;
  }

  desktop_result answer(const window_details& w, const std::string& note) {
    std::string out;
    json_writer j(out);
    j.begin_object().key("window").string(window_id_text(id_));
    write_state(j, w.state, w.info.viewable);
    if (!note.empty()) j.key("note").string(note);
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  xcb_window_t id_;
  window_state_change change_;
  bool enable_;
  view_ptr view_;
  rect before_;           // The window's area before the change.
  bool already_ = false;  // It was as asked before anything was sent.
  bool resizes_ = false;  // The change resizes the window as well.
};

class close_window final : public desktop_op {
 public:
  close_window(xcb_window_t id, bool force, view_ptr view)
      : id_(id), force_(force), view_(std::move(view)) {}

  const char* serial_key() const override { return "windows"; }

  std::optional<desktop_result> start(desktop_context& d) override {
    auto w = find_client_window(d.conn, *d.atoms, d.root, id_);
    if (!w) return fail(w.err().message);
    if (auto refused = refuse_window(d, view_, id_, "close_window")) return refused;
    const x11_atoms& a = *d.atoms;
    watch_window(d, id_);
    if (wm_supports(d.conn, a, d.root, a._NET_CLOSE_WINDOW)) {
      via_ = "ewmh";
      send_to_window_manager(d.conn, d.root, id_, a._NET_CLOSE_WINDOW,
                             {XCB_CURRENT_TIME, kSourcePager, 0, 0, 0});
    } else if (supports_protocol(d.conn, a, id_, a.WM_DELETE_WINDOW)) {
      via_ = "wm_delete_window";
      xcb_client_message_event_t ev{};
      ev.response_type = XCB_CLIENT_MESSAGE;
      ev.format = 32;
      ev.window = id_;
      ev.type = a.WM_PROTOCOLS;
      ev.data.data32[0] = a.WM_DELETE_WINDOW;
      ev.data.data32[1] = XCB_CURRENT_TIME;
      xcb_send_event(d.conn, 0, id_, XCB_EVENT_MASK_NO_EVENT, reinterpret_cast<const char*>(&ev));
      xcb_flush(d.conn);
    } else if (force_) {
      return kill(d);
    } else {
      return answer(false, "the window does not take a polite close request (no "
                           "WM_DELETE_WINDOW and no window manager); force: true disconnects "
                           "its program");
    }
    wake_at = desktop_clock::now() + kClosePatience;
    return std::nullopt;
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    uint8_t type = event_type(ev);
    if ((type == XCB_DESTROY_NOTIFY &&
         reinterpret_cast<const xcb_destroy_notify_event_t*>(ev)->window == id_) ||
        (type == XCB_UNMAP_NOTIFY &&
         reinterpret_cast<const xcb_unmap_notify_event_t*>(ev)->window == id_)) {
      if (gone(d)) return answer(true, {});
    }
    return std::nullopt;
  }

  std::optional<desktop_result> on_wake(desktop_context& d) override {
    if (gone(d)) return answer(true, {});
    if (killed_) {
      return answer(false, str_cat("the window is still there ", seconds_text(kKillPatience),
                                   " s after its program was disconnected"));
    }
    if (force_) return kill(d);
    return answer(false, str_cat("the window is still open ", seconds_text(kClosePatience),
                                 " s after the close request (it may be asking to save "
                                 "first); force: true disconnects its program"));
  }

 private:
  // Gone: destroyed, or withdrawn (unmapped and no longer a client window).
  bool gone(desktop_context& d) {
    return !find_client_window(d.conn, *d.atoms, d.root, id_) ||
           !window_area(d.conn, d.root, id_).has_value();
  }

  std::optional<desktop_result> kill(desktop_context& d) {
    killed_ = true;
    via_ = via_.empty() ? "kill_client" : via_ + "+kill_client";
    xcb_kill_client(d.conn, id_);
    xcb_flush(d.conn);
    wake_at = desktop_clock::now() + kKillPatience;
    return std::nullopt;
  }

  desktop_result answer(bool closed, const std::string& note) {
    std::string out;
    json_writer j(out);
    j.begin_object().key("window").string(window_id_text(id_)).key("closed").boolean(closed);
    j.key("via").string(via_.empty() ? "none" : via_).key("forced").boolean(killed_);
    if (!note.empty()) j.key("note").string(note);
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  xcb_window_t id_;
  bool force_;
  view_ptr view_;
  bool killed_ = false;
  std::string via_;
};

class title_bars final : public desktop_op {
 public:
  title_bars(std::shared_ptr<std::vector<title_bar>> out,
             std::shared_ptr<std::vector<control_window>> controls, view_ptr view)
      : out_(std::move(out)), controls_(std::move(controls)), view_(std::move(view)) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    std::vector<window_info> all = list_client_windows(d.conn, *d.atoms, d.root);
    std::erase_if(all, [](const window_info& w) { return !w.viewable; });
    // A desktop of thousands of windows costs no more than the topmost 64.
    if (all.size() > kMostWindows) all.erase(all.begin(), all.end() - kMostWindows);
    std::vector<window_details> shown = describe_windows(d.conn, *d.atoms, d.root, all);
    auto outer = [](const window_details& w) {
      return rect{w.device.x - w.border - w.frame.left, w.device.y - w.border - w.frame.top,
                  w.device.w + 2 * w.border + w.frame.left + w.frame.right,
                  w.device.h + 2 * w.border + w.frame.top + w.frame.bottom};
    };
    // Windows the grants keep from the agent give no marks, but still
    // cover what is below them.
    std::vector<bool> allowed(shown.size(), true);
    for (size_t i = 0; i < shown.size(); ++i) allowed[i] = window_allowed(d, view_, shown[i].info.id);
    for (size_t i = 0; i < shown.size(); ++i) {
      const window_details& w = shown[i];
      if (w.frame.top <= 0 || w.state.minimized || !allowed[i]) continue;
      const rect o = outer(w);
      // The windows above take their columns away; what is left of the
      // bar, its widest piece, is where a click still reaches it (a sliver
      // narrower than the bar is tall is no place to aim at).
      std::vector<rect> above;
      for (size_t k = i + 1; k < shown.size(); ++k) {
        if (!shown[k].state.minimized) above.push_back(outer(shown[k]));
      }
      const rect bar = uncovered_piece(rect{o.x, o.y, o.w, w.frame.top}, above);
      if (bar.w >= w.frame.top) out_->push_back(title_bar{w.info.id, w.info.title, bar});
    }
    if (controls_) find_controls(d, shown, allowed, outer);
    return desktop_result{tool_result::json("{}"), std::nullopt};
  }

  std::optional<desktop_result> on_wake(desktop_context&) override { return std::nullopt; }

 private:
  static constexpr size_t kMostWindows = 64;
  // An X program's tree past a few thousand windows is a list or a grid
  // whose cells no map shows all of; the first 2000 read bound the time.
  static constexpr size_t kMostSubwindows = 2000;
  static constexpr size_t kMostControls = 200;

  // The shown windows' control windows, topmost window first, those whose
  // centre a window stacked above covers left out: a click at the mark's
  // middle would land on that window instead.
  template <class Outer>
  void find_controls(desktop_context& d, const std::vector<window_details>& shown,
                     const std::vector<bool>& allowed, const Outer& outer) {
    std::vector<control_top> tops;
    std::vector<size_t> index;
    for (size_t i = shown.size(); i-- > 0;) {
      if (shown[i].state.minimized || !allowed[i]) continue;
      tops.push_back(control_top{shown[i].info.id, shown[i].device});
      index.push_back(i);
    }
    std::vector<control_window> found =
        read_control_windows(d.conn, tops, kMostSubwindows, kMostControls);
    for (control_window& w : found) {
      size_t at = 0;
      while (at < tops.size() && tops[at].id != w.top) ++at;
      if (at == tops.size()) continue;
      const point mid{w.box.x + w.box.w / 2, w.box.y + w.box.h / 2};
      bool covered = false;
      for (size_t k = index[at] + 1; k < shown.size() && !covered; ++k) {
        if (shown[k].state.minimized) continue;
        const rect o = outer(shown[k]);
        covered = mid.x >= o.x && mid.x < o.x + o.w && mid.y >= o.y && mid.y < o.y + o.h;
      }
      if (!covered) controls_->push_back(std::move(w));
    }
  }

  std::shared_ptr<std::vector<title_bar>> out_;
  std::shared_ptr<std::vector<control_window>> controls_;
  view_ptr view_;
};

class list_displays final : public desktop_op {
 public:
  explicit list_displays(std::optional<rect> area) : area_(area) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    std::vector<monitor> monitors = list_monitors(d.conn, d.root);
    reply_ptr<xcb_get_geometry_reply_t> g(
        xcb_get_geometry_reply(d.conn, xcb_get_geometry(d.conn, d.root), nullptr));
    if (!g) return fail("lost the connection to the X display");
    std::string chosen = "auto";
    std::string out;
    json_writer j(out);
    j.begin_object().key("displays").begin_array();
    for (size_t i = 0; i < monitors.size(); ++i) {
      const monitor& m = monitors[i];
      bool is_chosen = area_ && *area_ == m.geometry && chosen == "auto";
      if (is_chosen) chosen = m.name;
      j.begin_object().key("index").number(int64_t(i)).key("name").string(m.name).key("device");
      write_rect(j, m.geometry);
      j.key("primary").boolean(m.primary).key("chosen").boolean(is_chosen).end_object();
    }
    j.end_array().key("chosen").string(chosen);
    j.key("screen").begin_object().key("width").number(int64_t(g->width));
    j.key("height").number(int64_t(g->height)).end_object();
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  std::optional<desktop_result> on_wake(desktop_context&) override { return std::nullopt; }

 private:
  std::optional<rect> area_;
};

class focus_allowed final : public desktop_op {
 public:
  focus_allowed(view_ptr view, std::string doing) : view_(std::move(view)), doing_(std::move(doing)) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    if (!view_ || !view_->filtering()) return desktop_result{tool_result::text(""), {}};
    if (d.apps == nullptr) return fail("lost the connection to the X display");
    auto focus = d.apps->of_focus();
    if (!focus) return fail(str_cat(doing_, " was refused: ", focus.err().message));
    if (!*focus) {
      return fail(str_cat(doing_, " was refused: no window has the keyboard focus, so no "
                                  "granted application is known to read the controller; "
                                  "focus_window or open_application a granted one first"));
    }
    const grant_view::verdict v = view_->judge(**focus);
    if (v == grant_view::verdict::allowed) return desktop_result{tool_result::text(""), {}};
    return fail(view_->refusal(doing_, "the keyboard focus is on", **focus, v));
  }

  std::optional<desktop_result> on_wake(desktop_context&) override { return std::nullopt; }

 private:
  view_ptr view_;
  std::string doing_;
};

// window_at: the stacking order read once, every window described in two
// round trips, then the topmost shown one whose frame holds the point.
class window_at final : public desktop_op {
 public:
  window_at(double x, double y, std::optional<coord_session> session, std::optional<rect> area,
            view_ptr view)
      : x_(x), y_(y), session_(session), area_(area), view_(std::move(view)) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    coord_session s = basis(d, session_, area_);
    auto p = image_to_device(s, x_, y_);
    if (!p) {
      return desktop_result{
          tool_result::failure(str_cat("Invalid argument \"coordinate\": ", p.err().message)), {}};
    }
    std::vector<window_details> windows =
        describe_windows(d.conn, *d.atoms, d.root, list_client_windows(d.conn, *d.atoms, d.root));
    const window_details* hit = nullptr;
    for (auto w = windows.rbegin(); w != windows.rend() && hit == nullptr; ++w) {
      if (!w->info.viewable || w->state.minimized) continue;
      const int left = w->device.x - w->border - w->frame.left;
      const int top = w->device.y - w->border - w->frame.top;
      const int right = w->device.x + w->device.w + w->border + w->frame.right;
      const int bottom = w->device.y + w->device.h + w->border + w->frame.bottom;
      if (p->x >= left && p->x < right && p->y >= top && p->y < bottom) hit = &*w;
    }
    std::string out;
    json_writer j(out);
    j.begin_object().key("point").begin_object().key("x").number(int64_t(p->x));
    j.key("y").number(int64_t(p->y)).end_object().key("window");
    if (hit == nullptr) {
      j.null();
    } else {
      std::optional<bool> granted;
      if (view_ && view_->filtering()) granted = window_allowed(d, view_, hit->info.id);
      j.begin_object();
      write_window_identity(j, *hit, s, granted);
      j.end_object();
    }
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  std::optional<desktop_result> on_wake(desktop_context&) override { return std::nullopt; }

 private:
  double x_, y_;
  std::optional<coord_session> session_;
  std::optional<rect> area_;
  view_ptr view_;
};

}  // namespace

bool window_allowed(desktop_context& d, const view_ptr& view, xcb_window_t w) {
  if (!view || !view->filtering()) return true;
  return view->allows(identity_of(d, w));
}

void withhold_titles(desktop_context& d, const view_ptr& view, std::vector<window_info>& windows) {
  if (!view || !view->filtering()) return;
  for (window_info& w : windows) {
    if (!window_allowed(d, view, w.id)) w.title.clear();
  }
}

std::optional<desktop_result> refuse_window(desktop_context& d, const view_ptr& view,
                                            xcb_window_t w, std::string_view doing) {
  if (!view || !view->filtering()) return std::nullopt;
  const app_identity a = identity_of(d, w);
  const grant_view::verdict v = view->judge(a);
  if (v == grant_view::verdict::allowed) return std::nullopt;
  return fail(view->refusal(doing, str_cat("window ", window_id_text(w), " is"), a, v));
}

std::unique_ptr<desktop_op> make_window_at(double x, double y,
                                           std::optional<coord_session> session,
                                           std::optional<rect> area, view_ptr view) {
  return std::make_unique<window_at>(x, y, session, area, std::move(view));
}

std::unique_ptr<desktop_op> make_list_windows(std::string app, std::string title,
                                              int max_windows,
                                              std::optional<coord_session> session,
                                              std::optional<rect> area, view_ptr view) {
  return std::make_unique<list_windows>(std::move(app), std::move(title), max_windows, session,
                                        area, std::move(view));
}

std::unique_ptr<desktop_op> make_focus_window(xcb_window_t id, std::string app, view_ptr view) {
  return std::make_unique<focus_window>(id, std::move(app), std::move(view));
}

std::unique_ptr<desktop_op> make_set_window_geometry(xcb_window_t id, geometry_request req,
                                                     std::optional<coord_session> session,
                                                     std::optional<rect> area, view_ptr view) {
  return std::make_unique<set_window_geometry>(id, req, session, area, std::move(view));
}

std::unique_ptr<desktop_op> make_set_window_state(xcb_window_t id, window_state_change change,
                                                  bool enable, view_ptr view) {
  return std::make_unique<set_window_state>(id, change, enable, std::move(view));
}

std::unique_ptr<desktop_op> make_close_window(xcb_window_t id, bool force, view_ptr view) {
  return std::make_unique<close_window>(id, force, std::move(view));
}

std::unique_ptr<desktop_op> make_title_bars(std::shared_ptr<std::vector<title_bar>> out,
                                            std::shared_ptr<std::vector<control_window>> controls,
                                            view_ptr view) {
  return std::make_unique<title_bars>(std::move(out), std::move(controls), std::move(view));
}

std::unique_ptr<desktop_op> make_focus_allowed(view_ptr view, std::string doing) {
  return std::make_unique<focus_allowed>(std::move(view), std::move(doing));
}

std::unique_ptr<desktop_op> make_list_displays(std::optional<rect> area) {
  return std::make_unique<list_displays>(area);
}

}  // namespace cu
