// Owns: finding what open_application starts when no window matches: an
// executable on PATH, else a usable desktop entry in the XDG application
// directories (desktop_entry.h reads those; spawn.h starts the result);
// and turning what was found into the command that runs: inside a terminal
// emulator for Terminal=true, in the entry's Path= directory.
// Thread affinity: any thread; it only reads the file system.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/grant_policy.h"
#include "util/result.h"

namespace cu {

// What to start, and where it was found. The last three come from a
// desktop entry; a program found on PATH leaves them empty.
struct launch_spec {
  std::vector<std::string> argv;  // argv[0] is an absolute path to an executable file.
  std::string source;             // "PATH", or the path of the .desktop file used.
  bool terminal = false;          // Terminal=true: run it inside a terminal emulator.
  std::string working_dir;        // Path= (unescaped): the directory to run it in.
  std::string startup_wm_class;   // StartupWMClass= (unescaped): its windows' WM_CLASS.
};

// What spawn runs for a launch_spec.
struct launch_command {
  std::vector<std::string> argv;  // The program's, or the emulator's: {emulator, "-e", program...}.
  std::string working_dir;        // Empty: the server's own working directory.
  std::string terminal;           // The emulator's path; empty when the program runs bare.
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

// A desktop entry that matched an application name but cannot be started.
struct rejected_entry {
  std::string file;  // The .desktop file's path.
  std::string why;   // What is wrong with it: "it is a FIFO, not a regular
                     // file", "its TryExec program "x" is not an
                     // executable on PATH", parse_desktop_exec's message.
};

// What to start for app, or nothing when there is no match or app is not a
// plain name (empty, containing '/' or NUL, or starting with '-'). rejected,
// when given, receives each desktop entry that matched app (by file name or
// by Name) but was refused, and why, in the order they were tried; a later
// usable entry is still found and returned. In order:
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
//     A NoDisplay=true entry (hidden from menus, typically a helper) is
//     found by its file name only, never by Name=, so it cannot shadow a
//     visible application of the same Name further down the list.
std::optional<launch_spec> find_launchable(std::string_view app, const launch_env& env,
                                           std::vector<rejected_entry>* rejected = nullptr);

// The terminal emulators tried for Terminal=true, in order, the way Debian
// desktops choose: x-terminal-emulator (the alternative the system
// administrator sets with update-alternatives), then xterm, then rxvt-unicode
// and rxvt. Each takes "-e program args..." as its last option (Debian
// policy 11.8.3 requires it of every x-terminal-emulator).
inline constexpr std::array<std::string_view, 4> kTerminalEmulators = {
    "x-terminal-emulator", "xterm", "urxvt", "rxvt"};

// The first of kTerminalEmulators that is an executable on path (a PATH-like
// list; empty and relative entries are skipped), as an absolute path.
std::optional<std::string> find_terminal_emulator(const std::string& path);

// The command that starts spec: spec.argv itself, or, for Terminal=true, the
// terminal emulator found on env.path with "-e" and spec.argv after it; run
// in spec.working_dir when set. Starts nothing. Fails, so that nothing is
// started, with not_available naming what to install when Terminal=true and
// no emulator is on PATH, and with io when Path= is not an absolute path to
// a directory this process may enter.
result<launch_command> prepare_launch(const launch_spec& spec, const launch_env& env);

// The desktop entries' names for applications (docs/grants.md): for each
// entry in env's application directories (the first of each file name;
// at most 4096 files), its Name= and its id (the file name without
// ".desktop"), lower-case, under its StartupWMClass and its Exec program's
// base name. So a grant of "Text Editor" covers mousepad's windows.
std::shared_ptr<const desktop_aliases> read_desktop_aliases(const launch_env& env);

// A name a launch is known by before it starts, and what it is of it.
struct launch_name {
  std::string name;  // A base name: "xterm", "python3".
  const char* what;  // "its executable", "its interpreter", "its terminal", ...
};

// The names command (for spec) runs as, as far as they can be known before
// it starts (docs/grants.md, "open_application"): each program's base name
// and, through symlinks, its real file's; a script's interpreter from its
// "#!" line (through /usr/bin/env, whose first operand is the program);
// the terminal emulator of a Terminal=true entry; the entry's
// StartupWMClass. What a script or wrapper goes on to run is not among
// them: that is known only from the window it shows.
std::vector<launch_name> launch_names(const launch_spec& spec, const launch_command& command);

}  // namespace cu
