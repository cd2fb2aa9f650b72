#include "input/actor.h"

namespace cu {

result<xcb_connection_t*> input_context::connection() {
  if (conn_ && !xcb_connection_has_error(conn_.get())) return conn_.get();
  conn_.reset();
  int screen = 0;
  auto c = x11_connect(display_, &screen);
  if (!c) return c.take_error();
  conn_ = std::move(*c);
  return conn_.get();
}

void input_context::release_all() {
  // The input issue fills this in together with the held-state bookkeeping;
  // until then the actor never presses anything, so nothing can be held.
}

input_actor::input_actor(std::string display, completion_queue& done)
    : ctx_(std::move(display)), done_(done), thread_(&input_actor::thread_main, this) {}

input_actor::~input_actor() { stop(); }

void input_actor::post(input_job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mailbox_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void input_actor::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void input_actor::thread_main() {
  for (;;) {
    input_job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !mailbox_.empty(); });
      if (mailbox_.empty()) break;
      job = std::move(mailbox_.front());
      mailbox_.pop_front();
    }
    completion c;
    c.seq = job.seq;
    c.was_input = true;
    c.line = render_tool_response(job.id_json, job.run(ctx_));
    done_.push(std::move(c));
  }
  ctx_.release_all();
}

}  // namespace cu
