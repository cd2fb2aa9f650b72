#include "a11y/a11y.h"

#include <glib.h>

#include <algorithm>

#include "a11y/app_ops.h"
#include "a11y/app_window.h"
#include "util/log.h"

namespace cu {

namespace {

class function_op : public a11y_op {
 public:
  explicit function_op(std::function<std::optional<tool_result>(const a11y_control&)> f)
      : f_(std::move(f)) {}
  std::optional<tool_result> run(const a11y_control& c) override { return f_(c); }

 private:
  std::function<std::optional<tool_result>(const a11y_control&)> f_;
};

}  // namespace

std::unique_ptr<a11y_op> make_a11y_function(
    std::function<std::optional<tool_result>(const a11y_control&)> f) {
  return std::make_unique<function_op>(std::move(f));
}

a11y::a11y(std::string display, completion_queue& done)
    : display_(std::move(display)), done_(done), context_(g_main_context_new()) {
  thread_ = std::thread(&a11y::thread_main, this);
}

a11y::~a11y() {
  stop();
  g_main_context_unref(context_);
}

void a11y::post(a11y_job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  g_main_context_wakeup(context_);
}

void a11y::cancel(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(seq);
  }
  g_main_context_wakeup(context_);
}

void a11y::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  g_main_context_wakeup(context_);
  if (thread_.joinable()) thread_.join();
}

bool a11y::is_cancelled(uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::find(cancels_.begin(), cancels_.end(), seq) != cancels_.end();
}

void a11y::thread_main() {
  // libatspi sets its connection up on the thread-default context when it
  // connects (atspi_init uses the global default; atspi_set_main_context
  // moves it here), and its blocking calls dispatch on that connection.
  g_main_context_push_thread_default(context_);
  bool connected = false;
  // Made and destroyed on this thread: they hold libatspi objects and an
  // X connection of this thread's.
  app_windows windows(display_);
  std::shared_ptr<a11y_memory> memory = make_a11y_memory();
  for (;;) {
    std::optional<a11y_job> job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A cancelled job still queued is answered with nothing, and never runs.
      for (auto it = queue_.begin(); it != queue_.end();) {
        if (std::find(cancels_.begin(), cancels_.end(), it->seq) != cancels_.end()) {
          done_.push(job_done(*it, std::nullopt));
          std::erase(cancels_, it->seq);
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      // Cancels of requests that already finished have nothing left to stop.
      if (queue_.empty()) cancels_.clear();
      if (!queue_.empty()) {
        job = std::move(queue_.front());
        queue_.pop_front();
      } else if (stopping_) {
        break;
      }
    }
    if (!job) {
      // Sleeps until a bus message, a timer of libatspi's, or a wake-up.
      g_main_context_iteration(context_, TRUE);
      continue;
    }
    std::optional<tool_result> r;
    if (!connected) {
      auto c = a11y_connect(context_, windows.root_names_a11y_bus());
      if (c) {
        connected = true;
      } else {
        r = tool_result::failure(c.err());
      }
    }
    if (connected && !r) {
      a11y_control control;
      control.deadline = a11y_clock::now() + job->op->budget;
      control.call_timeout_ms = job->op->call_timeout_ms;
      uint64_t seq = job->seq;
      control.cancelled = [this, seq] { return is_cancelled(seq); };
      control.windows = &windows;
      control.memory = memory.get();
      r = job->op->run(control);
    }
    if (is_cancelled(job->seq)) r.reset();
    done_.push(job_done(*job, std::move(r)));
    std::lock_guard<std::mutex> lock(mu_);
    std::erase(cancels_, job->seq);
  }
  memory.reset();
  g_main_context_pop_thread_default(context_);
}

}  // namespace cu
