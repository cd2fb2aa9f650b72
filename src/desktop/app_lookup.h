// Owns: starting an application by name for open_application when no window
// matches: finding what to run (an executable on PATH, else a desktop entry
// in the XDG application directories), turning a desktop entry's Exec value
// into an argv, and starting that argv detached from the server (double fork,
// its own session, stdio on /dev/null, nothing else inherited, no shell).
// Thread affinity: any thread. find_launchable reads the file system and
// parse_desktop_exec is pure; spawn_detached forks, blocks the calling thread
// until the program has exec'd (or failed to), and is safe to call from a
// multithreaded process because the children run only async-signal-safe code.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cu {

// What to start, and where it was found.
struct launch_spec {
  std::vector<std::string> argv;  // argv[0] is an absolute path to an executable file.
  std::string source;             // "PATH", or the path of the .desktop file used.
};

// Where find_launchable looks. Tests build one by hand; the server reads it
// from its environment.
struct launch_env {
  std::string path;                           // Like PATH: directories separated by ':'.
  std::vector<std::string> application_dirs;  // Highest priority first.

  // PATH (a default "/usr/local/bin:/usr/bin:/bin" when unset), and
  // $XDG_DATA_HOME (default $HOME/.local/share) followed by each of
  // $XDG_DATA_DIRS (default /usr/local/share:/usr/share), each with
  // "/applications" appended. Relative entries are dropped, as the XDG Base
  // Directory spec asks, and so are repeats.
  static launch_env from_environment();
};

// True when path names a regular file (after following symlinks) that this
// process may execute.
bool is_executable_file(const std::string& path);

// What to start for app, or nothing when there is no match or app is not a
// plain name (empty, containing '/' or NUL, or starting with '-'). In order:
//  1. An executable regular file named exactly app in a PATH directory, the
//     first one found. Empty and relative PATH entries are skipped, so the
//     server's working directory never decides what runs.
//  2. A desktop entry, directly inside one of the application directories
//     (no subdirectories): first one whose file name is "<app>.desktop"
//     (compared ASCII case-insensitively), then one whose unlocalized Name in
//     the [Desktop Entry] group equals app (also case-insensitively). As XDG
//     asks, a file name seen in a higher-priority directory hides the same
//     name further down, so a Hidden=true copy in ~/.local/share/applications
//     removes a system entry. The entry must have Type=Application, not
//     Hidden=true, a valid Exec whose program resolves (through PATH when it
//     has no '/') to an executable, and, if it has TryExec, a TryExec that
//     resolves the same way. Within a directory, files are tried in name order.
std::optional<launch_spec> find_launchable(std::string_view app, const launch_env& env);

// Turns a desktop entry's Exec value, exactly as it appears after "Exec=" in
// the file, into an argv. The key's general string escapes (\s \n \t \r \\)
// are undone first, then the command line is split: double quotes group an
// argument and inside them \" \` \$ \\ stand for the character. Field codes
// are dropped (%f %F %u %U %d %D %n %N %i %c %k %v %m; %i would be the icon,
// which a launcher without a file to open does not pass), an argument that
// held nothing but field codes disappears entirely, and %% is a literal %.
// Beyond the spec, and like GLib and KDE, single quotes and a backslash
// outside quotes are read the way a shell would, because real files use them.
// Fails with invalid_argument and a one-line message for an unterminated
// quote, an unknown or truncated field code, or no program left to run.
result<std::vector<std::string>> parse_desktop_exec(std::string_view exec);

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
