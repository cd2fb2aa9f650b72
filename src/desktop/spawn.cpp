#include "desktop/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace cu {
namespace {

// Spawning. Everything the children touch is prepared before the first fork:
// after fork in a multithreaded process, another thread may have held the
// malloc lock (or any other) at that instant, so the children call only
// async-signal-safe functions on memory that already exists.

// What the children tell the parent. Each message is one write of two ints,
// well under PIPE_BUF, so messages from the two children never interleave
// in the report pipe even though either may write first. kExited goes
// through the watch socket instead, after the report pipe has closed.
enum message_kind : int {
  kProgramPid = 1,   // From the intermediate child: the program's pid.
  kForkFailed = 2,   // From the intermediate child: errno of its fork.
  kSetupFailed = 3,  // From the program before exec: errno of dup3.
  kExecFailed = 4,   // From the program: errno of execv.
  kChdirFailed = 5,  // From the program before exec: errno of chdir.
  kExited = 6,       // From the watcher: the program's wait status.
};

struct spawn_plan {
  char* const* argv;
  const char* working_dir;  // nullptr: stay where the server is.
  int devnull;
  int pipe_read;
  int pipe_write;
  int watch_ours;    // The server's end of the watch socket, or -1 when not watching.
  int watch_theirs;  // The watcher's end, or -1.
  int fd_limit;      // One past the highest descriptor that may be open.
};

void report_message(int fd, int kind, int value) {
  int message[2] = {kind, value};
  ssize_t ignored = write(fd, message, sizeof message);
  (void)ignored;
}

// Closes descriptors first to last (inclusive; nothing when first > last).
// close_range does it in one call on Linux 5.9 and later; older kernels get
// the loop, bounded by the limit read before the fork.
void close_between(unsigned first, unsigned last, int fd_limit) {
  if (first > last) return;
  if (close_range(first, last, 0) == 0) return;
  for (unsigned fd = first; fd <= last && fd < unsigned(fd_limit); ++fd) close(int(fd));
}

void close_from(int first, int fd_limit) { close_between(unsigned(first), ~0U, fd_limit); }

[[noreturn]] void run_program(const spawn_plan& plan) {
  // A new session, so the program has no controlling terminal and a signal
  // sent to the server's process group (a Ctrl-C in its terminal) spares it.
  setsid();
  dup2(plan.devnull, STDIN_FILENO);
  dup2(plan.devnull, STDOUT_FILENO);
  dup2(plan.devnull, STDERR_FILENO);
  // The pipe moves to 3 so that one close_range can take everything above
  // it. It stays close-on-exec: a successful execv closes it, and the parent
  // reads that as success.
  int report = plan.pipe_write;
  if (report != 3) {
    if (dup3(report, 3, O_CLOEXEC) < 0) {
      report_message(report, kSetupFailed, errno);
      _exit(127);
    }
    report = 3;
  }
  close_from(4, plan.fd_limit);
  if (plan.working_dir != nullptr && chdir(plan.working_dir) != 0) {
    report_message(report, kChdirFailed, errno);
    _exit(127);
  }
  // Handlers would be reset by execv anyway, but ignored signals survive it
  // (the server ignores SIGPIPE), and the mask we blocked before forking
  // would too.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  // sigaction refuses SIGKILL, SIGSTOP and glibc's internal signals, which
  // is fine: those cannot be ignored anyway.
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execv(plan.argv[0], plan.argv);
  report_message(report, kExecFailed, errno);
  _exit(127);
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return int(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// The intermediate child: forks the program, reports its pid, and then
// either exits at once (no watch) or watches it until it exits or the
// server closes its end of the watch socket, whichever comes first.
[[noreturn]] void run_intermediate(const spawn_plan& plan) {
  close(plan.pipe_read);
  if (plan.watch_ours >= 0) close(plan.watch_ours);
  // The server may ignore SIGCHLD, and then the kernel would reap the
  // program unasked and waitpid could not read its status. The program
  // resets every disposition itself, so this touches nothing but us.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, nullptr);
  pid_t pid = _Fork();
  if (pid == 0) run_program(plan);
  if (pid < 0) {
    report_message(plan.pipe_write, kForkFailed, errno);
    _exit(1);
  }
  // Opened before the pid is reported, while the program is certainly our
  // child; a pidfd of a child stays valid whatever happens to the pid.
  int pidfd = plan.watch_theirs >= 0 ? open_pidfd(pid) : -1;
  report_message(plan.pipe_write, kProgramPid, int(pid));
  if (pidfd < 0) _exit(0);  // Not watching: the program is detached now.

  // Keep only the pidfd and the socket. Closing the report pipe lets the
  // server's read end (once the program has exec'd); and the server's own
  // descriptors (its stdout, its X connections, its lock) must not stay
  // open in a process that outlives the fork.
  unsigned keep_lo = unsigned(std::min(pidfd, plan.watch_theirs));
  unsigned keep_hi = unsigned(std::max(pidfd, plan.watch_theirs));
  if (keep_lo > 0) close_between(0, keep_lo - 1, plan.fd_limit);
  if (keep_hi > keep_lo + 1) close_between(keep_lo + 1, keep_hi - 1, plan.fd_limit);
  close_from(int(keep_hi) + 1, plan.fd_limit);
  // The server never writes to the socket: it becomes readable when the
  // server closes its end (or dies), which means stop watching. Every
  // signal is still blocked here, so poll is not interrupted and a write to
  // a closed socket raises no SIGPIPE.
  pollfd fds[2] = {{pidfd, POLLIN, 0}, {plan.watch_theirs, POLLIN, 0}};
  while (poll(fds, 2, -1) < 0) {
    if (errno != EINTR) _exit(1);
  }
  if (fds[0].revents != 0) {
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (got == pid) report_message(plan.watch_theirs, kExited, status);
  }
  // A program still running is reparented to init now.
  _exit(0);
}

// Moves fd above the standard descriptors, keeping it close-on-exec. Only a
// server started with a standard descriptor closed gets a low one, and the
// program's dup2 onto 0, 1 and 2 must not clobber the pipe or /dev/null.
int above_stdio(int fd, std::vector<int>& to_close) {
  if (fd > STDERR_FILENO) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  to_close.push_back(fd);
  return moved;
}

error spawn_error(const std::string& program, const std::string& what, int err) {
  return make_error(errc::io, "cannot start " + program + ": " + what + strerror(err));
}

// Both entry points: with watch, the intermediate child stays to watch the
// program; without, it exits at once and is reaped before this returns.
result<launched_program> spawn(const std::vector<std::string>& argv, const spawn_options& options,
                               bool watch) {
  if (argv.empty() || argv[0].empty()) {
    return make_error(errc::invalid_argument, "spawn_detached needs a program to run");
  }
  const std::string& program = argv[0];
  if (program[0] != '/') {
    return make_error(errc::invalid_argument,
                      "spawn_detached needs an absolute path, not " + program);
  }
  for (const std::string& a : argv) {
    if (a.find('\0') != std::string::npos) {
      return make_error(errc::invalid_argument, "an argument for " + program + " contains NUL");
    }
  }

  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  struct rlimit files;
  int fd_limit = 65536;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    fd_limit = int(std::min<rlim_t>(files.rlim_cur, 1 << 20));
  }

  if (options.working_dir.find('\0') != std::string::npos) {
    return make_error(errc::invalid_argument,
                      "the working directory for " + program + " contains NUL");
  }

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return spawn_error(program, "cannot open /dev/null: ", errno);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    int err = errno;
    close(devnull);
    return spawn_error(program, "cannot create a pipe: ", err);
  }
  int watch_fds[2] = {-1, -1};
  if (watch && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, watch_fds) != 0) {
    int err = errno;
    close(devnull);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return spawn_error(program, "cannot create a socket pair: ", err);
  }
  std::vector<int> low;
  spawn_plan plan{cargv.data(),
                  options.working_dir.empty() ? nullptr : options.working_dir.c_str(),
                  above_stdio(devnull, low),
                  above_stdio(pipe_fds[0], low),
                  above_stdio(pipe_fds[1], low),
                  watch ? above_stdio(watch_fds[0], low) : -1,
                  watch ? above_stdio(watch_fds[1], low) : -1,
                  fd_limit};
  for (int fd : low) close(fd);
  auto close_all = [&] {
    for (int* fd : {&plan.devnull, &plan.pipe_read, &plan.pipe_write, &plan.watch_ours,
                    &plan.watch_theirs}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  };
  if (plan.devnull < 0 || plan.pipe_read < 0 || plan.pipe_write < 0 ||
      (watch && (plan.watch_ours < 0 || plan.watch_theirs < 0))) {
    int err = errno;
    close_all();
    return spawn_error(program, "cannot move descriptors: ", err);
  }

  // Every signal stays blocked from just before the fork until the program
  // resets its dispositions, so none of the server's handlers ever runs in a
  // child (libuv's would write to the server's own signal pipe). _Fork rather
  // than fork: no atfork handlers run, neither in the parent (where glibc's
  // would take every malloc arena lock) nor in a child, where they would not
  // be async-signal-safe.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t child = _Fork();
  if (child == 0) run_intermediate(plan);
  int fork_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close(plan.pipe_write);
  plan.pipe_write = -1;
  close(plan.devnull);
  plan.devnull = -1;
  if (plan.watch_theirs >= 0) close(plan.watch_theirs);
  plan.watch_theirs = -1;
  if (child < 0) {
    close_all();
    return spawn_error(program, "fork failed: ", fork_err);
  }

  // Read until end of file, which comes once the intermediate child has
  // exited or closed its end (when it watches) and the program has exec'd
  // (close-on-exec) or died.
  int messages[8];
  char* buffer = reinterpret_cast<char*>(messages);
  size_t got = 0;
  while (got < sizeof messages) {
    ssize_t n = read(plan.pipe_read, buffer + got, sizeof messages - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  int socket = plan.watch_ours;
  plan.watch_ours = -1;
  close_all();

  pid_t pid = -1;
  for (size_t i = 0; i + 1 < got / sizeof(int); i += 2) {
    if (messages[i] == kProgramPid) pid = messages[i + 1];
  }
  // From here the watch (if any) is owned: on failure its destructor ends
  // the watcher. Without one, the intermediate child has exited or is about
  // to; ECHILD means someone set SIGCHLD to SIG_IGN and the kernel reaped it.
  launched_program launched(pid, watch ? child : -1, socket);
  if (!watch) {
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (size_t i = 0; i + 1 < got / sizeof(int); i += 2) {
    int kind = messages[i], value = messages[i + 1];
    switch (kind) {
      case kForkFailed: return spawn_error(program, "fork failed: ", value);
      case kSetupFailed: return spawn_error(program, "cannot set up descriptors: ", value);
      case kChdirFailed:
        return spawn_error(program, "cannot change to " + options.working_dir + ": ", value);
      case kExecFailed: return spawn_error(program, "", value);
      default: break;
    }
  }
  if (pid <= 0) return make_error(errc::io, "cannot start " + program + ": the launcher died");
  return launched;
}

}  // namespace

launched_program::launched_program(launched_program&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      watcher_(std::exchange(other.watcher_, -1)),
      socket_(std::exchange(other.socket_, -1)),
      status_(other.status_) {}

launched_program& launched_program::operator=(launched_program&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = std::exchange(other.pid_, -1);
    watcher_ = std::exchange(other.watcher_, -1);
    socket_ = std::exchange(other.socket_, -1);
    status_ = other.status_;
  }
  return *this;
}

std::optional<int> launched_program::exit_status() {
  if (status_ || socket_ < 0) return status_;
  int message[2];
  ssize_t n;
  while ((n = recv(socket_, message, sizeof message, MSG_DONTWAIT)) < 0 && errno == EINTR) {
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return std::nullopt;
  // The watcher writes its one message in one write, so a stream socket
  // between two processes delivers it whole; anything else (end of file,
  // an error) means it watches no more.
  if (n == ssize_t(sizeof message) && message[0] == kExited) status_ = message[1];
  // Either way the watcher is done: reap it now rather than leave a zombie
  // until the watch is released.
  release();
  return status_;
}

void launched_program::release() {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (watcher_ > 0) {
    // It is our child, unreaped, so the pid is still its own. SIGKILL
    // rather than waiting for it to notice the closed socket: the program
    // it leaves behind is in a session of its own and does not notice.
    kill(watcher_, SIGKILL);
    while (waitpid(watcher_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  watcher_ = -1;
}

result<launched_program> spawn_watched(const std::vector<std::string>& argv,
                                       const spawn_options& options) {
  return spawn(argv, options, true);
}

result<pid_t> spawn_detached(const std::vector<std::string>& argv, const spawn_options& options) {
  auto launched = spawn(argv, options, false);
  if (!launched) return launched.take_error();
  return launched->pid();
}

}  // namespace cu
