// Owns: screenshot_find on a capture worker: the pixels searched (the
// session's area of the screen, or one window), the template (a PNG, or a
// part of the session's image), the search (vision/match.h) and the answer
// in the session's image pixels.
// Thread affinity: a capture worker thread (it uses that worker's grabber).
#pragma once

#include <optional>

#include "capture/capture.h"

namespace cu {

// The pixels a search looks at (screenshot_find, find_text): the session's
// area of the screen, or one window's own pixels, grabbed now, and the
// session they are in (the job's, or one established from the grab).
struct session_pixels {
  frame pixels;
  point origin;  // Where session device coordinates are on the root.
  coord_session session;
  bool established = false;  // The job had no session of this target.
};

// Grabs them on g, or says why not (a session from another X server, a
// target that changed size since the session's screenshot, a window that
// is gone). stamp: as for run_find.
result<session_pixels> grab_session_pixels(grabber& g, const capture_job& job,
                                           coord_session stamp);

// Runs a kind::find job on g. stamp: a session of the screen as it is now
// (generation and root size set), to fill in when the job establishes one
// (no session yet, or a window's); then stored in *established.
tool_result run_find(grabber& g, const capture_job& job, const capture_env& env,
                     coord_session stamp, std::optional<coord_session>* established);

}  // namespace cu
