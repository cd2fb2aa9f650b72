#include "x11/windows.h"

#include <algorithm>
#include <variant>
#include <cctype>
#include <cstdio>
#include <unordered_set>

#include "util/ascii.h"
#include "util/str_cat.h"
#include "x11/connection.h"
#include "x11/request.h"

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

namespace {

bool is_a_root(xcb_connection_t* c, xcb_window_t w) {
  for (auto it = xcb_setup_roots_iterator(xcb_get_setup(c)); it.rem; xcb_screen_next(&it)) {
    if (it.data->root == w) return true;
  }
  return false;
}

// What the vetting learns of one window.
struct window_facts {
  const char* refusal = nullptr;  // Why it is no application's window; null: it may be one.
  xcb_window_t parent = XCB_NONE;
  bool parent_is_root = false;
  bool has_class = false;         // WM_CLASS is set.
};

// Whatever names them (a client list any client may write, the tree), these
// windows are no application's: the root, our own connections' windows,
// override-redirect and InputOnly windows, a window inside another that no
// manager manages (no WM_STATE), and an unmapped window that nothing marks as
// a client (neither WM_CLASS nor WM_STATE). One round of requests for all.
std::vector<window_facts> vet(xcb_connection_t* c, const x11_atoms& a,
                              const std::vector<xcb_window_t>& ids) {
  struct cookies {
    xcb_get_window_attributes_cookie_t attrs;
    xcb_query_tree_cookie_t tree;
    xcb_get_property_cookie_t state, cls;
  };
  std::vector<window_facts> out(ids.size());
  std::vector<cookies> ck(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (is_a_root(c, ids[i])) {
      out[i].refusal = "is the root window (the whole screen)";
    } else if (x11_ours(ids[i])) {
      out[i].refusal = "is this server's own window (its clipboard window)";
    } else {
      ck[i] = {xcb_get_window_attributes(c, ids[i]), xcb_query_tree(c, ids[i]),
               xcb_get_property(c, 0, ids[i], a.WM_STATE, XCB_GET_PROPERTY_TYPE_ANY, 0, 0),
               xcb_get_property(c, 0, ids[i], XCB_ATOM_WM_CLASS, XCB_GET_PROPERTY_TYPE_ANY, 0, 0)};
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (out[i].refusal != nullptr) continue;
    reply_ptr<xcb_get_window_attributes_reply_t> at(
        xcb_get_window_attributes_reply(c, ck[i].attrs, nullptr));
    reply_ptr<xcb_query_tree_reply_t> tree(xcb_query_tree_reply(c, ck[i].tree, nullptr));
    reply_ptr<xcb_get_property_reply_t> state(xcb_get_property_reply(c, ck[i].state, nullptr));
    reply_ptr<xcb_get_property_reply_t> cls(xcb_get_property_reply(c, ck[i].cls, nullptr));
    window_facts& f = out[i];
    const bool has_state = state && state->type != XCB_NONE;
    f.has_class = cls && cls->type != XCB_NONE;
    if (!at || !tree) {
      f.refusal = "does not exist (it was closed)";
      continue;
    }
    f.parent = tree->parent;
    f.parent_is_root = tree->parent == tree->root;
    if (at->override_redirect) {
      f.refusal = "is an override-redirect window (a menu, tooltip or popup no window manager "
                  "manages)";
    } else if (at->_class == XCB_WINDOW_CLASS_INPUT_ONLY) {
      f.refusal = "is an InputOnly window (it has no pixels)";
    } else if (!f.parent_is_root && !has_state) {
      f.refusal = "is not a top-level window (it lies inside another window)";
    } else if (at->map_state == XCB_MAP_STATE_UNMAPPED && !f.has_class && !has_state) {
      f.refusal = "is unmapped and has neither WM_CLASS nor WM_STATE";
    }
  }
  return out;
}

// The EWMH client list, stacking order first; empty without one.
std::vector<xcb_window_t> ewmh_clients(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root) {
  std::vector<xcb_window_t> ids = window_list(c, root, a._NET_CLIENT_LIST_STACKING);
  if (ids.empty()) ids = window_list(c, root, a._NET_CLIENT_LIST);
  return ids;
}

std::string refusal_text(xcb_window_t w, std::string_view why) {
  return str_cat("window ", window_id_text(w), " is not an application's window: it ", why,
                 "; list_windows gives the ids of application windows");
}

}  // namespace

std::optional<std::string> client_window_refusal(xcb_connection_t* c, const x11_atoms& a,
                                                 xcb_window_t root, xcb_window_t w) {
  const window_facts f = vet(c, a, {w})[0];
  if (f.refusal != nullptr) {
    if (std::string_view(f.refusal).starts_with("does not")) {
      return str_cat("no window ", window_id_text(w),
                     ": it is gone (closed) or never was; list_windows gives the ids of "
                     "application windows");
    }
    return refusal_text(w, f.refusal);
  }
  std::vector<xcb_window_t> listed = ewmh_clients(c, a, root);
  if (!listed.empty()) {
    if (std::find(listed.begin(), listed.end(), w) != listed.end()) return std::nullopt;
    return refusal_text(w, "is not in the window manager's client list (_NET_CLIENT_LIST)");
  }
  // The ICCCM way, as list_client_windows finds clients without a list: a
  // root child with WM_CLASS, or (it has WM_STATE, or vet refused it) the
  // child of a root child that is a frame: not override-redirect, no WM_CLASS.
  if (f.parent_is_root) {
    if (f.has_class) return std::nullopt;
    return refusal_text(w, "has no WM_CLASS (no application's top-level window has none)");
  }
  reply_ptr<xcb_get_window_attributes_reply_t> pa(
      xcb_get_window_attributes_reply(c, xcb_get_window_attributes(c, f.parent), nullptr));
  reply_ptr<xcb_query_tree_reply_t> pt(
      xcb_query_tree_reply(c, xcb_query_tree(c, f.parent), nullptr));
  reply_ptr<xcb_get_property_reply_t> pc(xcb_get_property_reply(
      c, xcb_get_property(c, 0, f.parent, XCB_ATOM_WM_CLASS, XCB_GET_PROPERTY_TYPE_ANY, 0, 0),
      nullptr));
  if (pa && pt && !pa->override_redirect && pt->parent == pt->root && !(pc && pc->type != XCB_NONE)) {
    return std::nullopt;
  }
  return refusal_text(w, "is not a top-level window (it lies inside another window)");
}

std::vector<window_info> describe_clients(xcb_connection_t* c, const x11_atoms& a,
                                          const std::vector<xcb_window_t>& ids) {
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

std::vector<window_info> list_client_windows(xcb_connection_t* c, const x11_atoms& a,
                                             xcb_window_t root) {
  std::vector<xcb_window_t> ids = ewmh_clients(c, a, root);
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
  // A client list is any client's to write: an id named twice counts once
  // (where it is highest), and what the vetting refuses is left out.
  std::vector<xcb_window_t> unique;
  unique.reserve(ids.size());
  std::unordered_set<xcb_window_t> seen;
  for (size_t i = ids.size(); i-- > 0;) {
    if (seen.insert(ids[i]).second) unique.push_back(ids[i]);
  }
  std::reverse(unique.begin(), unique.end());
  std::vector<window_facts> facts = vet(c, a, unique);
  ids.clear();
  for (size_t i = 0; i < unique.size(); ++i) {
    if (facts[i].refusal == nullptr) ids.push_back(unique[i]);
  }
  return describe_clients(c, a, ids);
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
    x11_sync(c);
  }
  const uint32_t above = XCB_STACK_MODE_ABOVE;
  xcb_configure_window(c, w, XCB_CONFIG_WINDOW_STACK_MODE, &above);
  xcb_void_cookie_t ck =
      xcb_set_input_focus_checked(c, XCB_INPUT_FOCUS_PARENT, w, XCB_CURRENT_TIME);
  if (x11_check(c, ck)) return false;  // Not viewable (an unmapped parent, say).
  return focused_window(c) == w;
}

xcb_window_t active_window(xcb_connection_t* c, const x11_atoms& a, xcb_window_t root) {
  std::vector<xcb_window_t> w = window_list(c, root, a._NET_ACTIVE_WINDOW);
  return w.empty() ? 0 : w[0];
}

xcb_window_t focused_window(xcb_connection_t* c) {
  auto f = x11_await(c, xcb_get_input_focus(c), xcb_get_input_focus_reply, "GetInputFocus");
  return f ? (*f)->focus : 0;
}

}  // namespace cu
