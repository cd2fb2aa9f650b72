#include "util/config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace cu {
namespace {

const char* env(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

void read_seconds(const char* name, double* out, double max) {
  const char* v = env(name);
  if (v == nullptr) return;
  char* end = nullptr;
  double d = strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(d) || d < 0 || d > max) {
    log(log_level::warn, "ignoring %s=\"%s\": expected seconds from 0 to %g", name, v, max);
    return;
  }
  *out = d;
}

void read_count(const char* name, size_t* out, size_t min, size_t max) {
  const char* v = env(name);
  if (v == nullptr) return;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || n < min || n > max) {
    log(log_level::warn, "ignoring %s=\"%s\": expected a whole number from %zu to %zu", name, v,
        min, max);
    return;
  }
  *out = size_t(n);
}

// Milliseconds from 0 to max_secs * 1000, into *secs.
void read_seconds_ms(const char* name, double* secs, double max_secs) {
  const char* v = env(name);
  if (v == nullptr) return;
  char* end = nullptr;
  double ms = strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(ms) || ms < 0 || ms > max_secs * 1000) {
    log(log_level::warn, "ignoring %s=\"%s\": expected milliseconds from 0 to %g", name, v,
        max_secs * 1000);
    return;
  }
  *secs = ms / 1000;
}

}  // namespace

config config_from_env() {
  config c;
  c.level = parse_log_level(env("CU_LOG_LEVEL"), c.level);
  set_log_level(c.level);
  if (const char* v = env("DISPLAY")) c.display = v;
  if (const char* v = env("CU_LOCK_PATH")) c.lock_path = v;
  if (const char* v = env("CU_SAVE_DIR")) c.save_dir = v;
  if (const char* v = env("CU_TOOLSETS")) c.toolsets = v;
  if (const char* v = env("CU_UINPUT")) c.uinput_path = v;
  read_seconds("CU_IDLE_RELEASE_SECS", &c.idle_release_secs, 86400.0 * 365);
  read_seconds("CU_SCREENSHOT_DELAY", &c.screenshot_delay_secs, 60);
  read_count("CU_MAX_FRAME_BYTES", &c.max_frame_bytes, 1024, size_t{1} << 32);
  double quiet_secs = c.settle_quiet_ms / 1000;
  read_seconds_ms("CU_SETTLE_QUIET_MS", &quiet_secs, 60);
  c.settle_quiet_ms = quiet_secs * 1000;
  if (const char* v = env("CU_IMAGE_FORMAT")) {
    if (strcmp(v, "auto") == 0) {
      c.format = image_format::automatic;
    } else if (strcmp(v, "png") == 0) {
      c.format = image_format::png;
    } else if (strcmp(v, "jpeg") == 0) {
      c.format = image_format::jpeg;
    } else {
      log(log_level::warn, "ignoring CU_IMAGE_FORMAT=\"%s\": expected auto, png or jpeg", v);
    }
  }
  double pace_quiet_secs = c.pace_quiet_ms / 1000;
  read_seconds_ms("CU_PACE_QUIET_MS", &pace_quiet_secs, 10);
  c.pace_quiet_ms = pace_quiet_secs * 1000;
  double pace_text_secs = c.pace_text_ms / 1000;
  read_seconds_ms("CU_PACE_TEXT_MS", &pace_text_secs, 10);
  c.pace_text_ms = pace_text_secs * 1000;
  double pace_max_secs = c.pace_max_ms / 1000;
  read_seconds_ms("CU_PACE_MAX_MS", &pace_max_secs, 60);
  c.pace_max_ms = pace_max_secs * 1000;
  read_count("CU_MAX_RESULT_BYTES", &c.max_result_bytes, 65536, size_t{1} << 31);
  double delay_secs = c.type_delay_ms / 1000;
  if (const char* v = env("CU_TYPE_DELAY_MS")) {
    char* end = nullptr;
    double ms = strtod(v, &end);
    if (end == v || *end != '\0' || !std::isfinite(ms) || ms < 0 || ms > 1000) {
      log(log_level::warn, "ignoring CU_TYPE_DELAY_MS=\"%s\": expected milliseconds from 0 to 1000", v);
    } else {
      delay_secs = ms / 1000;
    }
  }
  c.type_delay_ms = delay_secs * 1000;
  if (const char* v = env("CU_INPUT_GUARD")) c.input_guard = strcmp(v, "0") != 0;
  size_t workers = std::max(2u, std::thread::hardware_concurrency());
  read_count("CU_CAPTURE_WORKERS", &workers, 1, 64);
  c.capture_workers = int(std::max<size_t>(2, workers));
  if (const char* v = env("CU_TRACE_DIR")) c.trace_dir = v;
  if (const char* v = env("CU_TRACE_REDACT_TEXT")) c.trace_redact_text = strcmp(v, "0") != 0;
  read_count("CU_TRACE_MAX_BYTES", &c.trace_max_bytes, 65536, size_t{1} << 40);
  read_count("CU_TRACE_KEEP", &c.trace_keep, 1, 100000);
  if (const char* v = getenv("CU_GRANTS")) c.grants = v;
  if (const char* v = getenv("CU_DENY_APPS")) c.deny_apps = v;
  if (const char* v = getenv("CU_ALLOW_APPS")) c.allow_apps = v;
  if (const char* v = getenv("CU_GRANTS_FILE")) c.grants_file = v;
  if (const char* v = getenv("CU_GRANTS_DESKTOP")) c.grants_desktop = v;
  return c;
}

}  // namespace cu
