#include "x11/app_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <unordered_set>

#include <xcb/shape.h>

#include "x11/connection.h"

namespace cu {
namespace {

// A frame holds its client this deep at most (openbox: one level; others
// add a plate or two), and a search looks at this many windows at most.
constexpr int kClientDepth = 3;
constexpr size_t kMostSearched = 64;
// More rectangles than this in what is hidden: each window's whole box is
// hidden instead (more than needed, never less).
constexpr size_t kMostRects = 4096;

std::string property_text(xcb_connection_t* c, xcb_get_property_cookie_t cookie) {
  reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(c, cookie, nullptr));
  if (!r || r->format != 8) return {};
  return std::string(static_cast<const char*>(xcb_get_property_value(r.get())),
                     size_t(xcb_get_property_value_length(r.get())));
}

std::optional<uint32_t> property_card(xcb_connection_t* c, xcb_get_property_cookie_t cookie) {
  reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(c, cookie, nullptr));
  if (!r || r->format != 32 || xcb_get_property_value_length(r.get()) < 4) return std::nullopt;
  return *static_cast<const uint32_t*>(xcb_get_property_value(r.get()));
}

// The first line of a small /proc file, or empty.
std::string read_small(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {};
  std::string s(buf, size_t(n));
  if (size_t nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

std::string exe_of(uint32_t pid) {
  char link[PATH_MAX];
  const std::string path = "/proc/" + std::to_string(pid) + "/exe";
  ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
  if (n <= 0) return {};
  std::string target(link, size_t(n));
  // A replaced executable reads "/usr/bin/x (deleted)".
  if (target.ends_with(" (deleted)")) target.resize(target.size() - 10);
  const size_t slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

// a minus b, as up to four rectangles.
void subtract(const rect& a, const rect& b, std::vector<rect>& out) {
  const rect i = intersect(a, b);
  if (i.w <= 0 || i.h <= 0) {
    out.push_back(a);
    return;
  }
  if (i.y > a.y) out.push_back({a.x, a.y, a.w, i.y - a.y});
  if (i.y + i.h < a.y + a.h) out.push_back({a.x, i.y + i.h, a.w, a.y + a.h - (i.y + i.h)});
  if (i.x > a.x) out.push_back({a.x, i.y, i.x - a.x, i.h});
  if (i.x + i.w < a.x + a.w) out.push_back({i.x + i.w, i.y, a.x + a.w - (i.x + i.w), i.h});
}

}  // namespace

app_identity process_identity(uint32_t pid, std::string_view name) {
  app_identity out;
  out.instance = std::string(name);
  if (pid != 0) {
    out.pid = pid;
    out.exe = exe_of(pid);
    out.comm = read_small("/proc/" + std::to_string(pid) + "/comm");
  }
  if (!out.instance.empty() || out.pid != 0) out.what = app_identity::kind::app;
  return out;
}

app_identifier::app_identifier(xcb_connection_t* c, xcb_window_t root) : c_(c), root_(root) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) host_ = host;
}

status app_identifier::ensure_atoms() {
  if (atoms_) return {};
  auto a = intern_atoms(c_);
  if (!a) return a.take_error();
  atoms_ = *a;
  return {};
}

