#include "input/actor.h"

#include <algorithm>
#include <cstdio>
#include <thread>
#include <utility>

#include "util/log.h"
#include "util/seconds_text.h"
#include "util/threads.h"

namespace cu {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             clock_type::now().time_since_epoch())
      .count();
}

// How often the actor looks at its connection while a hold lasts.
constexpr auto kHoldCheck = std::chrono::milliseconds(250);

// Why holds end early when the server stops.
const std::string kStopping = "the server is stopping; the keys are released";

}  // namespace

input_actor::input_actor(input_config cfg, input_guard guard, server_generation& generation,
                         completion_queue& done)
    : cfg_(std::move(cfg)),
      generations_(generation),
      ctx_(cfg_.display, std::move(guard), cfg_.type_delay_ms, generation, cfg_.marker),
      done_(done),
      last_activity_ns_(now_ns()) {
  ctx_.wait_until = [this](clock_type::time_point t) { return serve_until(t); };
  ctx_.set_pacing(cfg_.pacing);
  ctx_.on_event = cfg_.on_event;
  ctx_.before_event = cfg_.before_event;
  ctx_.grants = cfg_.grants;
  thread_ = std::thread(&input_actor::thread_main, this);
  name_thread(thread_, "cu-input");
}

input_actor::~input_actor() { stop(); }

void input_actor::post(input_job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mailbox_.emplace_back(std::move(job));
  }
  cv_.notify_one();
}

void input_actor::cancel(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(mailbox_.begin(), mailbox_.end(), [&](const actor_message& m) {
      auto* j = std::get_if<input_job>(&m);
      return j != nullptr && j->seq == seq;
    });
    if (it != mailbox_.end()) {
      // Never started: nothing to undo.
      done_.push(job_done(std::get<input_job>(*it), std::nullopt));
      mailbox_.erase(it);
      return;
    }
    cancels_.push_back(seq);
  }
  cv_.notify_one();
}

void input_actor::end_holds() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mailbox_.emplace_back(end_holds_message{});
  }
  cv_.notify_one();
}

void input_actor::release_lease(uint64_t lease) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mailbox_.emplace_back(release_lease_message{lease});
  }
  cv_.notify_one();
}

void input_actor::display_lost() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    display_lost_ = true;
  }
  cv_.notify_one();
}

std::deque<actor_message>::iterator input_actor::next_message() {
  return std::find_if(mailbox_.begin(), mailbox_.end(), [&](const actor_message& m) {
    auto* j = std::get_if<input_job>(&m);
    return j == nullptr || lease_ == 0 || j->lease == lease_;
  });
}

void input_actor::note_activity() { last_activity_ns_.store(now_ns(), std::memory_order_relaxed); }

void input_actor::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void input_actor::complete(uint64_t seq, const reply_to& reply, std::optional<tool_result> r) {
  completion c = job_done(seq, reply, std::move(r));
  c.was_input = true;
  done_.push(std::move(c));
}

clock_type::time_point input_actor::next_deadline() const {
  auto t = clock_type::time_point::max();
  for (const hold& h : holds_) t = std::min(t, h.until);
  if (!holds_.empty()) t = std::min(t, next_hold_check_);
  if (auto r = ctx_.restore_due()) t = std::min(t, *r);
  if (cfg_.idle_release_secs > 0 && ctx_.holds_anything()) {
    auto last = clock_type::time_point(
        std::chrono::nanoseconds(last_activity_ns_.load(std::memory_order_relaxed)));
    t = std::min(t, last + std::chrono::duration_cast<clock_type::duration>(
                               std::chrono::duration<double>(cfg_.idle_release_secs)));
  }
  return t;
}

void input_actor::finish_hold(hold& h, std::optional<std::string> why) {
  ctx_.release_keys(h.keys);
  auto synced = ctx_.sync();
  if (!why && !synced) {
    // The keys went up with the server, not at the deadline.
    why = synced.err().message + " during the hold; nothing is held on the display";
  }
  if (why) {
    h.result = tool_result::failure("hold_key ended early after " +
                                    elapsed_text(clock_type::now() - h.started) + "s: " + *why);
  }
  complete(h.seq, h.reply, std::move(h.result));
}

void input_actor::end_holds_early(const std::string& why) {
  for (hold& h : holds_) finish_hold(h, why);
  holds_.clear();
}

bool input_actor::serve_once(std::unique_lock<std::mutex>& lock) {
  std::vector<uint64_t> cancels;
  cancels.swap(cancels_);
  bool lost = std::exchange(display_lost_, false);
  lock.unlock();
  bool stop_running = false;
  // While something is held, look at the connection now and then as well:
  // the desktop thread's news of a lost server comes only if it was
  // connected to it. Either way, say so now, not at the holds' deadlines
  // as if they had lasted.
  auto checked = clock_type::now();
  if (!holds_.empty() && (lost || checked >= next_hold_check_)) {
    next_hold_check_ = checked + kHoldCheck;
    bool alive = lost ? ctx_.confirm_connected() : ctx_.still_connected();
    if (!alive) {
      end_holds_early("lost the connection to X display " + cfg_.display +
                      " (the X server went away); nothing is held on the display");
    }
  }
  for (uint64_t seq : cancels) {
    if (seq == running_seq_ && running_seq_ != 0) {
      running_cancelled_ = true;
      stop_running = true;
      continue;
    }
    auto it = std::find_if(holds_.begin(), holds_.end(), [&](const hold& h) { return h.seq == seq; });
    if (it != holds_.end()) {
      ctx_.release_keys(it->keys);
      ctx_.sync();
      complete(seq, {}, std::nullopt);
      holds_.erase(it);
    }
  }
  auto now = clock_type::now();
  for (size_t i = 0; i < holds_.size();) {
    if (holds_[i].until <= now) {
      finish_hold(holds_[i], std::nullopt);
      holds_.erase(holds_.begin() + ptrdiff_t(i));
    } else {
      ++i;
    }
  }
  if (running_seq_ == 0) {
    if (auto r = ctx_.restore_due(); r && *r <= now) ctx_.restore_borrowed();
    if (cfg_.idle_release_secs > 0 && ctx_.holds_anything()) {
      auto last = clock_type::time_point(
          std::chrono::nanoseconds(last_activity_ns_.load(std::memory_order_relaxed)));
      if (now - last >= std::chrono::duration<double>(cfg_.idle_release_secs)) {
        log(log_level::info, "no request for %gs: releasing held input", cfg_.idle_release_secs);
        end_holds_early("no request for " +
                        seconds_text(std::chrono::duration<double>(cfg_.idle_release_secs)) +
                        "s, so the idle release (CU_IDLE_RELEASE_SECS) let go of everything "
                        "held");
        ctx_.release_all();
      }
    }
  }
  lock.lock();
  return stop_running || running_cancelled_;
}

