// Owns: the single-owner lock (flock on CU_LOCK_PATH) that keeps two servers
// from driving one pointer and keyboard.
// Thread affinity: main thread, at start-up.
#pragma once

#include <string>

#include "util/result.h"

namespace cu {

// Takes the lock without waiting and keeps it for the life of the process
// (the descriptor is returned and never closed). Fails when another process
// holds it.
result<int> acquire_instance_lock(const std::string& path);

}  // namespace cu
