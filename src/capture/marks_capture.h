// Owns: screenshot_marks off the loop. On a capture worker: the screen (or
// one window) grabbed as a screenshot would, a new coordinate session made
// from it, the image scaled to the session's size, and the candidates the
// earlier steps found moved into its pixels; with OCR asked for, the grey
// pixels handed to the recognizer thread, which adds the lines it reads.
// Where the map is finished (the worker, or the recognizer after reading):
// merged, numbered and drawn (vision/marks.h), encoded as a screenshot is
// (PNG, or JPEG where the configuration says so or the PNG's line would
// pass CU_MAX_RESULT_BYTES), and the list written.
// Thread affinity: run_marks on a capture worker (it uses that worker's
// grabber); the finish on that worker or on the recognizer thread.
#pragma once

#include <optional>

#include "capture/capture.h"

namespace cu {

// Runs a kind::marks job on g. Nothing when the job went on to the
// recognizer, which then completes it (and sends back the session);
// otherwise *established is the session the map made.
std::optional<tool_result> run_marks(grabber& g, const capture_job& job, const capture_env& env,
                                     coord_session stamp,
                                     std::optional<coord_session>* established);

}  // namespace cu