bool app_identifier::read_names(xcb_window_t w, app_identity& out, int depth) {
  const x11_atoms& a = *atoms_;
  auto cls = xcb_get_property(c_, 0, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 0, 256);
  auto pid = xcb_get_property(c_, 0, w, a._NET_WM_PID, XCB_ATOM_CARDINAL, 0, 1);
  auto machine = xcb_get_property(c_, 0, w, XCB_ATOM_WM_CLIENT_MACHINE,
                                  XCB_GET_PROPERTY_TYPE_ANY, 0, 64);
  auto type = xcb_get_property(c_, 0, w, a._NET_WM_WINDOW_TYPE, XCB_ATOM_ATOM, 0, 1);
  auto transient = xcb_get_property(c_, 0, w, XCB_ATOM_WM_TRANSIENT_FOR, XCB_ATOM_WINDOW, 0, 1);
  auto leader = xcb_get_property(c_, 0, w, a.WM_CLIENT_LEADER, XCB_ATOM_WINDOW, 0, 1);
  const std::string wm_class = property_text(c_, cls);
  const std::optional<uint32_t> pid_value = property_card(c_, pid);
  const std::string host = property_text(c_, machine);
  const std::optional<uint32_t> type_atom = property_card(c_, type);
  const std::optional<uint32_t> transient_for = property_card(c_, transient);
  const std::optional<uint32_t> leader_window = property_card(c_, leader);

  out.window = w;
  // A dock (a panel) or the desktop window is the desktop's; its names are
  // read all the same, since the deny list outranks a declared type.
  const bool desktop_type =
      type_atom && (*type_atom == a.window_types[6] || *type_atom == a.window_types[7]);
  if (!wm_class.empty()) {
    const size_t nul = wm_class.find('\0');
    out.instance = wm_class.substr(0, nul);
    if (nul != std::string::npos) {
      std::string second = wm_class.substr(nul + 1);
      if (size_t end = second.find('\0'); end != std::string::npos) second.resize(end);
      out.cls = std::move(second);
    }
  }
  // A pid means a process on this machine only when the window says it
  // runs here (or says nothing of where it runs).
  if (pid_value && *pid_value != 0 && (host.empty() || host == host_)) {
    out.pid = *pid_value;
    out.exe = exe_of(out.pid);
    out.comm = read_small("/proc/" + std::to_string(out.pid) + "/comm");
  }
  if (desktop_type) {
    out.what = app_identity::kind::desktop;
    return true;
  }
  if (!out.instance.empty() || !out.cls.empty() || out.pid != 0) {
    out.what = app_identity::kind::app;
    return true;
  }
  // A popup that names nothing: the window it is for, or its group leader.
  if (depth < 2) {
    for (std::optional<uint32_t> other : {transient_for, leader_window}) {
      if (!other || *other == 0 || *other == w || *other == root_) continue;
      app_identity via;
      if (read_names(*other, via, depth + 1) && via.what == app_identity::kind::app) {
        via.window = w;
        out = std::move(via);
        return true;
      }
    }
  }
  return false;
}

app_identity app_identifier::identify_top(xcb_window_t top) {
  app_identity out;
  out.window = top;
  const x11_atoms& a = *atoms_;
  // The client: the window with WM_STATE, breadth first from the top.
  std::vector<xcb_window_t> level{top};
  size_t searched = 0;
  for (int depth = 0; depth <= kClientDepth && !level.empty(); ++depth) {
    std::vector<xcb_get_property_cookie_t> states;
    for (xcb_window_t w : level) {
      states.push_back(xcb_get_property(c_, 0, w, a.WM_STATE, a.WM_STATE, 0, 0));
    }
    std::optional<xcb_window_t> client;
    for (size_t i = 0; i < level.size(); ++i) {
      reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(c_, states[i], nullptr));
      if (!client && r && r->type == a.WM_STATE) client = level[i];
    }
    if (client) {
      if (!read_names(*client, out, 0)) out.window = *client;
      return out;
    }
    if (depth == kClientDepth) break;
    std::vector<xcb_window_t> next;
    std::vector<xcb_query_tree_cookie_t> trees;
    for (xcb_window_t w : level) trees.push_back(xcb_query_tree(c_, w));
    for (auto& ck : trees) {
      reply_ptr<xcb_query_tree_reply_t> t(xcb_query_tree_reply(c_, ck, nullptr));
      if (!t) continue;
      const xcb_window_t* kids = xcb_query_tree_children(t.get());
      for (int k = 0; k < xcb_query_tree_children_length(t.get()); ++k) {
        if (searched++ >= kMostSearched) break;
        next.push_back(kids[k]);
      }
    }
    level = std::move(next);
  }
  // No client inside: a window no manager manages (there is no window
  // manager, or it is override-redirect), which may name itself.
  const bool named = read_names(top, out, 0);
  if (named && (out.what == app_identity::kind::desktop || !out.instance.empty() ||
                !out.cls.empty())) {
    return out;
  }
  // Else, or named only by its process (GTK's clipboard window), it is
  // known by the X client that made it.
  if (std::optional<app_identity> kin = by_client(top)) {
    if (kin->what == app_identity::kind::desktop || !named) {
      kin->window = top;
      return *kin;
    }
    out.instance = kin->instance;
    out.cls = kin->cls;
  }
  return out;
}

