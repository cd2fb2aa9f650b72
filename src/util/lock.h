// Owns: the single-owner lock (flock on CU_LOCK_PATH) that keeps two servers
// from driving one pointer and keyboard, and where that lock lives by
// default: in the user's runtime directory, one per display, so no other
// user can take it or point it at a file of ours.
// Thread affinity: main thread, at start-up.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace cu {

// The lock file's name for an X display: "sidebutton-computer-use-:10.lock".
// The screen number is dropped (":10.0" and ":10" share one pointer), and
// any character outside [A-Za-z0-9.:_-] becomes '_'.
std::string lock_file_name(std::string_view display);

// The default lock path for display: in $XDG_RUNTIME_DIR when it is set
// (it must then be a directory of ours that nobody else may enter), else in
// /tmp/sidebutton-computer-use-<uid>/, created 0700 and checked to be ours.
result<std::string> default_lock_path(std::string_view display);

// Takes the lock without waiting and keeps it for the life of the process
// (the descriptor is returned and never closed). Fails when another process
// holds it, and refuses a path that is a symbolic link, not a regular file,
// another user's file or a hard link (a second name of some other file):
// the file is never truncated or written through such a name. The pid is
// written into it only when it is empty or holds a previous pid.
result<int> acquire_instance_lock(const std::string& path);

}  // namespace cu
