// Owns: what one capture job does, from grab to finished tool result:
// grab, scale, encode, optionally save.
// Thread affinity: a capture worker thread (it uses that worker's grabber).
#pragma once

#include <optional>

#include "capture/grabber.h"
#include "capture/pool.h"
#include "capture/task_runner.h"
#include "core/tool_result.h"

namespace cu {

// Runs job on g, spreading the encode over runner. When the job establishes
// a coordinate session (every screenshot; a zoom that had none), it is
// stored in *established.
tool_result run_capture(grabber& g, const capture_job& job, const std::string& save_dir,
                        task_runner& runner, std::optional<coord_session>* established);

}  // namespace cu
