#include "desktop/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cu {
namespace {

// Spawning. Everything the children touch is prepared before the first fork:
// after fork in a multithreaded process, another thread may have held the
// malloc lock (or any other) at that instant, so the children call only
// async-signal-safe functions on memory that already exists.

// What the children tell the parent through the pipe. Each message is one
// write of two ints, well under PIPE_BUF, so messages from the two children
// never interleave even though either may write first.
enum message_kind : int {
  kProgramPid = 1,   // From the intermediate child: the program's pid.
  kForkFailed = 2,   // From the intermediate child: errno of its fork.
  kSetupFailed = 3,  // From the program before exec: errno of dup3.
  kExecFailed = 4,   // From the program: errno of execv.
};

struct spawn_plan {
  char* const* argv;
  int devnull;
  int pipe_read;
  int pipe_write;
  int fd_limit;  // One past the highest descriptor that may be open.
};

void send(int fd, int kind, int value) {
  int message[2] = {kind, value};
  ssize_t ignored = write(fd, message, sizeof message);
  (void)ignored;
}

// Closes every descriptor from first on. close_range does it in one call on
// Linux 5.9 and later; older kernels get the loop, bounded by the limit read
// before the fork.
void close_from(int first, int fd_limit) {
  if (close_range(unsigned(first), ~0U, 0) == 0) return;
  for (int fd = first; fd < fd_limit; ++fd) close(fd);
}

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
      send(report, kSetupFailed, errno);
      _exit(127);
    }
    report = 3;
  }
  close_from(4, plan.fd_limit);
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
  send(report, kExecFailed, errno);
  _exit(127);
}

[[noreturn]] void run_intermediate(const spawn_plan& plan) {
  close(plan.pipe_read);
  pid_t pid = _Fork();
  if (pid == 0) run_program(plan);
  if (pid < 0) {
    send(plan.pipe_write, kForkFailed, errno);
    _exit(1);
  }
  send(plan.pipe_write, kProgramPid, int(pid));
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

}  // namespace

result<pid_t> spawn_detached(const std::vector<std::string>& argv) {
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

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return spawn_error(program, "cannot open /dev/null: ", errno);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    int err = errno;
    close(devnull);
    return spawn_error(program, "cannot create a pipe: ", err);
  }
  std::vector<int> low;
  spawn_plan plan{cargv.data(), above_stdio(devnull, low), above_stdio(pipe_fds[0], low),
                  above_stdio(pipe_fds[1], low), fd_limit};
  for (int fd : low) close(fd);
  auto close_all = [&] {
    for (int fd : {plan.devnull, plan.pipe_read, plan.pipe_write}) {
      if (fd >= 0) close(fd);
    }
  };
  if (plan.devnull < 0 || plan.pipe_read < 0 || plan.pipe_write < 0) {
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
  if (child < 0) {
    close_all();
    return spawn_error(program, "fork failed: ", fork_err);
  }

  // Read until end of file, which comes once the intermediate child has
  // exited and the program has exec'd (close-on-exec) or died.
  int messages[8];
  char* buffer = reinterpret_cast<char*>(messages);
  size_t got = 0;
  while (got < sizeof messages) {
    ssize_t n = read(plan.pipe_read, buffer + got, sizeof messages - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  close_all();
  int status;
  // ECHILD means someone set SIGCHLD to SIG_IGN and the kernel reaped it.
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  pid_t pid = -1;
  for (size_t i = 0; i + 1 < got / sizeof(int); i += 2) {
    int kind = messages[i], value = messages[i + 1];
    switch (kind) {
      case kProgramPid: pid = value; break;
      case kForkFailed: return spawn_error(program, "fork failed: ", value);
      case kSetupFailed: return spawn_error(program, "cannot set up descriptors: ", value);
      case kExecFailed: return spawn_error(program, "", value);
      default: break;
    }
  }
  if (pid <= 0) return make_error(errc::io, "cannot start " + program + ": the launcher died");
  return pid;
}

}  // namespace cu
