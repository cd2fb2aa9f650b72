#include "x11/windows.h"

#include <algorithm>
#include <variant>
#include <cctype>
#include <cstdio>

#include "util/ascii.h"
#include "x11/connection.h"

namespace cu {
namespace {

// The value of a property as bytes, or "" when absent.
std::string property_bytes(xcb_connection_t* c, xcb_get_property_cookie_t cookie) {
  reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(c, cookie, nullptr));
  if (!r || r->format != 8) return {};
  return std::string(static_cast<const char*>(xcb_get_property_value(r.get())),
                     size_t(xcb_get_property_value_length(r.get())));
}

std::vector<xcb_window_t> window_list(xcb_connection_t* c, xcb_window_t root, xcb_atom_t prop) {
  reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(
      c, xcb_get_property(c, 0, root, prop, XCB_ATOM_WINDOW, 0, 1 << 16), nullptr));
  std::vector<xcb_window_t> out;
  if (!r || r->format != 32 || r->type != XCB_ATOM_WINDOW) return out;
  auto* w = static_cast<const xcb_window_t*>(xcb_get_property_value(r.get()));
  out.assign(w, w + xcb_get_property_value_length(r.get()) / 4);
  return out;
}

std::vector<xcb_window_t> children(xcb_connection_t* c, xcb_window_t w) {
  reply_ptr<xcb_query_tree_reply_t> t(xcb_query_tree_reply(c, xcb_query_tree(c, w), nullptr));
  std::vector<xcb_window_t> out;
  if (!t) return out;
  auto* k = xcb_query_tree_children(t.get());
  out.assign(k, k + xcb_query_tree_children_length(t.get()));
  return out;
}

}  // namespace

std::string window_id_text(xcb_window_t w) {
  char buf[16];
  snprintf(buf, sizeof buf, "0x%x", unsigned(w));
  return buf;
}

