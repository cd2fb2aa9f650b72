#include "capture/pool.h"

#include <algorithm>

#include "capture/capture.h"
#include "capture/find_text.h"
#include "capture/grabber.h"
#include "util/log.h"
#include "util/threads.h"

namespace cu {

capture_pool::capture_pool(capture_config config, completion_queue& done)
    : config_(std::move(config)), done_(done), damage_(config_.display, *config_.generation),
      recognizer_(std::make_unique<text_recognizer>(done)) {
  int n = std::max(2, config_.workers);
  // Every worker counts as idle from the start: a job posted while worker 0
  // is still connecting waits for it rather than wake another's segment.
  idle_.assign(size_t(n), 1);
  threads_.reserve(size_t(n));
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back(&capture_pool::worker_main, this, i);
    name_thread(threads_.back(), "cu-capture");
  }
}

capture_pool::~capture_pool() { stop(); }

void capture_pool::post(capture_job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  // The lowest idle worker takes it (see worker_main): wake them all.
  cv_.notify_all();
}

void capture_pool::cancel(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(queue_.begin(), queue_.end(),
                           [&](const capture_job& j) { return j.seq == seq; });
    if (it != queue_.end()) {
      completion c = job_done(*it, std::nullopt);
      c.was_capture = true;
      queue_.erase(it);
      done_.push(std::move(c));
      return;
    }
  }
  // Under way on a worker, or already with the recognizer. (A cancel that
  // comes while a worker grabs for find_text lets the recognition run; the
  // loop drops its answer.)
  recognizer_->cancel(seq);
}

void capture_pool::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  // After the workers: they may still have posted to it.
  recognizer_->stop();
}

void capture_pool::worker_main(int index) {
  grabber g(config_.display, *config_.generation);
  if (config_.window_pixels) g.keep_window_pixels();
  // Connect (and attach SHM) ahead of the first request, so it does not pay
  // for the set-up. Failure is fine: every job tries again.
  if (auto r = g.screen_rect(); r) {
    (void)g.grab(rect{0, 0, 1, 1});
    log(log_level::debug, "capture worker %d: %s", index, g.transport());
  }
  for (;;) {
    capture_job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // A job goes to the lowest-numbered idle worker, so a client that
      // asks for one capture at a time is served by worker 0 alone: the
      // others' shared-memory segments (a whole screen each) stay untouched
      // and out of the resident set, and worker 0's buffers stay warm. The
      // others lend a hand with its encodes (helpers_) and take jobs when
      // the workers below them are busy.
      auto lower_idle = [&] {
        return std::find(idle_.begin(), idle_.begin() + index, uint8_t(1)) !=
               idle_.begin() + index;
      };
      idle_[size_t(index)] = 1;
      cv_.wait(lock, [&] {
        return stopping_ || !helpers_.empty() || (!queue_.empty() && !lower_idle());
      });
      idle_[size_t(index)] = 0;
      // Parts of a running job first: someone is waiting for them.
      if (!helpers_.empty()) {
        run_helper(helpers_.front(), lock);
        continue;
      }
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    std::optional<coord_session> session;
    // One view for the whole job: all its grabs hide alike, and what it
    // caches is marked with that view's epoch.
    std::shared_ptr<const grant_view> view;
    if (config_.grants != nullptr) view = config_.grants->view();
    const uint64_t view_epoch = view && view->filtering() ? view->epoch : 0;
    g.use_view(std::move(view));
    const capture_env env{config_.save_dir, *this,   &damage_,
                          cache_,           config_.format, config_.max_result_bytes,
                          recognizer_.get(), view_epoch, 0, nullptr};
    std::optional<tool_result> r = run_capture(g, job, env, &session);
    if (!r) {
      // Handed on (find_text's recognition), which completes it.
      std::lock_guard<std::mutex> lock(mu_);
      idle_[size_t(index)] = 1;
      continue;
    }
    completion c = job_done(job, std::move(*r));
    c.was_capture = true;
    c.session = std::move(session);
    {
      // Idle before the answer leaves: the next request may follow it at
      // once, and must not find this worker busy and go to another.
      std::lock_guard<std::mutex> lock(mu_);
      idle_[size_t(index)] = 1;
    }
    done_.push(std::move(c));
  }
}

void capture_pool::run_helper(helper_task* t, std::unique_lock<std::mutex>& lock) {
  helpers_.erase(std::find(helpers_.begin(), helpers_.end(), t));
  t->st = helper_task::state::running;
  lock.unlock();
  (*t->run)();
  lock.lock();
  t->st = helper_task::state::done;
  helped_.notify_all();
}

void capture_pool::run_all(std::span<const std::function<void()>> tasks) {
  if (tasks.empty()) return;
  std::vector<helper_task> parts(tasks.size() - 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 1; i < tasks.size(); ++i) {
      parts[i - 1].run = &tasks[i];
      helpers_.push_back(&parts[i - 1]);
    }
  }
  cv_.notify_all();
  tasks[0]();
  for (helper_task& t : parts) {
    std::unique_lock<std::mutex> lock(mu_);
    // Nobody was free to take it: run it here.
    if (t.st == helper_task::state::queued) run_helper(&t, lock);
    helped_.wait(lock, [&] { return t.st == helper_task::state::done; });
  }
}

}  // namespace cu
