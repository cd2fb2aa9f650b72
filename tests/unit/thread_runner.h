// Owns: a task_runner for the encoder tests: the first task runs on the
// calling thread and the rest on threads of their own, all at once, as the
// capture pool does when workers are idle.
// Thread affinity: the test thread.
#pragma once

#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "capture/task_runner.h"

namespace cu::test {

class thread_runner final : public cu::task_runner {
 public:
  void run_all(std::span<const std::function<void()>> tasks) override {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < tasks.size(); ++i) threads.emplace_back(tasks[i]);
    if (!tasks.empty()) tasks[0]();
    for (std::thread& t : threads) t.join();
    ran += tasks.size();
  }
  size_t ran = 0;  // Tasks run so far.
};

}  // namespace cu::test
