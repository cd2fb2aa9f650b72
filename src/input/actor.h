// Owns: the input actor thread, its mailbox, its X connection and all held
// input state. Every pointer and keyboard action is serialized here, so no
// two callers' gestures interleave and nothing is pressed behind its back.
// Thread affinity: post() and stop() from the loop thread; jobs run on the
// actor thread, the only thread that touches its connection.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "protocol/completion_queue.h"
#include "protocol/tool_result.h"
#include "util/result.h"
#include "x11/connection.h"

namespace cu {

// What an input job may use; lives on the actor thread.
class input_context {
 public:
  explicit input_context(std::string display) : display_(std::move(display)) {}

  // The actor's connection, opened (again) when needed.
  result<xcb_connection_t*> connection();

  // Releases every key and button this server holds. Safe to call when
  // nothing is held or the display is gone.
  void release_all();

 private:
  std::string display_;
  xcb_ptr conn_;
};

struct input_job {
  uint64_t seq = 0;
  std::string id_json;
  std::function<tool_result(input_context&)> run;
};

class input_actor {
 public:
  input_actor(std::string display, completion_queue& done);
  ~input_actor();
  input_actor(const input_actor&) = delete;
  input_actor& operator=(const input_actor&) = delete;

  void post(input_job job);

  // Runs the queued jobs, releases everything held, and joins. Idempotent.
  void stop();

 private:
  void thread_main();

  input_context ctx_;
  completion_queue& done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<input_job> mailbox_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cu
