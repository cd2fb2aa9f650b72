// Owns: the coordinate session the model's coordinates refer to (the last
// screenshot of the screen as it is now), the display area switch_display
// chose, and what voids them: a resized root window, a lost X server.
// Thread affinity: the loop thread.
#pragma once

#include <optional>
#include <string>

#include "core/completion_queue.h"
#include "core/generation.h"
#include "core/geometry.h"

namespace cu {

class coordinates {
 public:
  // display: for log lines; generation: the X server's, shared with the
  // threads that notice its loss.
  coordinates(std::string display, const server_generation& generation)
      : display_(std::move(display)), generation_(generation) {}

  // The session, if it is still of the screen as it is now.
  std::optional<coord_session> live() const;

  // A capture made for a request that is still wanted: it becomes the
  // session if it is of the screen as it is now.
  void adopt(const coord_session& s);

  // The area screenshots show (nothing: the whole screen).
  const std::optional<rect>& area() const { return area_; }

  // switch_display chose area: coordinates the model holds refer to the
  // old one, so it must look again before it can click.
  void set_area(const std::optional<rect>& area);

  // The desktop thread's news of the screen. True when the X server went
  // away (whatever was held went with it).
  bool on_screen_report(const screen_report& r);

 private:
  std::string display_;
  const server_generation& generation_;
  std::optional<coord_session> session_;
  // The root window's size as the desktop thread last reported it (or a
  // capture saw it first), and a session captured at a size the report of
  // which has not arrived yet.
  std::optional<size2> root_size_;
  std::optional<coord_session> early_session_;
  std::optional<rect> area_;  // switch_display's choice; nothing: the whole screen.
};

}  // namespace cu
