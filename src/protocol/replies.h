// Owns: the way answers leave the server: stdout (through stdout_writer),
// the JSON-RPC batch arrays (2025-03-26) whose answers are gathered and
// written as one array once the last is done, and the count of answer bytes
// waiting for the client, which backpressure reads.
// Thread affinity: the loop thread.
#pragma once

#include <uv.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol/stdio.h"

namespace cu {

// A JSON-RPC batch array: its requests' answers, held until the last of
// them is done.
struct rpc_group {
  std::vector<std::string> lines;
  size_t bytes = 0;    // The size of lines.
  size_t pending = 0;  // Requests accepted but not answered.
  bool open = true;    // Its elements are still being read.
};

class replies {
 public:
  // on_broken: stdout failed (the client is gone). on_drained: some queued
  // answers were written, so backpressure may ease.
  replies(uv_loop_t* loop, std::function<void(int status)> on_broken,
          std::function<void()> on_drained);
  replies(const replies&) = delete;
  replies& operator=(const replies&) = delete;

  int start(int fd);

  // Straight to stdout: notifications, and answers outside any array;
  // written as stdout_writer::write's.
  void send(std::string line, std::function<void()> written = {});

  // The array whose elements are being read, if any: answers given while
  // it is open (respond) and requests accepted then (join) belong to it.
  void open_group();
  void close_group();
  bool in_group() const { return bool(current_); }

  // An answer given at once: into the array being read, or to stdout.
  void respond(std::string line);

  // A request accepted now, to be answered later through answer(): its
  // array (none outside one).
  std::shared_ptr<rpc_group> join();

  // The answer to a request accepted through join(): line (empty: none,
  // for a cancelled request) goes into its array, which is written once
  // complete, or, without an array, to stdout.
  // written runs once an answer outside an array has been written.
  void answer(std::shared_ptr<rpc_group> group, std::string line,
              std::function<void()> written = {});

  // Answer bytes not yet read by the client, including those held for
  // arrays not yet complete.
  size_t waiting_bytes() const { return out_.queued_bytes() + group_bytes_; }

  // Call when the client has read some answers: once stdout has drained
  // after a pile-up, gives the memory the answers took back to the system.
  void after_drain();

  // Writes what is queued, then closes stdout and calls on_closed.
  void close(std::function<void()> on_closed) { out_.close(std::move(on_closed)); }

 private:
  void add(rpc_group& g, std::string line);
  void flush(rpc_group& g);

  stdout_writer out_;
  std::shared_ptr<rpc_group> current_;
  size_t group_bytes_ = 0;         // Answers held in arrays.
  bool trim_after_drain_ = false;  // Give memory back once stdout drains.
};

// Above this many answer bytes waiting for the client, the server reads no
// further requests and starts no further capture (see server.h).
inline constexpr size_t kStdoutHighBytes = size_t{16} << 20;
inline constexpr size_t kStdoutLowBytes = size_t{4} << 20;

}  // namespace cu
