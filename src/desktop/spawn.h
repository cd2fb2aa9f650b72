// Owns: starting a program detached from the server (double fork, its own
// session, stdio on /dev/null, nothing else inherited, no shell), optionally
// in another working directory, and watching it for an early exit while
// open_application waits for its window.
// Thread affinity: any thread. spawn_watched and spawn_detached fork, block
// the calling thread until the program has exec'd (or failed to), and are
// safe to call from a multithreaded process because the children run only
// async-signal-safe code. A launched_program belongs to one thread at a time.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace cu {

struct spawn_options {
  // The program's working directory; empty keeps the server's.
  std::string working_dir;
};

// A program spawn_watched started, and the watch on it.
//
// The program is not the server's child: it is the child of a small watcher
// process (the intermediate child of the double fork), which waits on a
// pidfd for the program to exit and on a socket for the server to stop
// watching. Whichever comes first ends the watcher: the program's wait
// status is written to the socket, or the watcher exits and the program, if
// it still runs, is reparented to init (or a subreaper) like any detached
// program. A non-child's exit status cannot be read any other way (waitid
// needs the parent), and because the watcher is the parent, the pid cannot
// be reused while it watches.
class launched_program {
 public:
  launched_program() = default;
  launched_program(pid_t pid, pid_t watcher, int socket)
      : pid_(pid), watcher_(watcher), socket_(socket) {}
  ~launched_program() { release(); }
  launched_program(launched_program&& other) noexcept;
  launched_program& operator=(launched_program&& other) noexcept;
  launched_program(const launched_program&) = delete;
  launched_program& operator=(const launched_program&) = delete;

  pid_t pid() const { return pid_; }

  // The program's wait status (as waitpid gives it) once it has exited
  // while watched; nothing while it runs, and nothing ever when the watch
  // could not be set up (a kernel without pidfd_open, before 5.3) or was
  // released. Never blocks. Once the watcher has reported (or gone), the
  // watch is released here.
  std::optional<int> exit_status();

  // Ends the watch: the watcher is killed and reaped here (it has nothing
  // else to do, so that takes no time), and the program carries on detached.
  // The destructor does this too.
  void release();

 private:
  pid_t pid_ = -1;
  pid_t watcher_ = -1;
  int socket_ = -1;
  std::optional<int> status_;
};

// Starts argv (argv[0] an absolute path; no shell, no PATH search) so that it
// is not our child: an intermediate child forks the program, so the program
// ends up reparented to init (or a subreaper) and nobody here has to wait for
// it. In the program: setsid(), stdin, stdout and stderr on /dev/null, every
// other descriptor closed, every signal back to its default disposition and
// an empty signal mask, chdir(options.working_dir) when one is given, then
// execv. Returns once the program has exec'd, with the intermediate child
// still watching it (see launched_program). Fails with invalid_argument for
// an empty, relative or NUL-containing argv, and with io, naming the program
// and the errno text, when it could not be started (the working directory
// included).
result<launched_program> spawn_watched(const std::vector<std::string>& argv,
                                       const spawn_options& options = {});

// spawn_watched without the watch: the intermediate child has been reaped
// when it returns, and the program's pid is all that is left.
result<pid_t> spawn_detached(const std::vector<std::string>& argv,
                             const spawn_options& options = {});

}  // namespace cu
