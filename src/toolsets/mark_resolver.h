// Owns: what the pointer tools ask of the marks toolset when a call names a
// mark of a screenshot_marks map in place of a coordinate. The marks room's
// service implements it, so the computer room resolves marks without
// including the marks room's files (rooms never include each other).
// Thread affinity: the loop thread, but for mark_aim::drawn_on, which runs
// on the input actor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/geometry.h"
#include "util/result.h"

namespace cu {

class tool_call;

// A mark a call names: the argument that names it and its number.
struct mark_ref {
  std::string_view arg;
  int64_t n = 0;
};

// Where a mark is on the screen, and how an answer names it.
struct mark_aim {
  device_target at;
  std::string text;  // "mark 12 (push button \"Apply\")".
  // Empty, or why the point is not where the map drew the mark: "mark 12
  // (push button \"Apply\") moved to (410, 230) in the image since look 7".
  std::string note;
  uint64_t look = 0;  // The look the mark is of, and its number there.
  int64_t n = 0;
  // Whether anything was drawn in the mark's box since its map (true when
  // nobody can tell): called on the input actor after its pacing, right
  // before the press, since an application that took the previous input
  // may redraw until then. Null: the aim was found again just now.
  std::function<bool()> drawn_on;
  // The X window the mark's element is in (0: not known): the press is
  // made only where the pointer reaches it (input_context::unreachable).
  uint32_t window = 0;
};

class mark_resolver {
 public:
  virtual ~mark_resolver() = default;
  // The marks' places as the latest map saw them, through that map's own
  // coordinate session; an error names the argument (no map yet, a number
  // the map does not have).
  virtual result<std::vector<mark_aim>> aim(tool_call& call, const std::vector<mark_ref>& marks) = 0;
  // The aims with stale set were drawn on at the press: each is found again
  // (an accessibility element, by role and name, when exactly one is shown)
  // or call is completed with the refusal, nothing pressed. When all are
  // found, next runs on the loop thread with a call of its own and the
  // aims (those found again with their new place and a note), and must
  // complete that call. unreachable says, per aim, why the pointer did not
  // reach it where its map saw it (empty: it did): a stale mark not found
  // among the elements shown and not reached there is under another window,
  // and goes to unreachable() below with by_action.
  virtual void again(tool_call& call, std::vector<mark_aim> aims, std::vector<bool> stale,
                     std::vector<std::string> unreachable, bool by_action,
                     std::function<void(tool_call&, std::vector<mark_aim>)> next) = 0;
  // The pointer cannot reach aim at the press (why: "is under another
  // window", "is off the screen"), and nothing was pressed. With by_action
  // (the gesture is a plain left click), an accessibility element is found
  // again in its application by role and name and pressed through its own
  // action on the a11y thread, and call answers so; every other mark, or
  // gesture, completes call with the refusal.
  virtual void unreachable(tool_call& call, const mark_aim& aim, const std::string& why,
                           bool by_action) = 0;
};

}  // namespace cu
