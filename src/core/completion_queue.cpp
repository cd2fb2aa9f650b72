#include "core/completion_queue.h"

namespace cu {

completion_queue::completion_queue(uv_loop_t* loop, handler on_ready)
    : on_ready_(std::move(on_ready)) {
  uv_async_init(loop, &async_, &completion_queue::on_async);
  async_.data = this;
}

void completion_queue::push(completion c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    pending_.push_back(std::move(c));
  }
  // uv_async_send coalesces: many pushes may wake the loop once, which is why
  // the handler takes the whole queue.
  uv_async_send(&async_);
}

void completion_queue::on_async(uv_async_t* h) {
  auto* self = static_cast<completion_queue*>(h->data);
  std::vector<completion> batch;
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    batch.swap(self->pending_);
  }
  if (!batch.empty()) self->on_ready_(batch);
}

void completion_queue::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    pending_.clear();
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
}

}  // namespace cu
