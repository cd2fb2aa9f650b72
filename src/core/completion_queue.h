// Owns: the one way back from worker threads to the loop thread. Workers
// push completions under a mutex and wake the loop with uv_async_send; the
// loop swaps the whole queue out and handles it outside the lock.
// Thread affinity: push() from any thread; everything else on the loop thread.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.h"
#include "core/tool_result.h"

namespace cu {

// What the desktop thread, which watches the display, saw happen to the
// screen: the X server went away, or the root window has this size (on
// every connection and every resize).
struct screen_report {
  bool lost = false;
  size2 root;
  // The server generation the report is about: for a loss, the generation
  // whose server went away. A capture may already have made a session on
  // the next server by the time this news reaches the loop.
  uint64_t generation = 0;
};

// Where the end of a job goes. A plain tools/call's job renders its
// response line on the worker, so the image is encoded once, straight into
// the line; the loop writes it. A job whose result the loop goes on with (a
// computer_batch step or probe, a step with another chained after it, a
// look of screenshot_find's until loop) carries the result itself.
struct reply_to {
  enum class form { line, result };
  form how = form::result;
  // The request's id as JSON: for form::line, and for sizing a chained
  // step's result as the line it will become.
  std::string id_json;
  rpc_era era = rpc_era::legacy;  // The shape of the line, for form::line.
  // The flight recorder is on: a line's completion also carries the result
  // it was rendered from (completion::traced), so the call's record is
  // written from values and never parses its base64 back.
  bool keep_result = false;

  static reply_to line(std::string id_json, rpc_era era) {
    return {form::line, std::move(id_json), era, false};
  }
  static reply_to result() { return {}; }
  bool is_line() const { return how == form::line; }
};

// The end of one accepted request, or (seq 0) a message for the loop.
struct completion {
  uint64_t seq = 0;             // The request's sequence number.
  std::string line;             // The whole response line, ready to write.
  // For a job that replies with its result (reply_to::result), the result
  // itself instead of a line. Neither line nor result: the request was
  // cancelled.
  std::optional<tool_result> result;
  // line answers with a tool error (isError true), for the call log.
  bool is_error = false;
  std::optional<coord_session> session;  // A capture established a new session.
  bool was_input = false;       // It sent pointer or keyboard input.
  // A capture worker is done with it: its slot among the captures the
  // loop lets into the pool is free (call_table::pump_captures).
  bool was_capture = false;
  // Not the end: a capture worker handed the request on (find_text, to
  // its recognizer thread), whose completion ends it. Only was_capture
  // counts.
  bool handed_on = false;
  // switch_display chose this display area (nothing inside: the whole
  // screen).
  std::optional<std::optional<rect>> display_area;
  // With reply_to::keep_result: the result the line was rendered from, its
  // images shared with the line's, not copied.
  // Shared, not an optional: GCC 12 warns of a second optional result in
  // every completion moved (a maybe-uninitialized false positive).
  std::shared_ptr<const tool_result> traced;
  // seq 0 only: news of the screen (see screen_report).
  std::optional<screen_report> screen;
};

// The completion of a request with r, as reply says: rendered as its
// response line, or carried as it is.
inline void set_outcome(completion& c, const reply_to& reply, tool_result r) {
  if (reply.is_line()) {
    if (reply.keep_result) c.traced = std::make_shared<const tool_result>(r);
    c.line = render_tool_response(reply.id_json, r, reply.era);
    c.is_error = r.is_error;
  } else {
    c.result = std::move(r);
  }
}

class completion_queue {
 public:
  using handler = std::function<void(std::vector<completion>&)>;

  // Registers the async handle on loop; on_ready runs on the loop thread.
  completion_queue(uv_loop_t* loop, handler on_ready);
  completion_queue(const completion_queue&) = delete;
  completion_queue& operator=(const completion_queue&) = delete;

  // Thread-safe. After close() the completion is dropped.
  void push(completion c);

  // Loop thread: stops accepting and closes the async handle. Call only after
  // every producer thread has been joined.
  void close();

 private:
  static void on_async(uv_async_t* h);

  uv_async_t async_;
  handler on_ready_;
  std::mutex mu_;
  std::vector<completion> pending_;
  bool closed_ = false;
};

}  // namespace cu
