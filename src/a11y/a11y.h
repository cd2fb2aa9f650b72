// Owns: the a11y thread, which is the only thread that talks to the
// accessibility bus. libatspi keeps its connection and caches in globals
// and is not thread-safe, and its calls block on D-Bus round trips, so
// every AT-SPI call of the server runs here, one job at a time, in order
// of arrival. The thread owns a GLib main context of its own, made its
// thread-default and given to libatspi (atspi_set_main_context), and
// sleeps in it between jobs, so the bus's messages (applications coming
// and going, the events libatspi matches) are handled while it is idle;
// post() and cancel() wake it with g_main_context_wakeup.
//
// It connects to the bus on its first job, not at start-up: a server that
// never runs an a11y tool never touches D-Bus. A job that finds no bus is
// answered with an error, and the next job tries again.
// Thread affinity: post(), cancel() and stop() on the loop thread;
// everything else on the a11y thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "a11y/a11y_op.h"
#include "core/completion_queue.h"
#include "core/job.h"

typedef struct _GMainContext GMainContext;

namespace cu {

struct a11y_job : job_header {
  std::unique_ptr<a11y_op> op;
};

class a11y {
 public:
  // display: the X display whose windows the toolset captures and focuses.
  a11y(std::string display, completion_queue& done);
  ~a11y();
  a11y(const a11y&) = delete;
  a11y& operator=(const a11y&) = delete;

  // Queues the job; its completion carries the result.
  void post(a11y_job job);

  // Drops request seq's job: a queued one never runs, a running one stops
  // at its next bus call. Its completion carries nothing.
  void cancel(uint64_t seq);

  // Lets the queued jobs run (their deadlines bound it), then joins.
  void stop();

 private:
  void thread_main();
  bool is_cancelled(uint64_t seq);

  std::string display_;
  completion_queue& done_;
  GMainContext* context_ = nullptr;

  std::mutex mu_;  // Guards queue_, cancels_ and stopping_.
  std::deque<a11y_job> queue_;
  std::vector<uint64_t> cancels_;  // Cancelled requests not yet finished.
  bool stopping_ = false;

  std::thread thread_;
};

}  // namespace cu
