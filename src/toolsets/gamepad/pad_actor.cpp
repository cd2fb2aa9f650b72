#include "toolsets/gamepad/pad_actor.h"

#include <algorithm>
#include <utility>

#include "util/log.h"
#include "util/seconds_text.h"
#include "util/str_cat.h"
#include "util/threads.h"

namespace cu {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             pad_actor::clock::now().time_since_epoch())
      .count();
}

const std::string kStopping = "the server is stopping; the controller is let go";

std::string_view tool_of(pad_request::kind k) {
  switch (k) {
    case pad_request::kind::button: return "gamepad_button";
    case pad_request::kind::dpad: return "gamepad_dpad";
    case pad_request::kind::trigger: return "gamepad_trigger";
    case pad_request::kind::stick: return "gamepad_stick";
    case pad_request::kind::reset: return "gamepad_reset";
    case pad_request::kind::state: return "gamepad_state";
  }
  return "gamepad";
}

// The input a request sets, for telling whether two holds touch the same one.
int input_of(const pad_request& r) { return int(r.what) * 16 + r.index; }

std::string input_name(const pad_request& r) {
  switch (r.what) {
    case pad_request::kind::button: return std::string(button_name(pad_button(r.index)));
    case pad_request::kind::dpad: return str_cat("D-pad ", dir_name(pad_dir(r.index)));
    case pad_request::kind::trigger: return r.index == 0 ? "LT" : "RT";
    case pad_request::kind::stick: return r.index == 0 ? "the left stick" : "the right stick";
    default: return "the controller";
  }
}

// What r does to s (a tap's press; the hold's end is undo's).
void change(pad_state& s, const pad_request& r) {
  bool down = r.how != pad_request::mode::release;
  switch (r.what) {
    case pad_request::kind::button: s.set_button(pad_button(r.index), down); break;
    case pad_request::kind::dpad: s.set_dir(pad_dir(r.index), down); break;
    case pad_request::kind::trigger: s.trigger[r.index] = uint8_t(r.pressure); break;
    case pad_request::kind::stick:
      s.stick[r.index][0] = r.x;
      s.stick[r.index][1] = r.y;
      break;
    case pad_request::kind::reset: s = pad_state{}; break;
    case pad_request::kind::state: break;
  }
}

// Whether s still shows what r set.
bool still_set(const pad_state& s, const pad_request& r) {
  switch (r.what) {
    case pad_request::kind::button: return s.button(pad_button(r.index));
    case pad_request::kind::dpad: return s.dir(pad_dir(r.index));
    case pad_request::kind::trigger: return s.trigger[r.index] == r.pressure;
    case pad_request::kind::stick: return s.stick[r.index][0] == r.x && s.stick[r.index][1] == r.y;
    default: return false;
  }
}

// Lets go of what r set: up, released, centred.
void let_go(pad_state& s, const pad_request& r) {
  switch (r.what) {
    case pad_request::kind::button: s.set_button(pad_button(r.index), false); break;
    case pad_request::kind::dpad: s.set_dir(pad_dir(r.index), false); break;
    case pad_request::kind::trigger: s.trigger[r.index] = 0; break;
    case pad_request::kind::stick: s.stick[r.index][0] = s.stick[r.index][1] = 0; break;
    default: break;
  }
}

std::string did_text(const pad_request& r, std::optional<int> held_ms) {
  std::string what = input_name(r);
  std::string held = held_ms ? str_cat(" for ", std::to_string(*held_ms), " ms") : std::string();
  switch (r.what) {
    case pad_request::kind::button:
    case pad_request::kind::dpad:
      switch (r.how) {
        case pad_request::mode::tap: return str_cat("tapped ", what, held);
        case pad_request::mode::press: return str_cat("pressed ", what);
        default: return str_cat("released ", what);
      }
    case pad_request::kind::trigger:
      return str_cat("set ", what, " to ", std::to_string(r.pressure), held,
                     held.empty() ? "" : ", then back to 0");
    case pad_request::kind::stick:
      return str_cat("moved ", what, " to (", std::to_string(r.x), ", ", std::to_string(r.y), ")",
                     held, held.empty() ? "" : ", then centred");
    case pad_request::kind::reset: return "let go of everything";
    case pad_request::kind::state: return "read the state";
  }
  return "";
}

}  // namespace

