// Owns: the notifications/progress of the calls that asked for them (a
// progressToken in _meta): a tick every second while the call runs, and a
// note when something happens (a watch of the screen begins). Progress
// only ever grows; the total is the call's expected length when its
// handler knows it (wait, hold_key, the waits on the screen).
// Thread affinity: the loop thread.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "protocol/replies.h"

namespace cu {

class progress_notes {
 public:
  // describe: what a call's notification says when it has something to say
  // of its own (a batch names its step), else empty.
  progress_notes(uv_loop_t* loop, replies& out, std::function<std::string(uint64_t)> describe)
      : loop_(loop), out_(out), describe_(std::move(describe)) {}
  progress_notes(const progress_notes&) = delete;
  progress_notes& operator=(const progress_notes&) = delete;

  // Call seq, started then, asked for progress with token (JSON): a
  // notification every second from now until stop(seq).
  void start(uint64_t seq, std::string token, std::chrono::steady_clock::time_point started);
  // Call seq will take about this long; 0: unknown.
  void set_total(uint64_t seq, double seconds);
  // A notification for seq now, if it asked for them; note: the message,
  // unless describe has one of its own.
  void send(uint64_t seq, std::string_view note = {});
  // No more notifications for seq (it ended, or was cancelled).
  void stop(uint64_t seq);

 private:
  struct call {
    std::string token;
    std::chrono::steady_clock::time_point started;
    uv_timer_t* ticker = nullptr;
    double total = 0;  // Seconds; 0: unknown.
    double sent = -1;  // The last progress value sent.
  };

  uv_loop_t* loop_;
  replies& out_;
  std::function<std::string(uint64_t)> describe_;
  std::unordered_map<uint64_t, call> calls_;
};

}  // namespace cu
