#include "protocol/executors.h"

#include "protocol/loop_timer.h"

namespace cu {

void timer_executor::start(uint64_t seq, uint64_t ms, std::function<void()> fire) {
  stop(seq);
  timers_[seq] = start_loop_timer(loop_, ms, 0, [this, seq, fire = std::move(fire)] {
    stop(seq);
    fire();
  });
}

void timer_executor::stop(uint64_t seq) {
  auto it = timers_.find(seq);
  if (it == timers_.end()) return;
  stop_loop_timer(it->second);
  timers_.erase(it);
}

}  // namespace cu
