#include "protocol/stdio.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "util/log.h"

namespace cu {
namespace {

constexpr size_t kReadChunk = 256 * 1024;

// Opens fd as the right kind of libuv stream, or returns false for files and
// character devices, which epoll cannot watch.
bool open_stream(uv_loop_t* loop, uv_any_handle* h, int fd, bool readable, int* err) {
  *err = 0;
  switch (uv_guess_handle(fd)) {
    case UV_TTY:
      *err = uv_tty_init(loop, &h->tty, fd, readable ? 1 : 0);
      return true;
    case UV_NAMED_PIPE:
      if ((*err = uv_pipe_init(loop, &h->pipe, 0)) != 0) return true;
      if ((*err = uv_pipe_open(&h->pipe, fd)) != 0) {
        uv_close(reinterpret_cast<uv_handle_t*>(&h->pipe), nullptr);
      }
      return true;
    case UV_TCP:
      if ((*err = uv_tcp_init(loop, &h->tcp)) != 0) return true;
      if ((*err = uv_tcp_open(&h->tcp, fd)) != 0) {
        uv_close(reinterpret_cast<uv_handle_t*>(&h->tcp), nullptr);
      }
      return true;
    default:
      return false;
  }
}

// A screenshot line is over a megabyte; with a 64 KiB pipe the reader and the
// writer ping-pong some twenty times per line. Ask for 1 MiB (the
// unprivileged maximum for a pipe; the kernel caps a socket's buffer at its
// own limit). Failure is harmless.
void widen_buffer(int fd) {
  if (fcntl(fd, F_SETPIPE_SZ, 1 << 20) < 0) {
    int size = 1 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
}

}  // namespace

stdin_reader::stdin_reader(uv_loop_t* loop, data_fn on_data, end_fn on_end)
    : loop_(loop), on_data_(std::move(on_data)), on_end_(std::move(on_end)),
      buf_(new char[kReadChunk]) {}

stdin_reader::~stdin_reader() = default;

int stdin_reader::start(int fd) {
  fd_ = fd;
  int err = 0;
  is_stream_ = open_stream(loop_, &handle_, fd, true, &err);
  if (err != 0) return err;
  active_ = true;
  if (!is_stream_) {
    read_file();
    return 0;
  }
  handle_.handle.data = this;
  return uv_read_start(&handle_.stream, &stdin_reader::on_alloc, &stdin_reader::on_read);
}

void stdin_reader::stop() {
  if (!active_) return;
  active_ = false;
  if (is_stream_) {
    uv_read_stop(&handle_.stream);
    uv_close(&handle_.handle, nullptr);
  } else if (fs_busy_) {
    uv_cancel(reinterpret_cast<uv_req_t*>(&fs_req_));
  }
}

void stdin_reader::pause() {
  if (!active_ || paused_) return;
  paused_ = true;
  if (is_stream_) uv_read_stop(&handle_.stream);
  // A file read in progress completes; its data is delivered, and the next
  // read waits for resume().
}

void stdin_reader::resume() {
  if (!active_ || !paused_) return;
  paused_ = false;
  if (is_stream_) {
    uv_read_start(&handle_.stream, &stdin_reader::on_alloc, &stdin_reader::on_read);
  } else if (!fs_busy_) {
    read_file();
  }
}

void stdin_reader::on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* self = static_cast<stdin_reader*>(h->data);
  *buf = uv_buf_init(self->buf_.get(), kReadChunk);
}

void stdin_reader::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* self = static_cast<stdin_reader*>(s->data);
  if (n > 0) {
    self->on_data_(buf->base, size_t(n));
  } else if (n < 0) {
    self->stop();
    self->on_end_(n == UV_EOF ? 0 : int(n));
  }
}

void stdin_reader::read_file() {
  fs_busy_ = true;
  fs_req_.data = this;
  uv_buf_t b = uv_buf_init(buf_.get(), kReadChunk);
  // Offset -1 reads at the current position, so pipes posing as character
  // devices and real files both work.
  uv_fs_read(loop_, &fs_req_, fd_, &b, 1, -1, &stdin_reader::on_fs_read);
}

void stdin_reader::on_fs_read(uv_fs_t* req) {
  auto* self = static_cast<stdin_reader*>(req->data);
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  self->fs_busy_ = false;
  if (!self->active_) return;
  if (n > 0) {
    self->on_data_(self->buf_.get(), size_t(n));
    if (self->active_ && !self->paused_) self->read_file();
    return;
  }
  self->active_ = false;
  self->on_end_(n == 0 ? 0 : int(n));
}

struct stdout_writer::write_req {
  uv_write_t req;
  std::string data;
  stdout_writer* owner;
  std::function<void()> written;
};

stdout_writer::stdout_writer(uv_loop_t* loop, error_fn on_error, written_fn on_written)
    : loop_(loop), on_error_(std::move(on_error)), on_written_(std::move(on_written)) {}

int stdout_writer::start(int fd) {
  fd_ = fd;
  int err = 0;
  is_stream_ = open_stream(loop_, &handle_, fd, false, &err);
  if (is_stream_ && err != 0) {
    // Still writable with plain blocking writes, which is all a file needs.
    log(log_level::warn, "stdout is not a usable stream (%s); writing it directly",
        uv_strerror(err));
    is_stream_ = false;
  }
  if (is_stream_) handle_.handle.data = this;
  if (is_stream_) widen_buffer(fd);
  return 0;
}

void stdout_writer::write(std::string line, std::function<void()> written) {
  if (failed_ || closed_) return;
  if (!is_stream_) {
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed_ = true;
        on_error_(-errno);
        return;
      }
      done += size_t(n);
    }
    if (written) written();
    return;
  }
  auto* w = new write_req{{}, std::move(line), this, std::move(written)};
  uv_buf_t b = uv_buf_init(w->data.data(), unsigned(w->data.size()));
  w->req.data = w;
  int err = uv_write(&w->req, &handle_.stream, &b, 1, &stdout_writer::on_write);
  if (err != 0) {
    delete w;
    failed_ = true;
    on_error_(err);
    return;
  }
  ++pending_;
  queued_bytes_ += w->data.size();
}

void stdout_writer::on_write(uv_write_t* req, int status) {
  auto* w = static_cast<write_req*>(req->data);
  stdout_writer* self = w->owner;
  if (status == 0 && w->written) w->written();
  self->queued_bytes_ -= w->data.size();
  delete w;
  --self->pending_;
  if (status != 0 && status != UV_ECANCELED && !self->failed_) {
    self->failed_ = true;
    log(log_level::warn, "stdout write failed: %s", uv_strerror(status));
    self->on_error_(status);
  }
  if (self->on_written_ && !self->closing_) self->on_written_();
  self->maybe_close();
}

void stdout_writer::close(std::function<void()> on_closed) {
  if (closing_) return;
  closing_ = true;
  on_closed_ = std::move(on_closed);
  maybe_close();
}

void stdout_writer::maybe_close() {
  if (!closing_ || closed_ || pending_ != 0) return;
  closed_ = true;
  if (is_stream_) {
    uv_close(&handle_.handle, [](uv_handle_t* h) {
      auto* self = static_cast<stdout_writer*>(h->data);
      if (self->on_closed_) self->on_closed_();
    });
  } else if (on_closed_) {
    on_closed_();
  }
}

}  // namespace cu
