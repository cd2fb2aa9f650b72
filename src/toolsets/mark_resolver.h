// Owns: what the pointer tools ask of the marks toolset when a call names a
// mark of a screenshot_marks map in place of a coordinate. The marks room's
// service implements it, so the computer room resolves marks without
// including the marks room's files (rooms never include each other).
// Thread affinity: the loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/geometry.h"

namespace cu {

class tool_call;

// A mark a call names: the argument that names it and its number.
struct mark_ref {
  std::string_view arg;
  int64_t n = 0;
};

// Where a mark is on the screen now, and how an answer names it.
struct mark_aim {
  device_target at;
  std::string text;  // "mark 12 (push button \"Apply\")".
  // Empty, or why the point is not where the map drew the mark: "mark 12
  // (push button \"Apply\") moved to (410, 230) since look 7".
  std::string note;
};

class mark_resolver {
 public:
  virtual ~mark_resolver() = default;
  // Finds marks of the latest map on the screen now. A mark whose box was
  // not drawn on since its map (X DAMAGE's record) is its box's centre; one
  // drawn on is an accessibility element found again by role and name, or
  // refused. Either completes call with the refusal (nothing is pressed
  // then), or chains: next runs on the loop thread with a call of its own
  // and one aim per mark, in order, and must complete that call.
  virtual void resolve(tool_call& call, std::vector<mark_ref> marks,
                       std::function<void(tool_call&, std::vector<mark_aim>)> next) = 0;
};

}  // namespace cu
