#include "protocol/progress.h"

#include <algorithm>
#include <cmath>

#include "core/json_writer.h"
#include "protocol/loop_timer.h"

namespace cu {

void progress_notes::start(uint64_t seq, std::string token,
                           std::chrono::steady_clock::time_point started) {
  call& c = calls_[seq];
  c.token = std::move(token);
  c.started = started;
  c.ticker = start_loop_timer(loop_, 1000, 1000, [this, seq] { send(seq); });
}

void progress_notes::set_total(uint64_t seq, double seconds) {
  auto it = calls_.find(seq);
  if (it != calls_.end()) it->second.total = seconds;
}

void progress_notes::stop(uint64_t seq) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  stop_loop_timer(it->second.ticker);
  calls_.erase(it);
}

void progress_notes::send(uint64_t seq, std::string_view note) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  call& c = it->second;
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - c.started).count();
  // Progress only ever grows (the protocol says so); a note may come
  // within the tenth of a second of a tick.
  const double progress = std::max(std::round(elapsed * 10) / 10, c.sent + 0.1);
  c.sent = progress;
  std::string line;
  json_writer w(line);
  w.begin_object().key("jsonrpc").string("2.0").key("method").string("notifications/progress");
  w.key("params").begin_object().key("progressToken").raw(c.token);
  w.key("progress").number(std::round(progress * 10) / 10);
  if (c.total > 0) w.key("total").number(c.total);
  const std::string own = describe_(seq);
  if (!own.empty()) {
    w.key("message").string(own);
  } else if (!note.empty()) {
    w.key("message").string(note);
  }
  w.end_object().end_object();
  line.push_back('\n');
  out_.send(std::move(line));
}

}  // namespace cu
