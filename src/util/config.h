// Owns: the server's configuration, read once from the environment.
// Thread affinity: built on the main thread before any other starts; then
// read-only (each thread gets the copies it needs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/log.h"

namespace cu {

// CU_IMAGE_FORMAT: what screenshots are sent as. automatic: PNG while the
// result line fits max_result_bytes, else JPEG.
enum class image_format { automatic, png, jpeg };

struct config {
  std::string display = ":10";                                  // DISPLAY
  std::string lock_path;  // CU_LOCK_PATH; empty: default_lock_path(display)
  std::string save_dir = "/tmp/sidebutton-computer-use/";       // CU_SAVE_DIR
  double idle_release_secs = 300;                               // CU_IDLE_RELEASE_SECS
  double screenshot_delay_secs = 2.0;                           // CU_SCREENSHOT_DELAY
  double settle_quiet_ms = 100;                                 // CU_SETTLE_QUIET_MS
  image_format format = image_format::automatic;                // CU_IMAGE_FORMAT
  size_t max_result_bytes = 1000000;                            // CU_MAX_RESULT_BYTES
  size_t max_frame_bytes = size_t{64} << 20;                    // CU_MAX_FRAME_BYTES
  int capture_workers = 0;                                      // CU_CAPTURE_WORKERS
  double type_delay_ms = 0;                                     // CU_TYPE_DELAY_MS
  double pace_quiet_ms = 50;                                    // CU_PACE_QUIET_MS
  double pace_text_ms = 200;                                    // CU_PACE_TEXT_MS
  double pace_max_ms = 1000;                                    // CU_PACE_MAX_MS
  bool input_guard = true;                                      // CU_INPUT_GUARD
  std::string uinput_path = "/dev/uinput";                       // CU_UINPUT
  log_level level = log_level::info;                            // CU_LOG_LEVEL
  // CU_TOOLSETS as written; main parses it (tools/registry.h, parse_toolsets)
  // unless --toolsets overrides it, and sets toolsets_on, the parsed set.
  std::string toolsets = "computer";                             // CU_TOOLSETS
  uint32_t toolsets_on = 1;  // A toolset_mask: only computer.
  // The flight recorder (docs/trace.md): the directory its trace files go
  // to (--trace overrides it); empty: nothing is recorded.
  std::string trace_dir;                                        // CU_TRACE_DIR
  bool trace_redact_text = false;                               // CU_TRACE_REDACT_TEXT
  size_t trace_max_bytes = size_t{64} << 20;                    // CU_TRACE_MAX_BYTES
  size_t trace_keep = 8;                                        // CU_TRACE_KEEP
  // The grants (docs/grants.md): CU_GRANTS as written ("open" or
  // "enforce"; main refuses to start on anything else rather than run
  // open when the operator meant enforce), the deny list, and whether the
  // desktop itself (the root, panels) counts as granted when enforcing.
  std::string grants = "open";                                  // CU_GRANTS
  std::string deny_apps;                                        // CU_DENY_APPS
  std::string allow_apps;                                       // CU_ALLOW_APPS
  std::string grants_file;                                      // CU_GRANTS_FILE
  std::string grants_desktop = "allow";                         // CU_GRANTS_DESKTOP
};

// Reads the environment; an unparsable value is reported on stderr and the
// default is kept.
config config_from_env();

}  // namespace cu
