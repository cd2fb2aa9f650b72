#include "input/guard.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xcb/xcb.h>
#include <xcb/xtest.h>

#include <algorithm>
#include <bitset>
#include <cerrno>
#include <vector>
#include <cstdlib>
#include <cstring>

#include "input/marker.h"
#include "util/log.h"
#include "x11/request.h"

namespace cu {
namespace {

// A device handed over on the devices channel, and what to write to it if
// the server dies.
struct guarded_device {
  int fd = -1;
  std::vector<uint8_t> on_death;
};

// The records of the devices channel: 'D' with a descriptor and the bytes
// to write on death, or 'F' (forget the device).
constexpr size_t kMaxDeathBytes = 4096;

// Reads one record of the devices channel; false when the channel ended.
bool read_device_record(int sock, guarded_device& dev) {
  uint8_t buf[1 + kMaxDeathBytes];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  int passed = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&passed, CMSG_DATA(c), sizeof passed);
    }
  }
  if (dev.fd >= 0) close(dev.fd);
  dev.fd = -1;
  dev.on_death.clear();
  if (buf[0] == 'D' && passed >= 0) {
    dev.fd = passed;
    dev.on_death.assign(buf + 1, buf + n);
  } else if (passed >= 0) {
    close(passed);
  }
  return true;
}

// Whom the guard watches over: the display, and the pressed-input marker
// its server writes (input/marker.h), which the guard removes once nothing
// of the server's can be left down.
struct guarded_server {
  std::string display;
  std::string marker;
  pid_t pid = 0;
};

// What the guard does once the server's end of the pipe has closed.
[[noreturn]] void release_and_exit(const guarded_server& server, const std::bitset<256>& keys,
                                   const std::bitset<32>& buttons,
                                   const std::bitset<256>& borrowed, guarded_device& dev) {
  if (dev.fd >= 0) {
    // The device still has the server's last state: neutral, then gone
    // with our copy of it.
    ssize_t n = write(dev.fd, dev.on_death.data(), dev.on_death.size());
    close(dev.fd);
    log(log_level::warn, "input guard: the server went away; its controller was set neutral (%s)",
        n == ssize_t(dev.on_death.size()) ? "done" : strerror(errno));
  }
  if (keys.none() && buttons.none() && borrowed.none()) {
    remove_input_marker(server.marker, server.pid);
    _exit(0);
  }
  int screen_number = 0;
  xcb_connection_t* c = xcb_connect(server.display.c_str(), &screen_number);
  // No display: nothing is held there any more. The marker stays, so a
  // server that finds the display back releases whatever is down on it.
  if (xcb_connection_has_error(c)) _exit(1);
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(c));
  xcb_window_t root = it.data != nullptr ? it.data->root : XCB_NONE;
  for (size_t b = 1; b < buttons.size(); ++b) {
    if (buttons[b]) xcb_test_fake_input(c, XCB_BUTTON_RELEASE, uint8_t(b), XCB_CURRENT_TIME, root, 0, 0, 0);
  }
  for (size_t k = 8; k < keys.size(); ++k) {
    if (keys[k]) xcb_test_fake_input(c, XCB_KEY_RELEASE, uint8_t(k), XCB_CURRENT_TIME, root, 0, 0, 0);
  }
  for (size_t k = 8; k < borrowed.size(); ++k) {
    if (!borrowed[k]) continue;
    const xcb_keysym_t none[2] = {0, 0};
    xcb_change_keyboard_mapping(c, 1, xcb_keycode_t(k), 2, none);
  }
  x11_sync(c);
  xcb_disconnect(c);
  remove_input_marker(server.marker, server.pid);
  log(log_level::warn,
      "input guard: the server went away holding %zu key(s) and %zu button(s); released them",
      keys.count(), buttons.count());
  _exit(0);
}

