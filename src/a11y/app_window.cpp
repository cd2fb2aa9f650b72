#include "a11y/app_window.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "util/str_cat.h"
#include "x11/window_control.h"
#include "x11/windows.h"

namespace cu {

status app_windows::connect() {
  if (conn_ && !xcb_connection_has_error(conn_.get())) return {};
  conn_.reset();
  atoms_.reset();
  int screen = 0;
  auto c = x11_connect(display_, &screen);
  if (!c) return c.err();
  xcb_screen_t* s = x11_screen(c->get(), screen);
  if (s == nullptr) return make_error(errc::x_unavailable, "the X display has no screen " + std::to_string(screen));
  auto a = intern_atoms(c->get());
  if (!a) return a.err();
  root_ = s->root;
  atoms_ = *a;
  conn_ = std::move(*c);
  return {};
}

result<std::optional<app_window>> app_windows::find(int pid,
                                                    const std::vector<a11y_window_hint>& hints) {
  if (auto e = connect(); !e) return e.take_error();
  xcb_connection_t* c = conn_.get();
  std::vector<window_info> all = list_client_windows(c, *atoms_, root_);
  std::vector<window_info> mine;
  for (const window_info& w : all) {
    if (w.viewable && pid > 0 && w.pid == uint32_t(pid)) mine.push_back(w);
  }
  // A program that does not set _NET_WM_PID: its windows by title.
  if (mine.empty()) {
    for (const window_info& w : all) {
      if (!w.viewable) continue;
      for (const a11y_window_hint& h : hints) {
        if (!h.title.empty() && w.title == h.title) mine.push_back(w);
      }
    }
  }
  if (mine.empty()) return std::optional<app_window>();
  std::vector<window_details> details = describe_windows(c, *atoms_, root_, mine);
  if (details.empty()) return std::optional<app_window>();
  // How well a window agrees with a hint: its title, and how close its
  // area is to the hint's frame (GTK's frame is the window's content area,
  // or that with its client-side shadow).
  auto score = [](const window_details& d, const a11y_window_hint& h) {
    int s = 0;
    if (!h.title.empty() && d.info.title == h.title) s += 4;
    if (h.frame) {
      const rect& f = *h.frame;
      if (f.x == d.device.x && f.y == d.device.y && f.w == d.device.w &&
          f.h == d.device.h) {
        s += 4;
      } else if (std::abs(f.x - d.device.x) < 64 && std::abs(f.y - d.device.y) < 64) {
        s += 2;
      }
    }
    if (h.active) s += 8;
    return s;
  };
  const window_details* best = &details.back();  // The topmost, when nothing else says.
  int best_score = -1;
  for (const a11y_window_hint& h : hints) {
    for (const window_details& d : details) {
      int s = score(d, h);
      if (s > best_score) {
        best_score = s;
        best = &d;
      }
    }
  }
  return std::optional<app_window>(app_window{best->info.id, best->info.title, best->device});
}

result<std::vector<window_details>> app_windows::shown_clients() {
  if (auto e = connect(); !e) return e.take_error();
  std::vector<window_info> shown;
  for (window_info& w : list_client_windows(conn_.get(), *atoms_, root_)) {
    if (w.viewable) shown.push_back(std::move(w));
  }
  std::vector<window_details> d = describe_windows(conn_.get(), *atoms_, root_, shown);
  std::erase_if(d, [](const window_details& w) { return w.state.minimized; });
  return d;
}

bool app_windows::root_names_a11y_bus() {
  if (!connect()) return false;
  xcb_connection_t* c = conn_.get();
  static constexpr char kName[] = "AT_SPI_BUS";
  reply_ptr<xcb_intern_atom_reply_t> atom(xcb_intern_atom_reply(
      c, xcb_intern_atom(c, 1, sizeof kName - 1, kName), nullptr));
  if (!atom || atom->atom == XCB_NONE) return false;
  reply_ptr<xcb_get_property_reply_t> p(xcb_get_property_reply(
      c, xcb_get_property(c, 0, root_, atom->atom, XCB_GET_PROPERTY_TYPE_ANY, 0, 1), nullptr));
  return p && p->type != XCB_NONE;
}

result<bool> app_windows::focus(uint32_t w, const std::function<bool()>& stop, int wait_ms) {
  if (auto e = connect(); !e) return e.take_error();
  xcb_connection_t* c = conn_.get();
  auto has_focus = [&] {
    xcb_window_t f = focused_window(c);
    if (f == w) return true;
    // Under a window manager the focus may sit on a child of w (a focus
    // proxy); _NET_ACTIVE_WINDOW then names w.
    return active_window(c, *atoms_, root_) == w && f != XCB_NONE && f != root_;
  };
  if (has_focus()) return true;
  if (window_manager_name(c, *atoms_, root_)) {
    request_activation(c, *atoms_, root_, w);
    xcb_flush(c);
  } else if (focus_directly(c, w)) {
    return true;
  }
  for (int waited = 0; waited < wait_ms; waited += 10) {
    if (has_focus()) return true;
    if (stop && stop()) return false;
    usleep(10000);
  }
  return has_focus();
}

}  // namespace cu
