#include "x11/window_control.h"

#include <algorithm>

#include "util/str_cat.h"
#include "x11/connection.h"

namespace cu {
namespace {

constexpr uint32_t kIconicState = 3;  // ICCCM 4.1.3.1.

using property_reply = reply_ptr<xcb_get_property_reply_t>;

property_reply get_reply(xcb_connection_t* c, xcb_get_property_cookie_t ck) {
  return property_reply(xcb_get_property_reply(c, ck, nullptr));
}

// A format-32 property's values (empty when absent or of another format).
std::vector<uint32_t> values32(const property_reply& r) {
  if (!r || r->format != 32) return {};
  auto* v = static_cast<const uint32_t*>(xcb_get_property_value(r.get()));
  return std::vector<uint32_t>(v, v + xcb_get_property_value_length(r.get()) / 4);
}

bool contains(const std::vector<uint32_t>& v, uint32_t x) {
  return x != 0 && std::find(v.begin(), v.end(), x) != v.end();
}

xcb_window_t first_window(xcb_connection_t* c, xcb_window_t w, xcb_atom_t prop) {
  std::vector<uint32_t> v =
      values32(get_reply(c, xcb_get_property(c, 0, w, prop, XCB_ATOM_WINDOW, 0, 1)));
  return v.empty() ? XCB_NONE : v[0];
}

// The window of a running EWMH manager (its _NET_SUPPORTING_WM_CHECK names
// itself), or None.
xcb_window_t wm_check_window(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root) {
  xcb_window_t check = first_window(c, root, a._NET_SUPPORTING_WM_CHECK);
  if (check == XCB_NONE) return XCB_NONE;
  return first_window(c, check, a._NET_SUPPORTING_WM_CHECK) == check ? check : XCB_NONE;
}

}  // namespace

std::vector<window_details> describe_windows(xcb_connection_t* c, const x11_atoms& a,
                                             xcb_window_t root,
                                             const std::vector<window_info>& windows) {
  struct cookies {
    xcb_get_geometry_cookie_t geometry;
    xcb_translate_coordinates_cookie_t origin;
    xcb_get_property_cookie_t extents, state, wm_state, desktop, type, transient;
  };
  std::vector<cookies> ck;
  ck.reserve(windows.size());
  for (const window_info& w : windows) {
    ck.push_back({xcb_get_geometry(c, w.id), xcb_translate_coordinates(c, w.id, root, 0, 0),
                  xcb_get_property(c, 0, w.id, a._NET_FRAME_EXTENTS, XCB_ATOM_CARDINAL, 0, 4),
                  xcb_get_property(c, 0, w.id, a._NET_WM_STATE, XCB_ATOM_ATOM, 0, 64),
                  xcb_get_property(c, 0, w.id, a.WM_STATE, a.WM_STATE, 0, 2),
                  xcb_get_property(c, 0, w.id, a._NET_WM_DESKTOP, XCB_ATOM_CARDINAL, 0, 1),
                  xcb_get_property(c, 0, w.id, a._NET_WM_WINDOW_TYPE, XCB_ATOM_ATOM, 0, 16),
                  xcb_get_property(c, 0, w.id, XCB_ATOM_WM_TRANSIENT_FOR, XCB_ATOM_WINDOW, 0, 1)});
  }
  std::vector<window_details> out;
  out.reserve(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    reply_ptr<xcb_get_geometry_reply_t> g(xcb_get_geometry_reply(c, ck[i].geometry, nullptr));
    reply_ptr<xcb_translate_coordinates_reply_t> o(
        xcb_translate_coordinates_reply(c, ck[i].origin, nullptr));
    std::vector<uint32_t> extents = values32(get_reply(c, ck[i].extents));
    std::vector<uint32_t> state = values32(get_reply(c, ck[i].state));
    std::vector<uint32_t> wm_state = values32(get_reply(c, ck[i].wm_state));
    std::vector<uint32_t> desktop = values32(get_reply(c, ck[i].desktop));
    std::vector<uint32_t> type = values32(get_reply(c, ck[i].type));
    std::vector<uint32_t> transient = values32(get_reply(c, ck[i].transient));
    if (!g || !o) continue;  // Gone meanwhile.
    window_details d;
    d.info = windows[i];
    d.device = rect{o->dst_x, o->dst_y, g->width, g->height};
    d.border = g->border_width;
    if (extents.size() == 4) {
      d.frame = frame_extents{int(extents[0]), int(extents[1]), int(extents[2]), int(extents[3])};
    }
    d.state.minimized = contains(state, a._NET_WM_STATE_HIDDEN) ||
                        (!wm_state.empty() && wm_state[0] == kIconicState) ||
                        (wm_state.empty() && !d.info.viewable);
    d.state.maximized = contains(state, a._NET_WM_STATE_MAXIMIZED_VERT) &&
                        contains(state, a._NET_WM_STATE_MAXIMIZED_HORZ);
    d.state.fullscreen = contains(state, a._NET_WM_STATE_FULLSCREEN);
    d.state.above = contains(state, a._NET_WM_STATE_ABOVE);
    if (!desktop.empty()) d.desktop = desktop[0];
    // The first type this server knows; a window without one is normal, or
    // a dialog when it is transient for another (EWMH).
    for (uint32_t t : type) {
      for (size_t k = 0; k < std::size(a.window_types) && d.type.empty(); ++k) {
        if (t == a.window_types[k]) d.type = kWindowTypeNames[k];
      }
    }
    if (!transient.empty()) d.transient_for = transient[0];
    if (d.type.empty()) d.type = d.transient_for != XCB_NONE ? "dialog" : "normal";
    out.push_back(std::move(d));
  }
  return out;
}

result<window_details> find_client_window(xcb_connection_t* c, const x11_atoms& a,
                                          xcb_window_t root, xcb_window_t id) {
  if (auto why = client_window_refusal(c, a, root, id)) {
    return make_error(errc::invalid_argument, std::move(*why));
  }
  std::vector<window_info> info = describe_clients(c, a, {id});
  std::vector<window_details> d;
  if (!info.empty()) d = describe_windows(c, a, root, info);
  if (d.empty()) {
    return make_error(errc::x_failed, str_cat("no window ", window_id_text(id),
                                              ": it is gone (closed)"));
  }
  return std::move(d[0]);
}

std::optional<std::string> window_manager_name(xcb_connection_t* c, const x11_atoms& a,
                                               xcb_window_t root) {
  xcb_window_t check = wm_check_window(c, a, root);
  if (check == XCB_NONE) return std::nullopt;
  property_reply r =
      get_reply(c, xcb_get_property(c, 0, check, a._NET_WM_NAME, a.UTF8_STRING, 0, 256));
  if (!r || r->format != 8) return std::string();
  return std::string(static_cast<const char*>(xcb_get_property_value(r.get())),
                     size_t(xcb_get_property_value_length(r.get())));
}

bool wm_supports(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root, xcb_atom_t hint) {
  if (wm_check_window(c, a, root) == XCB_NONE) return false;
  return contains(
      values32(get_reply(c, xcb_get_property(c, 0, root, a._NET_SUPPORTED, XCB_ATOM_ATOM, 0, 4096))),
      hint);
}

bool supports_protocol(xcb_connection_t* c, const x11_atoms& a, xcb_window_t w,
                       xcb_atom_t protocol) {
  return contains(
      values32(get_reply(c, xcb_get_property(c, 0, w, a.WM_PROTOCOLS, XCB_ATOM_ATOM, 0, 64))),
      protocol);
}

void send_to_window_manager(xcb_connection_t* c, xcb_window_t root, xcb_window_t w,
                            xcb_atom_t type, const std::array<uint32_t, 5>& data) {
  xcb_client_message_event_t ev{};
  ev.response_type = XCB_CLIENT_MESSAGE;
  ev.format = 32;
  ev.window = w;
  ev.type = type;
  std::copy(data.begin(), data.end(), ev.data.data32);
  xcb_send_event(c, 0, root,
                 XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
                 reinterpret_cast<const char*>(&ev));
  xcb_flush(c);
}

std::optional<rect> window_area(xcb_connection_t* c, xcb_window_t root, xcb_window_t w) {
  auto gc = xcb_get_geometry(c, w);
  auto oc = xcb_translate_coordinates(c, w, root, 0, 0);
  reply_ptr<xcb_get_geometry_reply_t> g(xcb_get_geometry_reply(c, gc, nullptr));
  reply_ptr<xcb_translate_coordinates_reply_t> o(xcb_translate_coordinates_reply(c, oc, nullptr));
  if (!g || !o) return std::nullopt;
  return rect{o->dst_x, o->dst_y, g->width, g->height};
}

std::vector<xcb_window_t> focus_chain(xcb_connection_t* c, xcb_window_t root) {
  std::vector<xcb_window_t> out;
  xcb_window_t w = focused_window(c);
  // None is 0 and PointerRoot is 1: neither is a window.
  while (w > 1 && w != root && out.size() < 64) {
    out.push_back(w);
    reply_ptr<xcb_query_tree_reply_t> t(xcb_query_tree_reply(c, xcb_query_tree(c, w), nullptr));
    if (!t) break;
    w = t->parent;
  }
  return out;
}

}  // namespace cu
