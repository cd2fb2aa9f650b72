#include "util/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace cu {
namespace {
std::atomic<log_level> g_level{log_level::info};
std::mutex g_sink_mu;
log_sink g_sink;
std::atomic<int> g_sink_level{99};  // Above every level: no sink.
const char* const kNames[] = {"debug", "info", "warn", "error"};
}  // namespace

void set_log_level(log_level level) { g_level.store(level); }

log_level parse_log_level(const char* text, log_level fallback) {
  if (text == nullptr) return fallback;
  for (int i = 0; i < 4; ++i) {
    if (strcasecmp(text, kNames[i]) == 0) return static_cast<log_level>(i);
  }
  return fallback;
}

void set_log_sink(log_sink sink, log_level min_level) {
  std::lock_guard<std::mutex> lock(g_sink_mu);
  g_sink_level.store(sink ? static_cast<int>(min_level) : 99);
  g_sink = std::move(sink);
}

bool log_wanted(log_level level) {
  return level >= g_level.load(std::memory_order_relaxed) ||
         static_cast<int>(level) >= g_sink_level.load(std::memory_order_relaxed);
}

void log(log_level level, const char* fmt, ...) {
  bool to_stderr = level >= g_level.load(std::memory_order_relaxed);
  bool to_sink = static_cast<int>(level) >= g_sink_level.load(std::memory_order_relaxed);
  if (!to_stderr && !to_sink) return;
  // Format into one buffer and write it with one write(2), so lines from
  // different threads never interleave.
  char buf[2048];
  int n = snprintf(buf, sizeof buf, "computer-use-mcp: %s: ", kNames[static_cast<int>(level)]);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, fmt, ap);
  va_end(ap);
  size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : static_cast<size_t>(m));
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  if (to_sink) {
    std::lock_guard<std::mutex> lock(g_sink_mu);
    if (g_sink) g_sink(level, std::string_view(buf + n, len - static_cast<size_t>(n)));
  }
  if (!to_stderr) return;
  buf[len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
}

}  // namespace cu
