// Owns: what one capture job does, from grab to finished tool result:
// answer from the cache when nothing was drawn, else grab, scale, choose the
// format, encode (redoing only the PNG strips drawn on), optionally save.
// Thread affinity: a capture worker thread (it uses that worker's grabber).
#pragma once

#include <optional>
#include <string>

#include "capture/cache.h"
#include "capture/damage.h"
#include "capture/grabber.h"
#include "capture/pool.h"
#include "capture/task_runner.h"
#include "core/tool_result.h"
#include "util/config.h"

namespace cu {

// What every capture uses besides its job and its worker's grabber.
struct capture_env {
  const std::string& save_dir;
  task_runner& runner;
  damage_monitor* damage;  // Null: no record of changes (nothing is reused).
  capture_cache& cache;
  image_format format;
  size_t max_result_bytes;  // For image_format::automatic.
  text_recognizer* recognizer = nullptr;  // find_text's OCR thread.
  // The grants' epoch the job's grabs hide by (grant_view::epoch), or 0
  // when they hide nothing: what was cached or kept under another is not
  // reused, since a change of grants changes the image with no damage.
  uint64_t view_epoch = 0;
  // With a view that filters, grabber::hidden_print when the job started,
  // and the parts hidden then (root pixels, the whole screen): what is
  // hidden changes with no drawing when a window's identity does, so what
  // was kept under another print is not reused as it is (a look's since
  // crops cover what either print hid). A job whose grab read another
  // print keeps nothing for reuse.
  uint64_t hidden_print = 0;
  std::shared_ptr<const std::vector<rect>> hidden;
};

// Runs job on g. When the job establishes a coordinate session (every
// screenshot; a zoom that had none), it is stored in *established.
// Nothing when the job went on elsewhere (find_text, to env.recognizer),
// which then completes it.
std::optional<tool_result> run_capture(grabber& g, const capture_job& job,
                                       const capture_env& env,
                                       std::optional<coord_session>* established);

}  // namespace cu
