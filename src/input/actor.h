// Owns: the input actor thread, its mailbox, its timers (hold_key releases,
// the idle release, restoring borrowed keycodes) and, through its
// input_context, the X connection and all held input. Every pointer and
// keyboard action is serialized here, so no two callers' gestures
// interleave and nothing is pressed behind the actor's back; a hold is a
// timer, not a sleeping thread, so other input goes on while it lasts.
// Thread affinity: post(), cancel(), end_holds(), note_activity() and stop()
// from the loop thread; jobs and timers run on the actor thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <variant>
#include <vector>

#include "input/context.h"
#include "input/guard.h"
#include "core/completion_queue.h"
#include "core/job.h"
#include "core/tool_result.h"
#include "core/generation.h"
#include "core/grant_policy.h"

namespace cu {

// What a job may ask of the actor besides its result.
struct job_control {
  // hold_key: answer at this time instead of now, releasing held_keys then
  // (or at once on cancellation, stdin EOF or a signal).
  std::optional<clock_type::time_point> answer_at;
  std::vector<uint8_t> held_keys;
};

struct input_job : job_header {
  std::function<tool_result(input_context&, job_control&)> run;
  // Nonzero: the job belongs to this computer_batch. Once one of its jobs
  // starts, the actor runs no other batch's or caller's job until the lease
  // is released, so the batch's gestures form one unit.
  uint64_t lease = 0;
  // Sends no input, only reads (cursor_position).
  bool read_only = false;
  // Nonzero: the job's coordinates were mapped through a session captured
  // from this server generation; it is refused if the X server has been
  // replaced since.
  uint64_t generation = 0;
};

// The actor's control messages. They go through the mailbox in order with
// the jobs, but a batch's lease never holds them back.
struct end_holds_message {};  // See input_actor::end_holds.
struct release_lease_message {
  uint64_t lease = 0;
};
using actor_message = std::variant<input_job, end_holds_message, release_lease_message>;

struct input_config {
  std::string display;
  double idle_release_secs = 300;  // 0: never.
  double type_delay_ms = 0;  // CU_TYPE_DELAY_MS: a pause after each character.
  // Input that follows input waits until the screen has been quiet
  // (input_context::pace); quiet_ms 0: never.
  input_context::pacing pacing;
  // The flight recorder's sink for every piece of input sent (empty: none;
  // input_context::on_event).
  std::function<void(const input_event&)> on_event;
  // The pressed-input marker beside the lock (input/marker.h; empty: none).
  std::string marker;
  // Its hook before every piece of input (empty: none;
  // input_context::before_event).
  std::function<void()> before_event;
  // What the agent may touch (docs/grants.md); null: everything.
  const grant_policy* grants = nullptr;
};

class input_actor {
 public:
  input_actor(input_config cfg, input_guard guard, server_generation& generation,
              completion_queue& done);
  ~input_actor();
  input_actor(const input_actor&) = delete;
  input_actor& operator=(const input_actor&) = delete;

  void post(input_job job);

  // Stops request seq: a queued job is dropped, a running one stops at its
  // next pause, a hold releases its keys at once. Its completion carries an
  // empty line (the server sends nothing for a cancelled request).
  void cancel(uint64_t seq);

  // After the jobs already queued: releases everything held and ends every
  // hold early (stdin reached EOF).
  void end_holds();

  // The batch is over: other callers' jobs may run again.
  void release_lease(uint64_t lease);

  // The desktop thread saw the X server go away: if the actor's connection
  // is gone too, its holds end now, saying so, rather than at their
  // deadlines as if they had lasted.
  void display_lost();

  // A request arrived; the idle release counts from the latest one.
  void note_activity();

  // Runs the queued jobs, releases everything held, and joins. Idempotent.
  void stop();

 private:
  struct hold {
    uint64_t seq;
    reply_to reply;
    clock_type::time_point started, until;
    std::vector<uint8_t> keys;
    tool_result result;
  };

  void thread_main();
  // The first message the lease lets through, or end(); mu_ held.
  std::deque<actor_message>::iterator next_message();
  void run_job(input_job& job);
  void handle(actor_message& m);
  // Serves cancellations and due timers until the deadline; false when the
  // running job must stop. Actor thread; used as the context's wait_until.
  bool serve_until(clock_type::time_point deadline);
  // Cancellations and due timers; true when the running job was cancelled.
  bool serve_once(std::unique_lock<std::mutex>& lock);
  clock_type::time_point next_deadline() const;
  // Answers the hold and releases its keys. why: nothing when it lasted
  // its full duration; otherwise what ended it early.
  void finish_hold(hold& h, std::optional<std::string> why);
  void end_holds_early(const std::string& why);
  // r: the result; nothing: the request was cancelled.
  void complete(uint64_t seq, const reply_to& reply, std::optional<tool_result> r);

  input_config cfg_;
  server_generation& generations_;
  input_context ctx_;
  completion_queue& done_;

  std::mutex mu_;  // Guards mailbox_, cancels_, end_holds_ and stopping_.
  std::condition_variable cv_;
  std::deque<actor_message> mailbox_;
  bool display_lost_ = false;  // Set by display_lost(), read by the actor.
  std::vector<uint64_t> cancels_;
  bool stopping_ = false;
  std::atomic<int64_t> last_activity_ns_;

  // Actor thread only.
  std::vector<hold> holds_;
  clock_type::time_point next_hold_check_{};  // See serve_once.
  uint64_t lease_ = 0;  // The batch holding the actor, if any.
  bool last_read_only_ = false;  // The last job only read, and nothing waited since.
  uint64_t running_seq_ = 0;
  bool running_cancelled_ = false;
  std::thread thread_;
};

}  // namespace cu