std::optional<app_identity> app_identifier::by_client(xcb_window_t top) {
  // A window's id carries its client's resource base (the bits outside the
  // server's resource mask, the same for every connection): a menu of the
  // window manager's own is the desktop's, and a window that names nothing
  // belongs to the application whose client windows share its base.
  const x11_atoms& a = *atoms_;
  const uint32_t mask = xcb_get_setup(c_)->resource_id_mask;
  const uint32_t base = top & ~mask;
  reply_ptr<xcb_get_property_reply_t> check(xcb_get_property_reply(
      c_, xcb_get_property(c_, 0, root_, a._NET_SUPPORTING_WM_CHECK, XCB_ATOM_WINDOW, 0, 1),
      nullptr));
  if (check && check->format == 32 && xcb_get_property_value_length(check.get()) >= 4) {
    const uint32_t wm = *static_cast<const uint32_t*>(xcb_get_property_value(check.get()));
    if (wm != 0 && (wm & ~mask) == base) {
      app_identity d;
      d.what = app_identity::kind::desktop;
      return d;
    }
  }
  reply_ptr<xcb_query_tree_reply_t> tree(
      xcb_query_tree_reply(c_, xcb_query_tree(c_, root_), nullptr));
  if (!tree) return std::nullopt;
  const xcb_window_t* kids = xcb_query_tree_children(tree.get());
  const int n = xcb_query_tree_children_length(tree.get());
  // Topmost first; a frame is the window manager's, and its client, inside,
  // may share the base. Every top-level window is looked at, however many
  // there are (their trees asked for in one pipelined batch): a cap would
  // let windows stacked above a denied program's lift its popups' denial.
  std::vector<std::pair<xcb_window_t, xcb_query_tree_cookie_t>> frames;
  std::vector<xcb_window_t> candidates;
  for (int i = n - 1; i >= 0; --i) {
    if (kids[i] == top) continue;
    if ((kids[i] & ~mask) == base) {
      candidates.push_back(kids[i]);
    } else {
      frames.emplace_back(kids[i], xcb_query_tree(c_, kids[i]));
    }
  }
  for (auto& [frame, cookie] : frames) {
    reply_ptr<xcb_query_tree_reply_t> inner(xcb_query_tree_reply(c_, cookie, nullptr));
    if (!inner) continue;
    const xcb_window_t* in = xcb_query_tree_children(inner.get());
    for (int k = 0; k < xcb_query_tree_children_length(inner.get()); ++k) {
      if ((in[k] & ~mask) == base) candidates.push_back(in[k]);
    }
  }
  for (xcb_window_t w : candidates) {
    app_identity kin;
    if (read_names(w, kin, 1) && kin.what == app_identity::kind::app &&
        (!kin.instance.empty() || !kin.cls.empty())) {
      return kin;
    }
  }
  return std::nullopt;
}

result<xcb_window_t> app_identifier::top_of(xcb_window_t w) {
  for (int depth = 0; depth < 64; ++depth) {
    reply_ptr<xcb_query_tree_reply_t> t(xcb_query_tree_reply(c_, xcb_query_tree(c_, w), nullptr));
    if (!t) {
      if (xcb_connection_has_error(c_)) return make_error(errc::x_unavailable, "the X server went away");
      return make_error(errc::x_failed, "the window is gone");
    }
    if (t->parent == root_ || t->parent == XCB_NONE) return w;
    w = t->parent;
  }
  return w;
}

