// Owns: the interface for running a handful of independent tasks at once,
// which lets one capture spread its encoding over the idle capture workers.
// Thread affinity: run_all is called from a capture worker (or a test).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace cu {

class task_runner {
 public:
  virtual ~task_runner() = default;
  // Runs every task, possibly several at a time on other threads, and
  // returns when all have finished. The caller runs some of them itself, so
  // it never waits on a pool with no free thread.
  virtual void run_all(std::span<const std::function<void()>> tasks) = 0;
};

// Runs items [0, count) as up to `parts` contiguous runs at once through
// runner (here, in one run, when runner is null or one part will do):
// run(from, to) handles items [from, to).
inline void run_in_parts(task_runner* runner, size_t count, size_t parts,
                         const std::function<void(size_t, size_t)>& run) {
  parts = runner == nullptr ? 1 : std::min(parts, count);
  if (parts <= 1) {
    run(0, count);
    return;
  }
  std::vector<std::function<void()>> tasks;
  for (size_t p = 0; p < parts; ++p) {
    tasks.emplace_back([&, p] { run(count * p / parts, count * (p + 1) / parts); });
  }
  runner->run_all(tasks);
}

}  // namespace cu
