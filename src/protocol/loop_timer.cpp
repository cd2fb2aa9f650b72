#include "protocol/loop_timer.h"

namespace cu {
namespace {

struct loop_timer {
  uv_timer_t handle;
  std::function<void()> fire;
};

}  // namespace

uv_timer_t* start_loop_timer(uv_loop_t* loop, uint64_t ms, uint64_t repeat_ms,
                             std::function<void()> fire) {
  auto* t = new loop_timer{{}, std::move(fire)};
  uv_timer_init(loop, &t->handle);
  t->handle.data = t;
  uv_timer_start(
      &t->handle, [](uv_timer_t* h) { static_cast<loop_timer*>(h->data)->fire(); }, ms,
      repeat_ms);
  return &t->handle;
}

void stop_loop_timer(uv_timer_t*& t) {
  if (t == nullptr) return;
  uv_timer_stop(t);
  uv_close(reinterpret_cast<uv_handle_t*>(t),
           [](uv_handle_t* h) { delete static_cast<loop_timer*>(h->data); });
  t = nullptr;
}

}  // namespace cu