result<app_identity> app_identifier::at_point(point p) {
  if (auto s = ensure_atoms(); !s) return s.err();
  reply_ptr<xcb_translate_coordinates_reply_t> here(xcb_translate_coordinates_reply(
      c_, xcb_translate_coordinates(c_, root_, root_, int16_t(p.x), int16_t(p.y)), nullptr));
  if (!here) return make_error(errc::x_unavailable, "the X server went away");
  if (here->child == XCB_NONE) {
    app_identity d;
    d.what = app_identity::kind::desktop;
    d.window = root_;
    return d;
  }
  return identify_top(here->child);
}

result<std::optional<app_identity>> app_identifier::of_focus() {
  if (auto s = ensure_atoms(); !s) return s.err();
  reply_ptr<xcb_get_input_focus_reply_t> f(
      xcb_get_input_focus_reply(c_, xcb_get_input_focus(c_), nullptr));
  if (!f) return make_error(errc::x_unavailable, "the X server went away");
  if (f->focus == XCB_NONE) return std::optional<app_identity>();
  if (f->focus == XCB_INPUT_FOCUS_POINTER_ROOT) {
    reply_ptr<xcb_query_pointer_reply_t> q(
        xcb_query_pointer_reply(c_, xcb_query_pointer(c_, root_), nullptr));
    if (!q) return make_error(errc::x_unavailable, "the X server went away");
    auto a = at_point({q->root_x, q->root_y});
    if (!a) return a.take_error();
    return std::optional<app_identity>(std::move(*a));
  }
  if (f->focus == root_) {
    app_identity d;
    d.what = app_identity::kind::desktop;
    d.window = root_;
    return std::optional<app_identity>(d);
  }
  auto a = of_window(f->focus);
  if (!a) return a.take_error();
  return std::optional<app_identity>(std::move(*a));
}

bool app_identifier::changes_identity(const xcb_generic_event_t* ev) const {
  switch (ev->response_type & 0x7f) {
    case 0:  // An error: a watched window gone, say.
    case XCB_DESTROY_NOTIFY:
    case XCB_REPARENT_NOTIFY:
    case XCB_CREATE_NOTIFY:
      return true;
    case XCB_PROPERTY_NOTIFY: {
      if (!atoms_) return true;
      const auto* p = reinterpret_cast<const xcb_property_notify_event_t*>(ev);
      const x11_atoms& a = *atoms_;
      return p->atom == XCB_ATOM_WM_CLASS || p->atom == a._NET_WM_PID ||
             p->atom == XCB_ATOM_WM_CLIENT_MACHINE || p->atom == a._NET_WM_WINDOW_TYPE ||
             p->atom == XCB_ATOM_WM_TRANSIENT_FOR || p->atom == a.WM_CLIENT_LEADER ||
             p->atom == a.WM_STATE;
    }
    default:
      return false;
  }
}

result<app_identity> app_identifier::of_top(xcb_window_t top) {
  if (auto s = ensure_atoms(); !s) return s.err();
  app_identity a = identify_top(top);
  if (xcb_connection_has_error(c_)) return make_error(errc::x_unavailable, "the X server went away");
  return a;
}

result<app_identity> app_identifier::of_window(xcb_window_t w) {
  if (auto s = ensure_atoms(); !s) return s.err();
  auto top = top_of(w);
  if (!top) return top.take_error();
  return identify_top(*top);
}

