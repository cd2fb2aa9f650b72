// Owns: diagnostic output on stderr. stdout carries only protocol.
// Thread affinity: any thread; each call writes one whole line.
#pragma once

#include <cstdarg>

namespace cu {

enum class log_level { debug, info, warn, error };

// Messages below this level are dropped; set from CU_LOG_LEVEL at start-up.
void set_log_level(log_level level);
log_level parse_log_level(const char* text, log_level fallback);

void log(log_level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace cu