[[noreturn]] void guard_main(int fd, int devices, const guarded_server& server) {
  prctl(PR_SET_NAME, "cu-input-guard");
  // A Ctrl+C or SIGTERM sent to the whole process group must not take the
  // guard down before the server has released its input.
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(s, SIG_IGN);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
  }
  // Keep only stderr (for one log line) and the pipe: holding any other
  // descriptor (the lock, a socket) would outlive the server.
  int max = int(sysconf(_SC_OPEN_MAX));
  for (int f = 3; f < (max > 0 ? max : 1024); ++f) {
    if (f != fd && f != devices) close(f);
  }
  guarded_device dev;
  std::bitset<256> keys, borrowed;
  std::bitset<32> buttons;
  unsigned char buf[4096];
  size_t have = 0;
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {devices, POLLIN, 0}};
    if (poll(p, devices >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      release_and_exit(server, keys, buttons, borrowed, dev);
    }
    if (devices >= 0 && p[1].revents != 0 && !read_device_record(devices, dev)) {
      // The server closed the channel: it has no device any more, or is
      // dying (the pipe says which).
      close(devices);
      devices = -1;
    }
    if (p[0].revents == 0) continue;
    ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) release_and_exit(server, keys, buttons, borrowed, dev);
    have += size_t(n);
    size_t i = 0;
    for (; i + 2 <= have; i += 2) {
      uint8_t code = buf[i + 1];
      switch (buf[i]) {
        case 'K': keys.set(code); break;
        case 'k': keys.reset(code); break;
        case 'B': if (code < 32) buttons.set(code); break;
        case 'b': if (code < 32) buttons.reset(code); break;
        case 'M': borrowed.set(code); break;
        case 'm': borrowed.reset(code); break;
        default: break;
      }
    }
    if (i < have) buf[0] = buf[i];
    have -= i;
  }
}

}  // namespace

input_guard::~input_guard() {
  if (fd_ >= 0) close(fd_);
  if (devices_fd_ >= 0) close(devices_fd_);
}

input_guard& input_guard::operator=(input_guard&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    if (devices_fd_ >= 0) close(devices_fd_);
    fd_ = o.fd_;
    devices_fd_ = o.devices_fd_;
    o.fd_ = -1;
    o.devices_fd_ = -1;
  }
  return *this;
}

guard_devices::~guard_devices() {
  if (fd_ >= 0) close(fd_);
}

guard_devices& guard_devices::operator=(guard_devices&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void guard_devices::adopt(int device_fd, std::span<const uint8_t> on_death) {
  if (fd_ < 0) return;
  uint8_t buf[1 + kMaxDeathBytes];
  buf[0] = 'D';
  size_t n = std::min(on_death.size(), kMaxDeathBytes);
  std::memcpy(buf + 1, on_death.data(), n);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{buf, 1 + n};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &device_fd, sizeof device_fd);
  ssize_t sent;
  do {
    sent = sendmsg(fd_, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    log(log_level::warn, "input guard unreachable for the controller (%s); continuing without it",
        strerror(errno));
    close(fd_);
    fd_ = -1;
  }
}

void guard_devices::forget() {
  if (fd_ < 0) return;
  const uint8_t rec = 'F';
  ssize_t sent;
  do {
    sent = send(fd_, &rec, 1, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
}

input_guard input_guard::start(const std::string& display, const std::string& marker) {
  const guarded_server server{display, marker, getpid()};
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    log(log_level::warn, "input guard not started: pipe: %s", strerror(errno));
    return {};
  }
  // The devices channel keeps each record whole (a descriptor rides with
  // its bytes); without it the guard still guards the keyboard and pointer.
  int d[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, d) != 0) {
    log(log_level::warn, "input guard: no devices channel: %s", strerror(errno));
    d[0] = d[1] = -1;
  }
  auto close_devices = [&] {
    for (int f : d) {
      if (f >= 0) close(f);
    }
  };
  // Fork twice so the guard is not our child: nobody has to reap it, and it
  // is reparented at once instead of when we die.
  pid_t mid = fork();
  if (mid < 0) {
    log(log_level::warn, "input guard not started: fork: %s", strerror(errno));
    close(p[0]);
    close(p[1]);
    close_devices();
    return {};
  }
  if (mid == 0) {
    close(p[1]);
    if (d[1] >= 0) close(d[1]);
    pid_t guard = fork();
    if (guard == 0) {
      setsid();
      guard_main(p[0], d[0], server);
    }
    _exit(guard < 0 ? 1 : 0);
  }
  close(p[0]);
  if (d[0] >= 0) close(d[0]);
  int status = 0;
  while (waitpid(mid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    log(log_level::warn, "input guard not started");
    close(p[1]);
    if (d[1] >= 0) close(d[1]);
    return {};
  }
  // Never block the input actor on a stalled guard; a record it misses only
  // weakens the crash-time cleanup.
  fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
  if (d[1] >= 0) fcntl(d[1], F_SETFL, fcntl(d[1], F_GETFL) | O_NONBLOCK);
  return input_guard(p[1], d[1]);
}

void input_guard::send(char op, uint8_t code) {
  if (fd_ < 0) return;
  const unsigned char rec[2] = {static_cast<unsigned char>(op), code};
  ssize_t n;
  do {
    n = write(fd_, rec, 2);
  } while (n < 0 && errno == EINTR);
  if (n != 2) {
    log(log_level::warn, "input guard unreachable (%s); continuing without it",
        n < 0 ? strerror(errno) : "short write");
    close(fd_);
    fd_ = -1;
  }
}

}  // namespace cu