result<std::vector<shown_window>> app_identifier::layout() {
  if (auto s = ensure_atoms(); !s) return s.err();
  reply_ptr<xcb_query_tree_reply_t> t(xcb_query_tree_reply(c_, xcb_query_tree(c_, root_), nullptr));
  if (!t) return make_error(errc::x_unavailable, "the X server went away");
  const xcb_window_t* kids = xcb_query_tree_children(t.get());
  const int n = xcb_query_tree_children_length(t.get());
  std::vector<xcb_get_window_attributes_cookie_t> attrs;
  std::vector<xcb_get_geometry_cookie_t> geoms;
  attrs.reserve(size_t(n));
  geoms.reserve(size_t(n));
  for (int i = 0; i < n; ++i) {
    attrs.push_back(xcb_get_window_attributes(c_, kids[i]));
    geoms.push_back(xcb_get_geometry(c_, kids[i]));
  }
  std::vector<shown_window> out;
  std::unordered_set<uint32_t> present;
  std::vector<int16_t> origin_x, origin_y;  // Of each shown window's own area.
  for (int i = 0; i < n; ++i) {
    reply_ptr<xcb_get_window_attributes_reply_t> at(
        xcb_get_window_attributes_reply(c_, attrs[size_t(i)], nullptr));
    reply_ptr<xcb_get_geometry_reply_t> g(xcb_get_geometry_reply(c_, geoms[size_t(i)], nullptr));
    if (!at || !g) continue;
    present.insert(kids[i]);
    // InputOnly windows show nothing; unmapped ones are not on the screen.
    if (at->map_state != XCB_MAP_STATE_VIEWABLE || at->_class == XCB_WINDOW_CLASS_INPUT_ONLY) {
      continue;
    }
    shown_window s;
    s.top = kids[i];
    s.box = {g->x, g->y, g->width + 2 * g->border_width, g->height + 2 * g->border_width};
    out.push_back(std::move(s));
    origin_x.push_back(int16_t(g->x + g->border_width));
    origin_y.push_back(int16_t(g->y + g->border_width));
  }
  // Shaped windows (SHAPE's bounding region): a window covers only its
  // shape, so what shows through its holes is judged as the window below.
  const xcb_query_extension_reply_t* shape = xcb_get_extension_data(c_, &xcb_shape_id);
  if (shape != nullptr && shape->present) {
    std::vector<xcb_shape_query_extents_cookie_t> extents;
    for (const shown_window& s : out) extents.push_back(xcb_shape_query_extents(c_, s.top));
    std::vector<std::pair<size_t, xcb_shape_get_rectangles_cookie_t>> shaped;
    for (size_t k = 0; k < out.size(); ++k) {
      reply_ptr<xcb_shape_query_extents_reply_t> e(
          xcb_shape_query_extents_reply(c_, extents[k], nullptr));
      if (e && e->bounding_shaped) {
        shaped.emplace_back(k, xcb_shape_get_rectangles(c_, out[k].top, XCB_SHAPE_SK_BOUNDING));
      }
    }
    for (auto& [k, cookie] : shaped) {
      reply_ptr<xcb_shape_get_rectangles_reply_t> r(
          xcb_shape_get_rectangles_reply(c_, cookie, nullptr));
      if (!r) continue;
      const xcb_rectangle_t* rs = xcb_shape_get_rectangles_rectangles(r.get());
      const int count = xcb_shape_get_rectangles_rectangles_length(r.get());
      std::vector<rect> parts;
      for (int q = 0; q < count; ++q) {
        rect part = intersect(rect{origin_x[k] + rs[q].x, origin_y[k] + rs[q].y, rs[q].width,
                                   rs[q].height},
                              out[k].box);
        if (part.w > 0 && part.h > 0) parts.push_back(part);
      }
      // A shape of nothing still marks the window shaped: it covers nothing.
      if (parts.empty()) parts.push_back(rect{out[k].box.x, out[k].box.y, 0, 0});
      if (parts.size() > kMostRects) continue;  // Too many pieces: its box.
      out[k].shape = std::move(parts);
    }
  }
  // Identities of windows no longer in the tree go. Those kept are checked
  // against what their windows say now, in one pipelined batch: a window id
  // X reused for another client's window, or a WM_CLASS, pid or window type
  // changed since, is identified afresh, never served from the cache.
  std::erase_if(cache_, [&](const auto& kv) { return present.count(kv.first) == 0; });
  const x11_atoms& a = *atoms_;
  struct check {
    shown_window* s;
    xcb_get_property_cookie_t cls, pid, type;
  };
  std::vector<check> checks;
  for (shown_window& s : out) {
    auto it = cache_.find(s.top);
    if (it == cache_.end()) continue;
    const xcb_window_t w = it->second.window;
    checks.push_back({&s, xcb_get_property(c_, 0, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 0, 256),
                      xcb_get_property(c_, 0, w, a._NET_WM_PID, XCB_ATOM_CARDINAL, 0, 1),
                      xcb_get_property(c_, 0, w, a._NET_WM_WINDOW_TYPE, XCB_ATOM_ATOM, 0, 1)});
  }
  for (check& k : checks) {
    const app_identity& known = cache_.at(k.s->top);
    const std::string cls = property_text(c_, k.cls);
    const uint32_t pid = property_card(c_, k.pid).value_or(0);
    const std::optional<uint32_t> type = property_card(c_, k.type);
    const bool dock = type && (*type == a.window_types[6] || *type == a.window_types[7]);
    std::string want;
    if (!known.instance.empty() || !known.cls.empty()) {
      want = known.instance;
      want += '\0';
      want += known.cls;
      want += '\0';
    }
    const bool same = cls == want && (pid == known.pid || known.pid == 0) &&
                      dock == (known.what == app_identity::kind::desktop);
    if (!same) cache_.erase(k.s->top);
  }
  for (shown_window& s : out) {
    auto it = cache_.find(s.top);
    if (it == cache_.end()) it = cache_.emplace(s.top, identify_top(s.top)).first;
    s.app = it->second;
  }
  if (xcb_connection_has_error(c_)) return make_error(errc::x_unavailable, "the X server went away");
  return out;
}