bool input_actor::serve_until(clock_type::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (serve_once(lock)) return false;
    if (clock_type::now() >= deadline) return true;
    auto wake = deadline;
    for (const hold& h : holds_) wake = std::min(wake, h.until);
    if (!holds_.empty()) wake = std::min(wake, next_hold_check_);
    cv_.wait_until(lock, wake, [&] { return !cancels_.empty() || display_lost_; });
  }
}

void input_actor::handle(actor_message& m) {
  if (auto* job = std::get_if<input_job>(&m)) return run_job(*job);
  last_read_only_ = false;
  if (auto* r = std::get_if<release_lease_message>(&m)) {
    if (lease_ == r->lease) lease_ = 0;
    return;
  }
  // end_holds: stdin is closed, so nothing held may outlast the answers.
  end_holds_early(kStopping);
  ctx_.release_all();
}

void input_actor::run_job(input_job& job) {
  if (job.lease != 0) lease_ = job.lease;
  if (auto live = ctx_.begin_job(); !live) {
    last_read_only_ = false;
    complete(job.seq, job.reply, tool_result::failure(live.err()));
    return;
  }
  if (job.generation != 0 && job.generation != generations_.current()) {
    // The coordinates were mapped through a screenshot of a server that
    // has since gone away; the new one's screen may be another size.
    last_read_only_ = false;
    complete(job.seq, job.reply,
             tool_result::failure("no screenshot session yet: X display " + cfg_.display +
                                  " restarted after the screenshot these coordinates refer "
                                  "to; take a new screenshot first"));
    return;
  }
  if (!(job.read_only && last_read_only_)) ctx_.forget_pointer();
  last_read_only_ = job.read_only;
  running_seq_ = job.seq;
  ctx_.event_seq = job.seq;
  running_cancelled_ = false;
  // Input right after input waits until the application has taken it
  // (docs/input.md, "Pacing"); a cancellation meanwhile ends the job
  // before it sends anything. Queries never wait.
  if (!job.read_only && !ctx_.pace() && running_cancelled_) {
    running_seq_ = 0;
    running_cancelled_ = false;
    complete(job.seq, reply_to::result(), std::nullopt);
    return;
  }
  job_control ctl;
  tool_result r = job.run(ctx_, ctl);
  if (!job.read_only) ctx_.note_input();
  bool cancelled = running_cancelled_;
  running_seq_ = 0;
  ctx_.event_seq = 0;
  running_cancelled_ = false;
  if (cancelled) {
    ctx_.release_keys(ctl.held_keys);
    ctx_.sync();
    complete(job.seq, reply_to::result(), std::nullopt);
    return;
  }
  if (ctl.answer_at) {
    holds_.push_back(hold{job.seq, std::move(job.reply), clock_type::now(), *ctl.answer_at,
                          std::move(ctl.held_keys), std::move(r)});
    return;
  }
  complete(job.seq, job.reply, std::move(r));
}

void input_actor::thread_main() {
  // Connect at once, so a button a crashed predecessor left down is
  // released at start-up rather than at the first call.
  if (auto c = ctx_.begin_job(); !c) {
    log(log_level::warn, "input: %s (will retry on the first input call)", c.err().message.c_str());
  }
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    serve_once(lock);
    if (auto next = next_message(); next != mailbox_.end()) {
      actor_message m = std::move(*next);
      mailbox_.erase(next);
      lock.unlock();
      handle(m);
      lock.lock();
      continue;
    }
    if (stopping_) break;
    last_read_only_ = false;  // Time passes: the next query asks X again.
    auto deadline = next_deadline();
    auto pred = [&] { return stopping_ || next_message() != mailbox_.end() || !cancels_.empty() ||
                             display_lost_; };
    if (deadline == clock_type::time_point::max()) {
      cv_.wait(lock, pred);
    } else {
      cv_.wait_until(lock, deadline, pred);
    }
  }
  lock.unlock();
  end_holds_early(kStopping);
  // Keys and buttons go up at once. Characters typed on borrowed keycodes
  // may still wait in a program's queue (a busy GTK program reads them
  // after the answer has gone): it reads each with the keymap it has then,
  // so the keycodes are given back when they would have been had the
  // server gone on, a second after their last use at most.
  ctx_.release_held();
  if (auto due = ctx_.restore_due()) std::this_thread::sleep_until(*due);
  ctx_.restore_borrowed();
}

}  // namespace cu
