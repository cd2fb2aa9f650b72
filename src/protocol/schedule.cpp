#include "protocol/schedule.h"

#include <algorithm>

#include "protocol/loop_timer.h"
#include "util/log.h"

namespace cu {

void capture_schedule::submit(capture_job job) {
  if (auto ready = settled_at()) {
    // Input came just before: the screen may still be changing.
    const uint64_t seq = job.seq;
    settling_[seq].job = std::move(job);
    arm_settle(seq, *ready);
    return;
  }
  backlog_.push_back(std::move(job));
  pump();
}

bool capture_schedule::cancel(uint64_t seq) {
  if (auto s = settling_.find(seq); s != settling_.end()) {
    stop_loop_timer(s->second.timer);
    settling_.erase(s);
    return true;
  }
  auto queued = std::find_if(backlog_.begin(), backlog_.end(),
                             [&](const capture_job& j) { return j.seq == seq; });
  if (queued != backlog_.end()) {
    backlog_.erase(queued);
    return true;
  }
  pool_.cancel(seq);
  return false;
}

bool capture_schedule::on_completion(const completion& c) {
  if (c.was_capture) --in_pool_;
  // The worker has posted the call's rest elsewhere: the next capture may
  // take its place, while the call waits for its real completion.
  if (c.handed_on) {
    pump();
    return true;
  }
  if (texts_out_.erase(c.seq) != 0) pump();
  return false;
}

std::optional<capture_schedule::clock::time_point> capture_schedule::settled_at() const {
  if (cfg_.screenshot_delay_secs <= 0 || !last_input_) return std::nullopt;
  auto secs = [](double s) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
  };
  // The bound: CU_SCREENSHOT_DELAY after the input, whatever the screen does.
  const clock::time_point bound = *last_input_ + secs(cfg_.screenshot_delay_secs);
  clock::time_point ready = bound;
  const damage_monitor& damage = pool_.damage();
  if (damage.watching()) {
    // Quiet for CU_SETTLE_QUIET_MS since the input and since the last change.
    clock::time_point quiet_from = *last_input_;
    if (auto changed = damage.last_change(); changed && *changed > quiet_from) {
      quiet_from = *changed;
    }
    ready = std::min(bound, quiet_from + secs(cfg_.settle_quiet_ms / 1000));
  }
  if (ready <= clock::now()) return std::nullopt;
  return ready;
}

void capture_schedule::arm_settle(uint64_t seq, clock::time_point ready) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(ready - clock::now());
  settling_.at(seq).timer =
      start_loop_timer(loop_, uint64_t(std::max<int64_t>(0, ms.count())), 0, [this, seq] {
        auto it = settling_.find(seq);
        if (it == settling_.end()) return;
        stop_loop_timer(it->second.timer);
        // The screen changed while we waited: wait for quiet again.
        if (auto again = settled_at()) return arm_settle(seq, *again);
        backlog_.push_back(std::move(it->second.job));
        settling_.erase(it);
        pump();
      });
}

void capture_schedule::pump() {
  // Enough jobs queued that no worker idles, few enough that the images
  // they make fit the stdout bound.
  const size_t depth = 2 * size_t(pool_.workers());
  auto next = backlog_.begin();
  while (next != backlog_.end() && in_pool_ < depth) {
    if (out_.waiting_bytes() > kStdoutHighBytes) {
      if (!held_) {
        held_ = true;
        log(log_level::debug,
            "backpressure: %zu bytes of answers unread; %zu captures wait for the client",
            out_.waiting_bytes(), backlog_.size());
      }
      return;
    }
    held_ = false;
    // A find_text's grab leaves a grey copy of the area waiting for the
    // recognizer, which reads one at a time: past kTextsOut such calls it
    // waits here, holding nothing, and the captures behind it go first.
    if (next->what == capture_job::kind::find_text) {
      if (texts_out_.size() >= kTextsOut) {
        ++next;
        continue;
      }
      texts_out_.insert(next->seq);
    }
    ++in_pool_;
    pool_.post(std::move(*next));
    next = backlog_.erase(next);
  }
}

}  // namespace cu