std::vector<rect> hidden_rects(const std::vector<shown_window>& shown, const grant_view& view,
                               const rect& area) {
  std::vector<rect> hidden;
  if (!view.filtering()) return hidden;
  auto visible_part = [&](rect box, size_t above_from) {
    std::vector<rect> parts{intersect(box, area)};
    if (parts[0].w <= 0 || parts[0].h <= 0) return std::vector<rect>{};
    for (size_t j = above_from; j < shown.size() && !parts.empty(); ++j) {
      // A shaped window above covers its shape's rectangles only.
      const std::vector<rect> one{shown[j].box};
      for (const rect& cover : shown[j].shape.empty() ? one : shown[j].shape) {
        if (cover.w <= 0 || cover.h <= 0) continue;
        std::vector<rect> next;
        for (const rect& r : parts) subtract(r, cover, next);
        parts = std::move(next);
        if (parts.size() > kMostRects) return std::vector<rect>{intersect(box, area)};
      }
    }
    return parts;
  };
  app_identity desktop;
  desktop.what = app_identity::kind::desktop;
  if (!view.allows(desktop)) {
    for (const rect& r : visible_part(area, 0)) hidden.push_back(r);
  }
  for (size_t i = 0; i < shown.size(); ++i) {
    if (view.allows(shown[i].app)) continue;
    for (const rect& r : visible_part(shown[i].box, i + 1)) hidden.push_back(r);
  }
  return hidden;
}

std::vector<rect> shown_rects(const std::vector<shown_window>& shown, const grant_view& view,
                              const rect& area) {
  std::vector<rect> parts;
  if (area.w <= 0 || area.h <= 0) return parts;
  parts.push_back(area);
  for (const rect& cover : hidden_rects(shown, view, area)) {
    std::vector<rect> next;
    for (const rect& r : parts) subtract(r, cover, next);
    parts = std::move(next);
    if (parts.empty()) break;
  }
  return parts;
}

}  // namespace cu
