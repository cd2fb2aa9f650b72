// Owns: the executors that are a thread of their own (the input actor, the
// desktop thread, the a11y thread) seen through protocol/executor.h, and
// the two that run on the loop: its timers (wait, a batch's pause) and the
// screen watches. The capture pool's is protocol/schedule.h, since the loop
// decides when a capture may start.
// Thread affinity: the loop thread.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "build_config.h"
#include "desktop/desktop.h"
#include "input/actor.h"
#include "protocol/executor.h"
#include "protocol/screen_watch.h"
#include "toolsets/registry.h"
#if CU_HAVE_A11Y
#include "a11y/a11y.h"
#endif

namespace cu {

// The input actor: it stops a cancelled job (a hold releases its keys at
// once) and sends back an empty completion.
class actor_executor final : public job_executor<input_job> {
 public:
  explicit actor_executor(input_actor& actor) : actor_(actor) {}
  std::string_view name() const override { return "the input actor"; }
  void submit(input_job job) override { actor_.post(std::move(job)); }
  bool cancel(uint64_t seq) override {
    actor_.cancel(seq);
    return false;
  }

 private:
  input_actor& actor_;
};

// The desktop thread (windows, clipboard, programs).
class desktop_executor final : public job_executor<desktop_job> {
 public:
  explicit desktop_executor(desktop& desk) : desk_(desk) {}
  std::string_view name() const override { return "the desktop thread"; }
  void submit(desktop_job job) override { desk_.post(std::move(job)); }
  bool cancel(uint64_t seq) override {
    desk_.cancel(seq);
    return false;
  }

 private:
  desktop& desk_;
};

#if CU_HAVE_A11Y
// The a11y thread (the a11y toolset, built with libatspi).
class a11y_executor final : public job_executor<a11y_job> {
 public:
  explicit a11y_executor(class a11y& ax) : ax_(ax) {}
  std::string_view name() const override { return "the a11y thread"; }
  void submit(a11y_job job) override { ax_.post(std::move(job)); }
  bool cancel(uint64_t seq) override {
    ax_.cancel(seq);
    return false;
  }

 private:
  class a11y& ax_;
};
#endif

// The service a toolset's room runs (toolsets/registry.h, room_service:
// the gamepad's thread); its handlers hand it their jobs themselves
// (tool_call::room).
class room_executor final : public call_executor {
 public:
  room_executor(room_service& service, std::string name)
      : service_(service), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  bool cancel(uint64_t seq) override {
    service_.cancel(seq);
    return false;
  }

 private:
  room_service& service_;
  std::string name_;
};

// One kind of loop timer, one per call at most: `wait`'s, or a batch's
// pause between steps. A cancellation stops it, and the call ends here.
class timer_executor final : public call_executor {
 public:
  timer_executor(uv_loop_t* loop, std::string_view name) : loop_(loop), name_(name) {}
  timer_executor(const timer_executor&) = delete;
  timer_executor& operator=(const timer_executor&) = delete;

  std::string_view name() const override { return name_; }
  // Runs fire for call seq after ms (the timer is gone by then).
  void start(uint64_t seq, uint64_t ms, std::function<void()> fire);
  // Stops seq's timer, if any; fire never runs.
  void stop(uint64_t seq);
  bool cancel(uint64_t seq) override {
    stop(seq);
    return true;
  }

 private:
  uv_loop_t* loop_;
  std::string_view name_;
  std::unordered_map<uint64_t, uv_timer_t*> timers_;
};

// The screen watches (wait_for_change, wait_until_stable, and the watch
// under screenshot_find's until): a cancellation ends the watch here.
class watch_executor final : public call_executor {
 public:
  explicit watch_executor(screen_watches& watches) : watches_(watches) {}
  std::string_view name() const override { return "a watch of the screen"; }
  bool cancel(uint64_t seq) override {
    watches_.stop(seq);
    return true;
  }

 private:
  screen_watches& watches_;
};

}  // namespace cu
