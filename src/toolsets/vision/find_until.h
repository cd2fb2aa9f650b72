// Owns: screenshot_find's `until` loop, the vision toolset's state machine
// on the loop: the find runs again each time something is drawn where it
// searches, one look at a time, until its matches appear (or are all gone),
// and the call ends with the look that met the condition, or with an error
// at the timeout or when the watch or stdin ends. The watch of the area and
// the looks themselves are the call table's (asked through until_host), so
// this room needs nothing above it.
// Thread affinity: the loop thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "capture/pool.h"
#include "core/geometry.h"
#include "core/tool_result.h"
#include "core/watch_spec.h"

namespace cu {

// What an until loop asks of the call it runs in (the call table).
class until_host {
 public:
  // Queues a look for call seq (the find, whose result comes back as it
  // is, to find_until::looked).
  virtual void look(uint64_t seq, capture_job job) = 0;
  // A progress notification for call seq with this note.
  virtual void note(uint64_t seq, std::string_view text) = 0;
  // Ends call seq with r (nothing: unanswered, it was cancelled); the
  // find_until is gone when this returns.
  virtual void end(uint64_t seq, std::optional<tool_result> r) = 0;
  virtual bool cancelled(uint64_t seq) const = 0;

 protected:
  ~until_host() = default;
};

class find_until {
 public:
  // job: the find, as the handler made it.
  find_until(until_host& host, uint64_t seq, capture_job job, bool appear, double timeout_secs,
             std::chrono::steady_clock::time_point started);

  // The watch the call table starts for it: drawing in the area searched.
  watch_spec watch() const;

  // The watch's hooks (screen_watches::hooks). Each may end the call; then
  // the find_until is gone when it returns.
  // Watching: the first look starts now, so nothing drawn after its grab
  // can go unseen.
  void armed();
  void touched();
  void timed_out();
  // The watch could not start or could not go on (the X server went away).
  void watch_ended(tool_result r);

  // A look came back: its result, or nothing when it was cancelled.
  void looked(std::optional<tool_result> r);

  // stdin closed while a look is out: the call ends when it comes back,
  // unless that look is the answer.
  void end_after_look(std::string why) { end_reason_ = std::move(why); }

  // A look is out (queued, settling or in the pool).
  bool looking() const { return looking_; }

 private:
  void look();
  // The end: with the reason set, or as the timeout words it.
  void give_up();

  until_host& host_;
  uint64_t seq_;
  capture_job job_;
  bool appear_;
  double timeout_secs_;
  std::chrono::steady_clock::time_point started_;
  bool looking_ = false;
  bool dirty_ = false;  // Drawn on while a look was out: look again.
  int checks_ = 0;
  size_t last_matches_ = 0;  // What the last look found.
  point last_first_;
  // Why it must end once the look that is out comes back (timeout, EOF).
  std::optional<std::string> end_reason_;
};

}  // namespace cu
