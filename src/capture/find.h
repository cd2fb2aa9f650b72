// Owns: screenshot_find on a capture worker: the pixels searched (the
// session's area of the screen, or one window), the template (a PNG, or a
// part of the session's image), the search (vision/match.h) and the answer
// in the session's image pixels.
// Thread affinity: a capture worker thread (it uses that worker's grabber).
#pragma once

#include <optional>

#include "capture/capture.h"

namespace cu {

// Runs a kind::find job on g. stamp: a session of the screen as it is now
// (generation and root size set), to fill in when the job establishes one
// (no session yet, or a window's); then stored in *established.
tool_result run_find(grabber& g, const capture_job& job, const capture_env& env,
                     coord_session stamp, std::optional<coord_session>* established);

}  // namespace cu
