// Acting by mark (the marks toolset): the pointer tools' `mark` resolved
// against the latest look. A mark's point is its box's centre mapped
// through the look's own session (not the coordinate session now, which a
// later screenshot may have moved to another window). Right before the
// press, on the input actor after its pacing (so an application that took
// the previous input has redrawn), the damage record is brought up to date
// and asked whether anything was drawn in the mark's box since the look's
// grab: a box drawn on is stale, and nothing is pressed. A stale
// accessibility element is then searched for again on the a11y thread by
// role and name (a11y/text_search.h's actionable mode) and pressed where it
// is now when exactly one is shown; every other stale mark is refused, so
// a mark is never applied to whatever the screen shows there now. Before
// that, the actor asks whether the pointer reaches the mark's window at
// its point at all: a left click on an accessibility element it cannot
// reach (under another window, off the screen) is made through the
// element's own action instead, found again in its application by role
// and name; any other mark or gesture there is refused.
#include <algorithm>
#include <memory>

#include "build_config.h"
#include "capture/damage.h"
#include "desktop/desktop_op.h"
#include "toolsets/marks/looks.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"

#if CU_HAVE_A11Y
#include "a11y/app_ops.h"
#include "a11y/text_search.h"
#endif

namespace cu {
namespace {

// Past the bound the screen is too busy to tell one element from another.
constexpr size_t kMostElements = 500;

std::string mark_text(const mark& m) {
  return str_cat("mark ", std::to_string(m.n), " (", m.what.role, " \"", m.what.name, "\")");
}

// The image box's place on the root, through the look's session.
result<rect> box_on_root(const look_record& l, const rect& box) {
  auto a = image_to_device(l.session, box.x, box.y);
  if (!a) return a.take_error();
  auto b = image_to_device(l.session, box.x + std::max(box.w, 1) - 1,
                           box.y + std::max(box.h, 1) - 1);
  if (!b) return b.take_error();
  return rect{a->x + l.origin.x, a->y + l.origin.y, b->x - a->x + 1, b->y - a->y + 1};
}

const mark* mark_numbered(const look_record& l, int64_t n) {
  for (const mark& m : l.marks) {
    if (m.n == n) return &m;
  }
  return nullptr;
}

// Why a mark counts as drawn on although nothing says so, or empty.
std::string unrecorded(tool_call& call, const look_record& l) {
  damage_monitor* damage = call.damage();
  if (l.damage_mark && damage != nullptr && damage->watching()) return {};
  return "changes to the screen are not recorded (no X DAMAGE), so it may have changed there";
}

std::string refusal(const mark_aim& a, std::string_view since, std::string_view why) {
  return str_cat(a.text, " is stale: ", since, why, "; take a new screenshot_marks");
}

// Why a mark of look l counts as stale, for its refusal.
std::string stale_since(tool_call& call, const look& l) {
  std::string why = unrecorded(call, *l.seen);
  return why.empty() ? str_cat("the screen changed there since look ", std::to_string(l.id)) : why;
}

// A mark found again at now (root pixels): aimed at its centre, with the
// note that opens the answer.
void found_at(mark_aim& a, const look_record& seen, const mark& m, const rect& now) {
  a.at = device_target{point{now.x + now.w / 2, now.y + now.h / 2}, 0};
  a.drawn_on = nullptr;
  auto then_box = box_on_root(seen, m.what.box);
  if (!then_box || now != *then_box) {
    const std::string where =
        seen.session.window == 0
            ? str_cat(point_text(device_to_image(seen.session, a.at.p)), " in the image")
            : str_cat(point_text(a.at.p), " on the screen");
    a.note = str_cat(a.text, " moved to ", where, " since look ", std::to_string(a.look));
  } else {
    a.note = str_cat(a.text, " was redrawn since look ", std::to_string(a.look),
                     " and found again in its place");
  }
}

#if CU_HAVE_A11Y
// Whether two boxes on the root are one place: each edge within 3 pixels
// (a map's box came through the image's scale and back).
bool same_place(const rect& a, const rect& b) {
  auto near = [](int u, int v) { return u - v <= 3 && v - u <= 3; };
  return near(a.x, b.x) && near(a.y, b.y) && near(a.x + a.w, b.x + b.w) &&
         near(a.y + a.h, b.y + b.h);
}
#endif

bool is_title_bar(const mark& m) {
  return m.what.source == mark_source::windows && m.what.role == "title bar" &&
         m.what.window != 0;
}

}  // namespace

result<std::vector<mark_aim>> looks::aim(tool_call& call, const std::vector<mark_ref>& refs) {
  const look* l = latest_map();
  if (l == nullptr) {
    return make_error(errc::invalid_argument, "no map yet: call screenshot_marks first");
  }
  const look_record& seen = *l->seen;
  damage_monitor* damage = call.damage();
  const bool recorded = unrecorded(call, seen).empty();
  std::vector<mark_aim> aims;
  for (const mark_ref& ref : refs) {
    const mark* m = mark_numbered(seen, ref.n);
    if (m == nullptr) {
      const std::string range =
          seen.marks.empty() ? std::string("has no marks")
                             : str_cat("has marks 1 to ", std::to_string(seen.marks.back().n));
      return make_error(errc::invalid_argument,
                        str_cat("Invalid argument \"", ref.arg, "\": the latest map, look ",
                                std::to_string(l->id), ", ", range, ", got ",
                                std::to_string(ref.n)));
    }
    const rect& box = m->what.box;
    auto centre = image_to_device(seen.session, box.x + box.w / 2.0, box.y + box.h / 2.0);
    if (!centre) {
      return make_error(errc::invalid_argument,
                        str_cat("Invalid argument \"", ref.arg, "\": ", centre.err().message));
    }
    auto on_root = box_on_root(seen, box);
    if (!on_root) {
      return make_error(errc::invalid_argument,
                        str_cat("Invalid argument \"", ref.arg, "\": ", on_root.err().message));
    }
    mark_aim a;
    a.at = device_target{*centre, seen.session.window};
    a.text = mark_text(*m);
    a.look = l->id;
    a.n = ref.n;
    a.window = m->what.window;
    if (recorded) {
      // The monitor lives as long as the server; the actor calls this
      // before its own stop.
      a.drawn_on = [damage, since = *seen.damage_mark, area = *on_root] {
        // The record holds what the monitor has read so far: a round trip
        // on its connection brings it up to date with all drawn until now.
        (void)damage->sync_mark();
        return damage->touched(since, area);
      };
    } else {
      a.drawn_on = [] { return true; };
    }
    aims.push_back(std::move(a));
  }
  return aims;
}

void looks::again(tool_call& call, std::vector<mark_aim> aims, std::vector<bool> stale,
                  std::vector<std::string> unreachable, bool by_action,
                  std::function<void(tool_call&, std::vector<mark_aim>)> next) {
  // The marks found again, with what their looks saw of them.
  struct lost {
    size_t i;
    std::shared_ptr<const look_record> seen;
    const mark* m;
    std::string since;
  };
  std::vector<lost> lose;
  std::vector<size_t> bars;
  for (size_t i = 0; i < aims.size(); ++i) {
    if (!stale[i]) continue;
    const look* l = find(aims[i].look);
    if (l == nullptr) {
      return call.fail(refusal(aims[i], str_cat("look ", std::to_string(aims[i].look)),
                               " is no longer kept"));
    }
    const mark* m = mark_numbered(*l->seen, aims[i].n);
    std::string since = stale_since(call, *l);
    if (is_title_bar(*m)) {
      bars.push_back(i);
      continue;
    }
    if (m->what.source != mark_source::a11y) {
      // Not reached where it was, it is refused with that reason.
      if (!unreachable[i].empty()) return this->unreachable(call, aims[i], unreachable[i], false);
      return call.fail(refusal(aims[i], since, ""));
    }
    lose.push_back(lost{i, l->seen, m, std::move(since)});
  }
  if (!bars.empty()) {
    // A title bar is its window's: found again as that window's bar now
    // (the desktop thread lists the shown bars, each the widest piece no
    // window above covers), wherever the window went; refused when the
    // window shows none. Then the elements, if any are stale too.
    auto shown = std::make_shared<std::vector<title_bar>>();
    call.then([this, shown, bars, aims = std::move(aims), stale = std::move(stale),
               unreachable = std::move(unreachable), by_action,
               next](tool_call& after, tool_result res) mutable {
      for (size_t i : bars) {
        const look* l = find(aims[i].look);
        if (l == nullptr) {
          return after.fail(refusal(aims[i], str_cat("look ", std::to_string(aims[i].look)),
                                    " is no longer kept"));
        }
        const mark* m = mark_numbered(*l->seen, aims[i].n);
        const title_bar* now = nullptr;
        for (const title_bar& b : *shown) {
          if (b.window == m->what.window) now = &b;
        }
        if (res.is_error || now == nullptr) {
          return after.fail(refusal(aims[i], stale_since(after, *l),
                                    " and its window shows no title bar now (it is gone, "
                                    "minimized or covered)"));
        }
        found_at(aims[i], *l->seen, *m, now->box);
        stale[i] = false;
        unreachable[i].clear();
      }
      again(after, std::move(aims), std::move(stale), std::move(unreachable), by_action,
            std::move(next));
    });
    return call.desktop(make_title_bars(shown, nullptr, call.policy().view()));
  }
  if (lose.empty()) return next(call, std::move(aims));
#if CU_HAVE_A11Y
  auto io = std::make_shared<a11y_text_search>();
  io->actionable = true;
  io->max_results = kMostElements;
  io->area = rect{0, 0, 1 << 15, 1 << 15};
  io->view = call.policy().view();
  call.then([this, io, aims = std::move(aims), lose = std::move(lose), unreachable, by_action,
             next](tool_call& after, tool_result res) mutable {
    if (res.is_error || !io->unavailable.empty()) {
      const std::string why =
          res.is_error ? (res.content.empty() ? std::string("failed") : res.content[0].text)
                       : io->unavailable;
      const lost& first = lose.front();
      return after.fail(refusal(aims[first.i], first.since,
                                str_cat(" and the accessibility tree cannot be read (", why, ")")));
    }
    for (const lost& x : lose) {
      mark_aim& a = aims[x.i];
      const a11y_text_hit* found = nullptr;
      int count = 0;
      for (const a11y_text_hit& h : io->hits) {
        if (h.role != x.m->what.role || h.text != x.m->what.name) continue;
        found = &h;
        ++count;
      }
      // Not shown where the pointer reached it: under another window
      // (which the search's occlusion check left it out for), or moved
      // there.
      if (count == 0 && !unreachable[x.i].empty()) {
        return this->unreachable(after, a, unreachable[x.i], by_action);
      }
      // Twins (a page of "togglebutton"s): the one still where the mark
      // was is the same element by everything the tree says of it; a
      // twin elsewhere could be any of them.
      if (count > 1) {
        auto then_box = box_on_root(*x.seen, x.m->what.box);
        const a11y_text_hit* in_place = nullptr;
        int in_place_count = 0;
        for (const a11y_text_hit& h : io->hits) {
          if (!then_box || h.role != x.m->what.role || h.text != x.m->what.name) continue;
          const rect now{h.box.x + io->origin.x, h.box.y + io->origin.y, h.box.w, h.box.h};
          if (same_place(now, *then_box)) {
            in_place = &h;
            ++in_place_count;
          }
        }
        if (in_place_count == 1) {
          found = in_place;
          count = 1;
        }
      }
      if (count != 1) {
        return after.fail(refusal(a, x.since,
                                  count == 0 ? std::string(" and the element is not found")
                                             : str_cat(" and ", std::to_string(count),
                                                       " elements have its role and name")));
      }
      const rect now{found->box.x + io->origin.x, found->box.y + io->origin.y, found->box.w,
                     found->box.h};
      found_at(a, *x.seen, *x.m, now);
      a.window = found->window;
    }
    next(after, std::move(aims));
  });
  call.a11y(make_text_search(io));
#else
  (void)next;
  (void)by_action;
  call.fail(refusal(aims[lose.front().i], lose.front().since,
                    " and this server cannot read the accessibility tree to find it again"));
#endif
}

void looks::unreachable(tool_call& call, const mark_aim& aim, const std::string& why,
                        bool by_action) {
  const look* l = find(aim.look);
  const mark* m = l == nullptr ? nullptr : mark_numbered(*l->seen, aim.n);
  const bool element = m != nullptr && m->what.source == mark_source::a11y && m->what.pid > 0;
  std::string refused = str_cat(aim.text, " ", why, ", so the pointer cannot reach it: nothing was "
                                "pressed; ");
  if (!element) {
    return call.fail(str_cat(refused, "bring its window to the front (focus_window) or on the "
                                      "screen, then take a new screenshot_marks"));
  }
  if (!by_action) {
    return call.fail(str_cat(refused, "left_click presses its element through its own action, "
                                      "or bring its window to the front (focus_window) first"));
  }
#if CU_HAVE_A11Y
  auto then_box = box_on_root(*l->seen, m->what.box);
  a11y_press_by_name want;
  want.pid = m->what.pid;
  want.role = m->what.role;
  want.name = m->what.name;
  if (then_box) want.frame = *then_box;
  auto out = std::make_shared<a11y_outcome>();
  call.then([out, text = aim.text, why](tool_call& after, tool_result r) {
    if (r.is_error) {
      const std::string reason =
          r.content.empty() ? std::string("the action failed") : r.content[0].text;
      return after.fail(str_cat(text, " ", why, " and its accessibility action was not done: ",
                                reason, "; nothing was pressed"));
    }
    after.finish(tool_result::text(str_cat(text, " ", why, ": pressed through its accessibility "
                                           "action \"", out->action, "\"")));
  });
  call.a11y(make_press_by_name(std::move(want), out,
                               a11y_grant_check{call.policy().view(), "its accessibility action"}));
#else
  call.fail(str_cat(refused, "this server cannot read the accessibility tree to press it "
                             "through its own action"));
#endif
}

}  // namespace cu
