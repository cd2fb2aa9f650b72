// Acting by mark (the marks toolset): the pointer tools' `mark` resolved
// against the latest look. A mark's point is its box's centre mapped
// through the look's own session (not the coordinate session now, which a
// later screenshot may have moved to another window). Before it is used,
// the damage record is brought up to date on the monitor's thread (one
// round trip there, none on the loop) and asked whether anything was drawn
// in the mark's box since the look's grab: a box drawn on is stale. A stale
// accessibility element is searched for again on the a11y thread by role
// and name (a11y/text_search.h's actionable mode) and used where it is
// now when exactly one is found; every other stale mark is refused, so a
// mark is never applied to whatever the screen shows there now.
#include <algorithm>
#include <memory>

#include "build_config.h"
#include "capture/damage.h"
#include "core/completion_queue.h"
#include "core/job.h"
#include "toolsets/marks/looks.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"

#if CU_HAVE_A11Y
#include "a11y/text_search.h"
#endif

namespace cu {
namespace {

// Past the bound the screen is too busy to tell one element from another.
constexpr size_t kMostElements = 500;

// One mark being resolved: what the map saw and where it is now.
struct pending_mark {
  const mark* seen = nullptr;
  rect on_root;  // The mark's box on the root when the map was grabbed.
  mark_aim aim;
  bool stale = false;
};

// Everything one resolution carries between its steps.
struct resolution {
  uint64_t look_id = 0;
  std::shared_ptr<const look_record> look;
  std::vector<pending_mark> marks;
  // Why every mark counts as drawn on (no DAMAGE record); empty: the
  // record says which were.
  std::string unrecorded;
  std::function<void(tool_call&, std::vector<mark_aim>)> next;
};

std::string mark_text(const mark& m) {
  return str_cat("mark ", std::to_string(m.n), " (", m.what.role, " \"", m.what.name, "\")");
}

// The image box's place on the root, through the look's session.
result<rect> box_on_root(const look_record& l, const rect& box) {
  auto a = image_to_device(l.session, box.x, box.y);
  if (!a) return a.take_error();
  auto b = image_to_device(l.session, box.x + std::max(box.w, 1) - 1, box.y + std::max(box.h, 1) - 1);
  if (!b) return b.take_error();
  return rect{a->x + l.origin.x, a->y + l.origin.y, b->x - a->x + 1, b->y - a->y + 1};
}

std::string refusal(const resolution& r, const pending_mark& m, std::string_view why) {
  return str_cat(mark_text(*m.seen), " is stale: ",
                 r.unrecorded.empty()
                     ? str_cat("the screen changed there since look ", std::to_string(r.look_id))
                     : r.unrecorded,
                 why, "; take a new screenshot_marks");
}

void finish_resolution(tool_call& call, std::shared_ptr<resolution> r) {
  std::vector<mark_aim> aims;
  for (pending_mark& m : r->marks) aims.push_back(std::move(m.aim));
  r->next(call, std::move(aims));
}

#if CU_HAVE_A11Y
// The stale accessibility marks found again: exactly one shown element of
// the same role and name each, else the call is refused.
void refind(tool_call& call, std::shared_ptr<resolution> r) {
  auto io = std::make_shared<a11y_text_search>();
  io->actionable = true;
  io->max_results = kMostElements;
  io->area = rect{0, 0, 1 << 15, 1 << 15};
  call.then([io, r](tool_call& next, tool_result res) {
    if (res.is_error || !io->unavailable.empty()) {
      const std::string why = res.is_error ? (res.content.empty() ? std::string("failed")
                                                                  : res.content[0].text)
                                           : io->unavailable;
      for (pending_mark& m : r->marks) {
        if (m.stale) return next.fail(refusal(*r, m, str_cat(" and the accessibility tree "
                                                             "cannot be read (", why, ")")));
      }
    }
    for (pending_mark& m : r->marks) {
      if (!m.stale) continue;
      const a11y_text_hit* found = nullptr;
      int count = 0;
      for (const a11y_text_hit& h : io->hits) {
        if (h.role != m.seen->what.role || h.text != m.seen->what.name) continue;
        found = &h;
        ++count;
      }
      if (count != 1) {
        return next.fail(refusal(
            *r, m,
            count == 0 ? std::string(" and the element is not found")
                       : str_cat(" and ", std::to_string(count),
                                 " elements have its role and name")));
      }
      const rect now{found->box.x + io->origin.x, found->box.y + io->origin.y, found->box.w,
                     found->box.h};
      m.aim.at = device_target{point{now.x + now.w / 2, now.y + now.h / 2}, 0};
      if (now != m.on_root) {
        std::string where = point_text(m.aim.at.p);
        if (r->look->session.window == 0) {
          where = str_cat(point_text(device_to_image(r->look->session, m.aim.at.p)), " in the image");
        } else {
          where += " on the screen";
        }
        m.aim.note = str_cat(m.aim.text, " moved to ", where, " since look ",
                             std::to_string(r->look_id));
      }
    }
    finish_resolution(next, r);
  });
  call.a11y(make_text_search(io));
}
#endif

// The damage record is up to date (or there is none): the marks drawn on
// are found again or refused, the others used as they are.
void check_marks(tool_call& call, std::shared_ptr<resolution> r) {
  damage_monitor* damage = call.damage();
  bool any_stale = false;
  for (pending_mark& m : r->marks) {
    m.stale = !r->unrecorded.empty() || damage == nullptr ||
              damage->touched(*r->look->damage_mark, m.on_root);
    if (!m.stale) continue;
    any_stale = true;
    if (m.seen->what.source != mark_source::a11y) {
      return call.fail(refusal(*r, m, ""));
    }
  }
  if (!any_stale) return finish_resolution(call, r);
#if CU_HAVE_A11Y
  refind(call, r);
#else
  for (pending_mark& m : r->marks) {
    if (m.stale) {
      return call.fail(refusal(*r, m, " and this server cannot read the accessibility tree to "
                                      "find it again"));
    }
  }
#endif
}

}  // namespace

void looks::resolve(tool_call& call, std::vector<mark_ref> refs,
                    std::function<void(tool_call&, std::vector<mark_aim>)> next) {
  const look* l = latest();
  if (l == nullptr) return call.fail("no map yet: call screenshot_marks first");
  auto r = std::make_shared<resolution>();
  r->look_id = l->id;
  r->look = l->seen;
  r->next = std::move(next);
  const std::vector<mark>& marks = r->look->marks;
  for (const mark_ref& ref : refs) {
    const mark* found = nullptr;
    for (const mark& m : marks) {
      if (m.n == ref.n) found = &m;
    }
    if (found == nullptr) {
      const std::string range = marks.empty()
                                    ? std::string("has no marks")
                                    : str_cat("has marks 1 to ", std::to_string(marks.back().n));
      return call.fail(str_cat("Invalid argument \"", ref.arg, "\": the latest map, look ",
                               std::to_string(r->look_id), ", ", range, ", got ",
                               std::to_string(ref.n)));
    }
    const rect& box = found->what.box;
    auto centre = image_to_device(r->look->session, box.x + box.w / 2.0, box.y + box.h / 2.0);
    if (!centre) return call.fail(str_cat("Invalid argument \"", ref.arg, "\": ", centre.err().message));
    auto on_root = box_on_root(*r->look, box);
    if (!on_root) return call.fail(str_cat("Invalid argument \"", ref.arg, "\": ", on_root.err().message));
    pending_mark m;
    m.seen = found;
    m.on_root = *on_root;
    m.aim = mark_aim{device_target{*centre, r->look->session.window}, mark_text(*found), {}};
    r->marks.push_back(std::move(m));
  }
  damage_monitor* damage = call.damage();
  if (!r->look->damage_mark || damage == nullptr || !damage->watching() || done_ == nullptr) {
    // Nobody can tell an unchanged box from a changed one: every mark may
    // be stale.
    r->unrecorded = "changes to the screen are not recorded (no X DAMAGE), so the screen may have changed there";
    return check_marks(call, r);
  }
  // The record holds what the monitor has read so far; a round trip on its
  // own connection brings it up to date with everything drawn until now.
  call.then([r](tool_call& after, tool_result) { check_marks(after, r); });
  completion_queue* done = done_;
  call.room(toolset::marks, [damage, done](job_header h) {
    damage->request_sync(0, [h = std::move(h), done](damage_monitor::sync_answer) {
      done->push(job_done(h, tool_result::text("synced")));
    });
  });
}

}  // namespace cu
