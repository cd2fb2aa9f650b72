// Owns: the libuv side of stdin and stdout. stdin may be a pipe, a socket, a
// tty or a file; stdout likewise. Streams are read and written through libuv
// handles; files through uv_fs reads and plain blocking writes (a file never
// blocks for long).
// Thread affinity: the loop thread only, like every libuv handle.
#pragma once

#include <uv.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace cu {

class stdin_reader {
 public:
  using data_fn = std::function<void(const char* data, size_t n)>;
  // status 0 is end of input; a negative libuv error otherwise.
  using end_fn = std::function<void(int status)>;

  stdin_reader(uv_loop_t* loop, data_fn on_data, end_fn on_end);
  ~stdin_reader();
  stdin_reader(const stdin_reader&) = delete;
  stdin_reader& operator=(const stdin_reader&) = delete;

  // Starts reading fd; returns 0 or a libuv error.
  int start(int fd);
  // Stops reading and closes the handle; no callback runs afterwards.
  void stop();
  // Backpressure: no data callback after pause() (not even the end of
  // input) until resume(). Idempotent.
  void pause();
  void resume();

 private:
  static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
  static void on_fs_read(uv_fs_t* req);
  void read_file();

  uv_loop_t* loop_;
  data_fn on_data_;
  end_fn on_end_;
  uv_any_handle handle_;
  bool is_stream_ = false;
  bool active_ = false;
  bool paused_ = false;
  bool fs_busy_ = false;
  int fd_ = -1;
  uv_fs_t fs_req_;
  std::unique_ptr<char[]> buf_;
};

class stdout_writer {
 public:
  // Runs once when a write fails (the reader went away).
  using error_fn = std::function<void(int status)>;
  // Runs after each queued line has been written.
  using written_fn = std::function<void()>;

  stdout_writer(uv_loop_t* loop, error_fn on_error, written_fn on_written = {});
  stdout_writer(const stdout_writer&) = delete;
  stdout_writer& operator=(const stdout_writer&) = delete;

  int start(int fd);
  // Queues one whole line (it must end in "\n"). Lines go out in call order.
  // written, if set, runs on the loop once the line's last byte is written.
  void write(std::string line, std::function<void()> written = {});
  // Closes after the queued lines are written (or failed); then on_closed.
  void close(std::function<void()> on_closed);
  // Bytes handed over but not yet written (the reader is behind).
  size_t queued_bytes() const { return queued_bytes_; }

 private:
  struct write_req;
  static void on_write(uv_write_t* req, int status);
  void maybe_close();

  uv_loop_t* loop_;
  error_fn on_error_;
  written_fn on_written_;
  uv_any_handle handle_;
  bool is_stream_ = false;
  bool failed_ = false;
  bool closing_ = false;
  bool closed_ = false;
  int fd_ = -1;
  size_t pending_ = 0;
  size_t queued_bytes_ = 0;
  std::function<void()> on_closed_;
};

}  // namespace cu
