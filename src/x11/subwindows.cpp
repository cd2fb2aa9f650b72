#include "x11/subwindows.h"

#include <algorithm>
#include <cstdint>

#include "x11/connection.h"

namespace cu {
namespace {

// Below this many levels under a top-level window a toolkit's tree holds
// parts of a control (a scroll bar's thumb), not controls.
constexpr int kDeepest = 4;
// Smaller than this on either side is a border or a separator, no place a
// control is drawn in.
constexpr int kSmallest = 6;

std::string property_bytes(xcb_connection_t* c, xcb_get_property_cookie_t cookie) {
  reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(c, cookie, nullptr));
  if (!r || r->format != 8) return {};
  return std::string(static_cast<const char*>(xcb_get_property_value(r.get())),
                     size_t(xcb_get_property_value_length(r.get())));
}

// A window whose children are to be read: where its inside lies on the
// root and what of it its ancestors let show.
struct parent_ref {
  size_t top = 0;
  size_t node = SIZE_MAX;  // SIZE_MAX: the top-level window itself.
  int depth = 0;
  point origin;
  rect clip;
};

struct pending {
  xcb_window_t id;
  parent_ref parent;
};

}  // namespace

std::vector<size_t> pick_control_windows(const std::vector<subwindow_node>& nodes,
                                         const rect& top) {
  const int64_t top_area = int64_t(top.w) * int64_t(top.h);
  std::vector<bool> qualifies(nodes.size(), false), holds_one(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const rect& b = nodes[i].box;
    const int64_t area = int64_t(b.w) * int64_t(b.h);
    qualifies[i] = nodes[i].shown && b.w >= kSmallest && b.h >= kSmallest &&
                   area * 4 <= top_area && int64_t(b.w) * 10 < int64_t(top.w) * 9 &&
                   int64_t(b.h) * 10 < int64_t(top.h) * 9;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!qualifies[i]) continue;
    // The bound on the chain guards against a list whose parents loop.
    size_t p = nodes[i].parent;
    for (size_t steps = 0; p < nodes.size() && steps < nodes.size(); ++steps) {
      holds_one[p] = true;
      p = nodes[p].parent;
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (qualifies[i] && !holds_one[i]) out.push_back(i);
  }
  return out;
}

std::vector<control_window> read_control_windows(xcb_connection_t* c,
                                                 const std::vector<control_top>& tops,
                                                 size_t most_windows, size_t most_controls) {
  std::vector<std::vector<subwindow_node>> trees(tops.size());
  // The top-level windows' children: one round trip for all of them.
  std::vector<pending> level;
  {
    std::vector<xcb_query_tree_cookie_t> ck;
    ck.reserve(tops.size());
    for (const control_top& t : tops) ck.push_back(xcb_query_tree(c, t.id));
    for (size_t i = 0; i < tops.size(); ++i) {
      reply_ptr<xcb_query_tree_reply_t> r(xcb_query_tree_reply(c, ck[i], nullptr));
      if (!r) continue;
      const xcb_window_t* k = xcb_query_tree_children(r.get());
      const parent_ref parent{i, SIZE_MAX, 0, point{tops[i].box.x, tops[i].box.y}, tops[i].box};
      for (int n = 0; n < xcb_query_tree_children_length(r.get()); ++n) {
        level.push_back(pending{k[n], parent});
      }
    }
  }
  // Then a level at a time: each window's attributes, geometry and (above
  // the deepest level) children asked for together, then all collected.
  size_t asked = 0;
  while (!level.empty() && asked < most_windows) {
    if (level.size() > most_windows - asked) level.resize(most_windows - asked);
    asked += level.size();
    struct cookies {
      xcb_get_window_attributes_cookie_t attrs;
      xcb_get_geometry_cookie_t geometry;
      xcb_query_tree_cookie_t tree;
      bool has_tree;
    };
    std::vector<cookies> ck;
    ck.reserve(level.size());
    for (const pending& p : level) {
      const bool deeper = p.parent.depth + 1 < kDeepest;
      ck.push_back({xcb_get_window_attributes(c, p.id), xcb_get_geometry(c, p.id),
                    deeper ? xcb_query_tree(c, p.id) : xcb_query_tree_cookie_t{}, deeper});
    }
    std::vector<pending> next;
    for (size_t i = 0; i < level.size(); ++i) {
      const pending& p = level[i];
      reply_ptr<xcb_get_window_attributes_reply_t> attrs(
          xcb_get_window_attributes_reply(c, ck[i].attrs, nullptr));
      reply_ptr<xcb_get_geometry_reply_t> g(xcb_get_geometry_reply(c, ck[i].geometry, nullptr));
      reply_ptr<xcb_query_tree_reply_t> tree;
      if (ck[i].has_tree) tree.reset(xcb_query_tree_reply(c, ck[i].tree, nullptr));
      // Gone since its parent was read.
      if (!attrs || !g) continue;
      subwindow_node node;
      node.id = p.id;
      node.parent = p.parent.node;
      node.depth = p.parent.depth + 1;
      // GetGeometry places the border's outer corner in the parent's inside.
      const point origin{p.parent.origin.x + g->x + g->border_width,
                         p.parent.origin.y + g->y + g->border_width};
      node.box = intersect(rect{origin.x, origin.y, g->width, g->height}, p.parent.clip);
      node.shown = attrs->map_state == XCB_MAP_STATE_VIEWABLE &&
                   attrs->_class == XCB_WINDOW_CLASS_INPUT_OUTPUT;
      std::vector<subwindow_node>& tree_of = trees[p.parent.top];
      tree_of.push_back(node);
      // An unshown window's children are not shown either, and a window
      // its ancestors hide all of shows none of them.
      if (!tree || !node.shown || node.box.w <= 0 || node.box.h <= 0) continue;
      const parent_ref here{p.parent.top, tree_of.size() - 1, node.depth, origin, node.box};
      const xcb_window_t* k = xcb_query_tree_children(tree.get());
      for (int n = 0; n < xcb_query_tree_children_length(tree.get()); ++n) {
        next.push_back(pending{k[n], here});
      }
    }
    level = std::move(next);
  }
  std::vector<control_window> out;
  for (size_t t = 0; t < tops.size() && out.size() < most_controls; ++t) {
    for (size_t i : pick_control_windows(trees[t], tops[t].box)) {
      if (out.size() == most_controls) break;
      out.push_back(control_window{trees[t][i].id, tops[t].id, trees[t][i].box, {}, {}, {}});
    }
  }
  // Their names, when a toolkit set any: one round trip for all.
  struct name_cookies {
    xcb_get_property_cookie_t name, cls;
  };
  std::vector<name_cookies> nk;
  nk.reserve(out.size());
  for (const control_window& w : out) {
    nk.push_back({xcb_get_property(c, 0, w.id, XCB_ATOM_WM_NAME, XCB_GET_PROPERTY_TYPE_ANY, 0, 256),
                  xcb_get_property(c, 0, w.id, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 0, 256)});
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].name = property_bytes(c, nk[i].name);
    const std::string cls = property_bytes(c, nk[i].cls);
    const size_t nul = cls.find('\0');
    out[i].instance = cls.substr(0, nul);
    if (nul != std::string::npos) {
      const std::string rest = cls.substr(nul + 1);
      out[i].cls = rest.substr(0, rest.find('\0'));
    }
  }
  return out;
}

}  // namespace cu
