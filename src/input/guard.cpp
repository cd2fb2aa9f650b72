#include "input/guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xcb/xcb.h>
#include <xcb/xtest.h>

#include <bitset>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/log.h"
#include "x11/request.h"

namespace cu {
namespace {

// What the guard does once the server's end of the pipe has closed.
[[noreturn]] void release_and_exit(const std::string& display, const std::bitset<256>& keys,
                                   const std::bitset<32>& buttons,
                                   const std::bitset<256>& borrowed) {
  if (keys.none() && buttons.none() && borrowed.none()) _exit(0);
  int screen_number = 0;
  xcb_connection_t* c = xcb_connect(display.c_str(), &screen_number);
  if (xcb_connection_has_error(c)) _exit(1);  // No display: nothing is held there any more.
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
  log(log_level::warn,
      "input guard: the server went away holding %zu key(s) and %zu button(s); released them",
      keys.count(), buttons.count());
  _exit(0);
}

[[noreturn]] void guard_main(int fd, const std::string& display) {
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
    if (f != fd) close(f);
  }
  std::bitset<256> keys, borrowed;
  std::bitset<32> buttons;
  unsigned char buf[4096];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) release_and_exit(display, keys, buttons, borrowed);
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
}

input_guard& input_guard::operator=(input_guard&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

input_guard input_guard::start(const std::string& display) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    log(log_level::warn, "input guard not started: pipe: %s", strerror(errno));
    return {};
  }
  // Fork twice so the guard is not our child: nobody has to reap it, and it
  // is reparented at once instead of when we die.
  pid_t mid = fork();
  if (mid < 0) {
    log(log_level::warn, "input guard not started: fork: %s", strerror(errno));
    close(p[0]);
    close(p[1]);
    return {};
  }
  if (mid == 0) {
    close(p[1]);
    pid_t guard = fork();
    if (guard == 0) {
      setsid();
      guard_main(p[0], display);
    }
    _exit(guard < 0 ? 1 : 0);
  }
  close(p[0]);
  int status = 0;
  while (waitpid(mid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    log(log_level::warn, "input guard not started");
    close(p[1]);
    return {};
  }
  // Never block the input actor on a stalled guard; a record it misses only
  // weakens the crash-time cleanup.
  fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
  return input_guard(p[1]);
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
