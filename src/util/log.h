// Owns: diagnostic output on stderr. stdout carries only protocol.
// Thread affinity: any thread; each call writes one whole line.
#pragma once

#include <cstdarg>
#include <functional>
#include <string_view>

namespace cu {

enum class log_level { debug, info, warn, error };

// Messages below this level are dropped; set from CU_LOG_LEVEL at start-up.
void set_log_level(log_level level);
log_level parse_log_level(const char* text, log_level fallback);

void log(log_level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Whether a line at this level would go anywhere (stderr or the sink): for
// callers that would otherwise gather what to log on every request.
bool log_wanted(log_level level);

// A second destination for log lines (MCP notifications/message): called,
// from the logging thread, for every line at or above min_level, whatever
// the stderr level. Installing replaces the previous sink; an empty
// function removes it. Thread-safe.
using log_sink = std::function<void(log_level, std::string_view message)>;
void set_log_sink(log_sink sink, log_level min_level);

}  // namespace cu
