// Owns: finding what open_application starts when no window matches: an
// executable on PATH, else a usable desktop entry in the XDG application
// directories (desktop_entry.h reads those; spawn.h starts the result).
// Thread affinity: any thread; it only reads the file system.
#pragma once

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

}  // namespace cu
