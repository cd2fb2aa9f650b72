// Owns: the gamepad's thread: its mailbox of calls, the controller device
// (made at start-up, and again by a call while there is none), the holds
// and their deadlines, and every way the controller is let go: a hold's
// end, a cancellation, gamepad_reset, the idle release, stdin's end, the
// stop, and through the input guard the server's death. It is the input
// actor's twin for the controller, apart from it because the controller
// needs no X display: calls are serialized here, and a hold is a deadline,
// not a sleeping thread, so other calls go on while it lasts.
// Thread affinity: post(), cancel(), note_activity(), end_holds() and stop()
// from the loop thread; the device and the holds on the pad thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/completion_queue.h"
#include "core/job.h"
#include "core/tool_result.h"
#include "input/guard.h"
#include "toolsets/gamepad/pad.h"
#include "toolsets/registry.h"

namespace cu {

// What one gamepad call asks for.
struct pad_request {
  enum class kind : uint8_t { button, dpad, trigger, stick, reset, state } what = kind::state;
  enum class mode : uint8_t { tap, press, release, set } how = mode::set;
  int index = 0;             // The button, direction, trigger (LT, RT) or stick (left, right).
  int pressure = 0;          // A trigger's.
  int16_t x = 0, y = 0;      // A stick's.
  int hold_ms = 0;           // A tap's length, or how long a set lasts; 0: it stays.
};

struct pad_job : job_header {
  pad_request req;
};

class pad_actor final : public room_service {
 public:
  using clock = std::chrono::steady_clock;

  // uinput_path: CU_UINPUT. idle_release_secs: CU_IDLE_RELEASE_SECS (0:
  // never). The device is made at once, so a game started later finds it.
  pad_actor(std::string uinput_path, double idle_release_secs, guard_devices guard,
            completion_queue& done);
  ~pad_actor() override;
  pad_actor(const pad_actor&) = delete;
  pad_actor& operator=(const pad_actor&) = delete;

  void post(pad_job job);
  // A queued call is dropped; a hold lets go at once. Either way its
  // completion comes back empty.
  void cancel(uint64_t seq) override;

  void note_activity() override;
  void end_holds() override;
  void stop() override;

 private:
  struct hold {
    uint64_t seq;
    reply_to reply;
    clock::time_point started, until;
    pad_request req;
  };
  struct message {
    enum class kind : uint8_t { job, cancel, end_holds } what;
    pad_job job;
    uint64_t seq = 0;
  };

  void thread_main();
  void handle(message& m);
  void run(pad_job& job);
  // The device, made when there is none.
  result<pad_device*> device();
  // Sets the controller to s; on failure the device is dropped, so the
  // next call makes it anew.
  status apply(const pad_state& s);
  // Lets go of what hold h set, unless another hold of the same input
  // still lasts or the input has been changed since.
  void undo(const hold& h);
  void finish_hold(hold& h, const std::optional<std::string>& why);
  void end_holds_early(const std::string& why);
  // Everything let go, every hold answered early with why.
  void release_all(const std::string& why);
  std::optional<clock::time_point> idle_deadline() const;
  void complete(uint64_t seq, const reply_to& reply, std::optional<tool_result> r,
                bool was_input);
  tool_result answer(const pad_request& req, std::optional<int> held_ms) const;

  std::string path_;
  double idle_release_secs_;
  guard_devices guard_;
  completion_queue& done_;

  std::mutex mu_;  // Guards mailbox_ and stopping_.
  std::condition_variable cv_;
  std::deque<message> mailbox_;
  bool stopping_ = false;
  std::atomic<int64_t> last_activity_ns_;

  // The pad thread only.
  std::unique_ptr<pad_device> device_;
  pad_state state_;  // What the calls have asked for (the device's, when there is one).
  std::vector<hold> holds_;
  std::thread thread_;
};

}  // namespace cu