pad_actor::pad_actor(std::string uinput_path, double idle_release_secs, guard_devices guard,
                     completion_queue& done)
    : path_(std::move(uinput_path)),
      idle_release_secs_(idle_release_secs),
      guard_(std::move(guard)),
      done_(done),
      last_activity_ns_(now_ns()) {
  thread_ = std::thread(&pad_actor::thread_main, this);
  name_thread(thread_, "cu-pad");
}

pad_actor::~pad_actor() { stop(); }

void pad_actor::post(pad_job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mailbox_.push_back(message{message::kind::job, std::move(job), 0});
  }
  cv_.notify_one();
}

void pad_actor::cancel(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(mailbox_.begin(), mailbox_.end(), [&](const message& m) {
      return m.what == message::kind::job && m.job.seq == seq;
    });
    if (it != mailbox_.end()) {
      done_.push(job_done(it->job, std::nullopt));
      mailbox_.erase(it);
      return;
    }
    mailbox_.push_back(message{message::kind::cancel, {}, seq});
  }
  cv_.notify_one();
}

void pad_actor::note_activity() { last_activity_ns_.store(now_ns(), std::memory_order_relaxed); }

void pad_actor::end_holds() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mailbox_.push_back(message{message::kind::end_holds, {}, 0});
  }
  cv_.notify_one();
}

void pad_actor::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void pad_actor::complete(uint64_t seq, const reply_to& reply, std::optional<tool_result> r,
                         bool was_input) {
  completion c = job_done(seq, reply, std::move(r));
  c.was_input = was_input;
  done_.push(std::move(c));
}

result<pad_device*> pad_actor::device() {
  if (device_) return device_.get();
  auto made = pad_device::create(path_);
  if (!made) return made.take_error();
  device_ = std::move(*made);
  // What the calls asked for while there was no device is not replayed:
  // they were answered with the error.
  state_ = pad_state{};
  guard_.adopt(device_->fd(), device_->neutral_events());
  log(log_level::info, "gamepad: an Xbox 360 controller at %s",
      device_->node().empty() ? path_.c_str() : device_->node().c_str());
  return device_.get();
}

status pad_actor::apply(const pad_state& s) {
  if (!device_) return make_error(errc::not_available, "no gamepad");
  if (auto r = device_->apply(s); !r) {
    device_.reset();
    guard_.forget();
    state_ = pad_state{};
    return r;
  }
  state_ = s;
  return {};
}

void pad_actor::undo(const hold& h) {
  bool other = std::any_of(holds_.begin(), holds_.end(), [&](const hold& o) {
    return o.seq != h.seq && input_of(o.req) == input_of(h.req);
  });
  if (other || !still_set(state_, h.req)) return;
  pad_state s = state_;
  let_go(s, h.req);
  if (auto r = apply(s); !r) {
    log(log_level::warn, "gamepad: letting go of %s: %s", input_name(h.req).c_str(),
        r.err().message.c_str());
  }
}

void pad_actor::finish_hold(hold& h, const std::optional<std::string>& why) {
  undo(h);
  auto held = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - h.started);
  if (why) {
    complete(h.seq, h.reply,
             tool_result::failure(str_cat(tool_of(h.req.what), " ended early after ",
                                          elapsed_text(clock::now() - h.started), "s: ", *why)),
             true);
    return;
  }
  complete(h.seq, h.reply, answer(h.req, int(held.count())), true);
}

void pad_actor::end_holds_early(const std::string& why) {
  // Each hold is answered; what they set is let go below, all at once.
  std::vector<hold> ending;
  ending.swap(holds_);
  for (hold& h : ending) finish_hold(h, why);
}

void pad_actor::release_all(const std::string& why) {
  end_holds_early(why);
  if (device_ && !state_.neutral()) {
    if (auto r = apply(pad_state{}); !r) {
      log(log_level::warn, "gamepad: letting go: %s", r.err().message.c_str());
    }
  }
  state_ = pad_state{};
}