std::vector<window_info> list_client_windows(xcb_connection_t* c, const x11_atoms& a,
                                             xcb_window_t root) {
  std::vector<xcb_window_t> ids = window_list(c, root, a._NET_CLIENT_LIST_STACKING);
  if (ids.empty()) ids = window_list(c, root, a._NET_CLIENT_LIST);
  if (ids.empty()) {
    // No EWMH window manager: clients are the root's children that carry
    // WM_CLASS, or, under a reparenting manager, the frames' WM_STATE
    // children. Override-redirect windows (menus, tooltips) are not clients.
    // Two rounds of requests sent together, so the cost does not grow a
    // round trip per window: the root's children, then their children.
    const std::vector<xcb_window_t> tops = children(c, root);
    struct top_cookies {
      xcb_get_window_attributes_cookie_t attrs;
      xcb_get_property_cookie_t cls;
      xcb_query_tree_cookie_t tree;
    };
    std::vector<top_cookies> tc;
    tc.reserve(tops.size());
    for (xcb_window_t w : tops) {
      tc.push_back({xcb_get_window_attributes(c, w),
                    xcb_get_property(c, 0, w, XCB_ATOM_WM_CLASS, XCB_GET_PROPERTY_TYPE_ANY, 0, 0),
                    xcb_query_tree(c, w)});
    }
    // In stacking order: a client, or the place of a frame's clients.
    std::vector<std::variant<xcb_window_t, std::vector<xcb_window_t>>> found;
    for (size_t i = 0; i < tops.size(); ++i) {
      reply_ptr<xcb_get_window_attributes_reply_t> at(
          xcb_get_window_attributes_reply(c, tc[i].attrs, nullptr));
      reply_ptr<xcb_get_property_reply_t> cls(xcb_get_property_reply(c, tc[i].cls, nullptr));
      reply_ptr<xcb_query_tree_reply_t> tree(xcb_query_tree_reply(c, tc[i].tree, nullptr));
      if (!at || at->override_redirect) continue;
      if (cls && cls->type != XCB_NONE) {
        found.emplace_back(tops[i]);
      } else if (tree) {
        auto* k = xcb_query_tree_children(tree.get());
        found.emplace_back(std::vector<xcb_window_t>(k, k + xcb_query_tree_children_length(tree.get())));
      }
    }
    std::vector<std::vector<xcb_get_property_cookie_t>> states(found.size());
    for (size_t i = 0; i < found.size(); ++i) {
      if (auto* kids = std::get_if<std::vector<xcb_window_t>>(&found[i])) {
        for (xcb_window_t k : *kids) {
          states[i].push_back(xcb_get_property(c, 0, k, a.WM_STATE, XCB_GET_PROPERTY_TYPE_ANY, 0, 0));
        }
      }
    }
    for (size_t i = 0; i < found.size(); ++i) {
      if (auto* w = std::get_if<xcb_window_t>(&found[i])) {
        ids.push_back(*w);
        continue;
      }
      const auto& kids = std::get<std::vector<xcb_window_t>>(found[i]);
      for (size_t j = 0; j < kids.size(); ++j) {
        reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(c, states[i][j], nullptr));
        if (r && r->type != XCB_NONE) ids.push_back(kids[j]);
      }
    }
  }
  // Ask for everything at once, then collect: one round trip's latency.
  struct cookies {
    xcb_get_property_cookie_t cls, net_name, name, pid, hints, protocols;
    xcb_get_window_attributes_cookie_t attrs;
  };
  std::vector<cookies> ck;
  ck.reserve(ids.size());
  for (xcb_window_t w : ids) {
    ck.push_back({xcb_get_property(c, 0, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 0, 256),
                  xcb_get_property(c, 0, w, a._NET_WM_NAME, a.UTF8_STRING, 0, 1024),
                  xcb_get_property(c, 0, w, XCB_ATOM_WM_NAME, XCB_GET_PROPERTY_TYPE_ANY, 0, 1024),
                  xcb_get_property(c, 0, w, a._NET_WM_PID, XCB_ATOM_CARDINAL, 0, 1),
                  xcb_get_property(c, 0, w, XCB_ATOM_WM_HINTS, XCB_ATOM_WM_HINTS, 0, 9),
                  xcb_get_property(c, 0, w, a.WM_PROTOCOLS, XCB_ATOM_ATOM, 0, 64),
                  xcb_get_window_attributes(c, w)});
  }
  std::vector<window_info> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    window_info info;
    info.id = ids[i];
    std::string cls = property_bytes(c, ck[i].cls);
    size_t nul = cls.find('\0');
    info.instance = cls.substr(0, nul);
    if (nul != std::string::npos) {
      std::string rest = cls.substr(nul + 1);
      info.cls = rest.substr(0, rest.find('\0'));
    }
    info.title = property_bytes(c, ck[i].net_name);
    std::string name = property_bytes(c, ck[i].name);
    if (info.title.empty()) info.title = name;
    reply_ptr<xcb_get_property_reply_t> pid(xcb_get_property_reply(c, ck[i].pid, nullptr));
    if (pid && pid->format == 32 && xcb_get_property_value_length(pid.get()) >= 4) {
      info.pid = *static_cast<const uint32_t*>(xcb_get_property_value(pid.get()));
    }
    reply_ptr<xcb_get_property_reply_t> hints(xcb_get_property_reply(c, ck[i].hints, nullptr));
    reply_ptr<xcb_get_property_reply_t> protocols(
        xcb_get_property_reply(c, ck[i].protocols, nullptr));
    if (hints && hints->format == 32 && xcb_get_property_value_length(hints.get()) >= 8) {
      auto* h = static_cast<const uint32_t*>(xcb_get_property_value(hints.get()));
      constexpr uint32_t kInputHint = 1;
      if ((h[0] & kInputHint) != 0 && h[1] == 0) info.takes_focus = false;
    }
    if (!info.takes_focus && protocols && protocols->format == 32) {
      auto* p = static_cast<const xcb_atom_t*>(xcb_get_property_value(protocols.get()));
      int n = xcb_get_property_value_length(protocols.get()) / 4;
      info.takes_focus = std::find(p, p + n, a.WM_TAKE_FOCUS) != p + n;
    }
    reply_ptr<xcb_get_window_attributes_reply_t> at(
        xcb_get_window_attributes_reply(c, ck[i].attrs, nullptr));
    if (!at) continue;  // Gone meanwhile.
    info.viewable = at->map_state == XCB_MAP_STATE_VIEWABLE;
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<window_info> match_window(const std::vector<window_info>& windows,
                                        std::string_view app) {
  std::string want = ascii_lower(app);
  if (want.empty()) return std::nullopt;
  auto rank = [&](const window_info& w) -> int {
    std::string inst = ascii_lower(w.instance), cls = ascii_lower(w.cls), title = ascii_lower(w.title);
    if (inst == want || cls == want) return 0;
    if (title == want) return 1;
    if (inst.find(want) != std::string::npos || cls.find(want) != std::string::npos) return 2;
    if (title.find(want) != std::string::npos) return 3;
    return -1;
  };
  const window_info* best = nullptr;
  int best_rank = 99;
  for (const window_info& w : windows) {
    int r = rank(w);
    if (r < 0) continue;
    // Later windows are higher in the stacking order, so ">=" lets the
    // topmost of equals win; a viewable window beats a hidden one.
    bool better = r < best_rank ||
                  (r == best_rank && (w.viewable || !best->viewable));
    if (better) {
      best = &w;
      best_rank = r;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

void request_activation(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root,
                        xcb_window_t w) {
  xcb_client_message_event_t ev{};
  ev.response_type = XCB_CLIENT_MESSAGE;
  ev.format = 32;
  ev.window = w;
  ev.type = a._NET_ACTIVE_WINDOW;
  ev.data.data32[0] = 2;  // Source indication: a pager, which WMs obey without focus-stealing checks.
  ev.data.data32[1] = XCB_CURRENT_TIME;
  ev.data.data32[2] = 0;
  xcb_send_event(c, 0, root,
                 XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
                 reinterpret_cast<const char*>(&ev));
  xcb_flush(c);
}

bool focus_directly(xcb_connection_t* c, xcb_window_t w) {
  reply_ptr<xcb_get_window_attributes_reply_t> at(
      xcb_get_window_attributes_reply(c, xcb_get_window_attributes(c, w), nullptr));
  if (!at) return false;
  if (at->map_state == XCB_MAP_STATE_UNMAPPED) {
    xcb_map_window(c, w);
    // Focus needs a viewable window; the map is done once the server has
    // answered anything asked after it.
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr));
  }
  const uint32_t above = XCB_STACK_MODE_ABOVE;
  xcb_configure_window(c, w, XCB_CONFIG_WINDOW_STACK_MODE, &above);
  xcb_void_cookie_t ck =
      xcb_set_input_focus_checked(c, XCB_INPUT_FOCUS_PARENT, w, XCB_CURRENT_TIME);
  if (xcb_generic_error_t* e = xcb_request_check(c, ck)) {
    free(e);  // Not viewable (an unmapped parent, say).
    return false;
  }
  return focused_window(c) == w;
}

xcb_window_t active_window(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root) {
  std::vector<xcb_window_t> w = window_list(c, root, a._NET_ACTIVE_WINDOW);
  return w.empty() ? 0 : w[0];
}

xcb_window_t focused_window(xcb_connection_t* c) {
  reply_ptr<xcb_get_input_focus_reply_t> f(
      xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr));
  return f ? f->focus : 0;
}

}  // namespace cu
