// Owns: reading a desktop entry file (the [Desktop Entry] keys a launcher
// needs) and turning its Exec value into an argv, per the XDG Desktop Entry
// specification.
// Thread affinity: any thread; parse_desktop_exec is pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cu {

// The keys find_launchable needs from the [Desktop Entry] group, raw (still
// escaped); localized variants such as Name[de] are not these keys.
struct desktop_entry {
  std::optional<std::string> type, name, exec, try_exec, hidden;
  std::optional<std::string> no_display;        // NoDisplay: hidden from menus, still launchable.
  std::optional<std::string> terminal;          // Terminal: run inside a terminal emulator.
  std::optional<std::string> path;              // Path: the working directory.
  std::optional<std::string> startup_wm_class;  // StartupWMClass: its windows' WM_CLASS.
};

// A boolean key's value as the spec spells true; anything else (absent,
// "false", a typo) is false.
inline bool is_true(const std::optional<std::string>& value) { return value == "true"; }

// The entry's keys. Fails with io and the reason ("it is a FIFO, not a
// regular file", "it is larger than 1 MiB, ...", "it cannot be read
// (Permission denied)"), when file is not a readable
// regular file of a sensible size. The file is opened without blocking and
// its type checked on the open descriptor, so a FIFO (or a file swapped for
// one after a look) never stalls the caller.
result<desktop_entry> read_desktop_entry(const std::string& file);

// Undoes the general escapes of a string value (\s \n \t \r \\). Anything
// else after a backslash is kept with its backslash, so that Exec's quoting
// rules, applied afterwards, still see \" \` and \$.
std::string unescape_value(std::string_view v);

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

}  // namespace cu