std::optional<pad_actor::clock::time_point> pad_actor::idle_deadline() const {
  if (idle_release_secs_ <= 0 || state_.neutral()) return std::nullopt;
  auto last = clock::time_point(
      std::chrono::nanoseconds(last_activity_ns_.load(std::memory_order_relaxed)));
  return last + std::chrono::duration_cast<clock::duration>(
                    std::chrono::duration<double>(idle_release_secs_));
}

tool_result pad_actor::answer(const pad_request& req, std::optional<int> held_ms) const {
  std::string did = did_text(req, held_ms);
  std::string node = device_ ? device_->node() : std::string();
  tool_result r = tool_result::text(str_cat(did, ". Held now: ", state_text(state_), "."));
  std::string s = str_cat("{\"did\":", "\"", did, "\"");
  if (held_ms) s += str_cat(",\"held_ms\":", std::to_string(*held_ms));
  s += str_cat(",\"state\":", state_json(state_, node), "}");
  r.structured = std::move(s);
  return r;
}

void pad_actor::run(pad_job& job) {
  const pad_request& req = job.req;
  auto dev = device();
  if (!dev) return complete(job.seq, job.reply, tool_result::failure(dev.err()), false);
  if (req.what == pad_request::kind::state) {
    return complete(job.seq, job.reply, answer(req, std::nullopt), false);
  }
  if (req.what == pad_request::kind::reset) {
    end_holds_early("gamepad_reset let go of the controller");
  }
  pad_state s = state_;
  change(s, req);
  if (auto r = apply(s); !r) return complete(job.seq, job.reply, tool_result::failure(r.err()), true);
  bool holds = req.hold_ms > 0 && req.how != pad_request::mode::press &&
               req.how != pad_request::mode::release;
  if (!holds) return complete(job.seq, job.reply, answer(req, std::nullopt), true);
  auto now = clock::now();
  holds_.push_back(hold{job.seq, std::move(job.reply), now,
                        now + std::chrono::milliseconds(req.hold_ms), req});
}

void pad_actor::handle(message& m) {
  switch (m.what) {
    case message::kind::job: return run(m.job);
    case message::kind::cancel: {
      auto it = std::find_if(holds_.begin(), holds_.end(),
                             [&](const hold& h) { return h.seq == m.seq; });
      if (it == holds_.end()) return;
      hold h = std::move(*it);
      holds_.erase(it);
      undo(h);
      return complete(h.seq, h.reply, std::nullopt, true);
    }
    case message::kind::end_holds:
      // stdin is closed: nothing held may outlast the answers.
      return release_all(kStopping);
  }
}

void pad_actor::thread_main() {
  // Made at once, so a game started after the server finds a controller.
  if (auto d = device(); !d) log(log_level::warn, "%s", d.err().message.c_str());
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!mailbox_.empty()) {
      message m = std::move(mailbox_.front());
      mailbox_.pop_front();
      lock.unlock();
      handle(m);
      lock.lock();
      continue;
    }
    lock.unlock();
    auto now = clock::now();
    for (size_t i = 0; i < holds_.size();) {
      if (holds_[i].until <= now) {
        hold h = std::move(holds_[i]);
        holds_.erase(holds_.begin() + ptrdiff_t(i));
        finish_hold(h, std::nullopt);
      } else {
        ++i;
      }
    }
    if (auto idle = idle_deadline(); idle && *idle <= now) {
      log(log_level::info, "no request for %gs: letting go of the controller", idle_release_secs_);
      release_all(str_cat("no request for ",
                          seconds_text(std::chrono::duration<double>(idle_release_secs_)),
                          "s, so the idle release (CU_IDLE_RELEASE_SECS) let go of the "
                          "controller"));
    }
    auto wake = clock::time_point::max();
    for (const hold& h : holds_) wake = std::min(wake, h.until);
    if (auto idle = idle_deadline()) wake = std::min(wake, *idle);
    lock.lock();
    if (stopping_ && mailbox_.empty()) break;
    auto pred = [&] { return stopping_ || !mailbox_.empty(); };
    if (wake == clock::time_point::max()) {
      cv_.wait(lock, pred);
    } else {
      cv_.wait_until(lock, wake, pred);
    }
  }
  lock.unlock();
  release_all(kStopping);
  if (device_) {
    device_.reset();
    guard_.forget();
  }
}

}  // namespace cu
