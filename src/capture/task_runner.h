// Owns: the interface for running a handful of independent tasks at once,
// which lets one capture spread its encoding over the idle capture workers.
// Thread affinity: run_all is called from a capture worker (or a test).
#pragma once

#include <functional>
#include <span>

namespace cu {

class task_runner {
 public:
  virtual ~task_runner() = default;
  // Runs every task, possibly several at a time on other threads, and
  // returns when all have finished. The caller runs some of them itself, so
  // it never waits on a pool with no free thread.
  virtual void run_all(std::span<const std::function<void()>> tasks) = 0;
};

}  // namespace cu
