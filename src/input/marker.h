// Owns: the pressed-input marker, a small file beside the single-owner lock
// (CU_LOCK_PATH with ".input" added) that says a server of this display
// pressed keys or buttons and has not yet said that none of them can be left
// down. The server writes its pid there just before its first press; a clean
// exit removes it after releasing, and so does the input guard after it has
// released a killed server's input. A marker found at start-up therefore
// names a server that died with nobody releasing after it, and only then
// does the next server release what the display's XTest devices hold: a
// VNC viewer's input is XTest input too, and a key a person holds through
// x11vnc when a server starts is not a predecessor's (docs/watching.md).
// Thread affinity: none (plain file calls); the input actor writes, reads
// and removes it, the guard process removes it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace cu {

// The marker's path for a lock path; empty (no marker) for an empty one.
std::string input_marker_path(const std::string& lock_path);

// Writes pid into the marker at path, refusing a symbolic link, another
// user's file or a file with another name (as the lock does). False when
// it could not; the caller then only loses the start-up release.
bool write_input_marker(const std::string& path, pid_t pid);

// The pid the marker at path names; nothing when there is no marker or it
// holds no pid.
std::optional<pid_t> read_input_marker(const std::string& path);

// The pid of a server that died leaving its marker, when there is one: the
// marker names a process that no longer exists, or this very process (a
// predecessor that had our pid, as in a container that restarts the server
// as the same pid: we write our marker only later). A live other process
// keeps its marker, and its input is its own.
std::optional<pid_t> dead_marker_pid(const std::string& path);

// Removes the marker at path if it names pid (and only then: a newer
// server's marker stays).
void remove_input_marker(const std::string& path, pid_t pid);

}  // namespace cu
