// Owns: one-shot and repeating timers on the loop that run a function, and
// whose handles free themselves once closed.
// Thread affinity: the loop thread.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>

namespace cu {

// Starts a timer that runs fire after ms, then every repeat_ms (0: once).
uv_timer_t* start_loop_timer(uv_loop_t* loop, uint64_t ms, uint64_t repeat_ms,
                             std::function<void()> fire);

// Stops and closes t (its memory is freed once the loop has closed it) and
// sets it to null; nothing when it is null already.
void stop_loop_timer(uv_timer_t*& t);

}  // namespace cu
