// Owns: starting a program detached from the server (double fork, its own
// session, stdio on /dev/null, nothing else inherited, no shell).
// Thread affinity: any thread. spawn_detached forks, blocks the calling
// thread until the program has exec'd (or failed to), and is safe to call
// from a multithreaded process because the children run only
// async-signal-safe code.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "util/result.h"

namespace cu {

// Starts argv (argv[0] an absolute path; no shell, no PATH search) so that it
// is not our child: an intermediate child forks the program and exits at once,
// and is reaped here, so the program is reparented to init (or a subreaper)
// and nobody here has to wait for it. In the program: setsid(), stdin, stdout
// and stderr on /dev/null, every other descriptor closed, every signal back to
// its default disposition and an empty signal mask, then execv. Returns the
// program's pid once it has exec'd. Fails with invalid_argument for an empty,
// relative or NUL-containing argv, and with io, naming the program and the
// errno text, when it could not be started.
result<pid_t> spawn_detached(const std::vector<std::string>& argv);

}  // namespace cu
