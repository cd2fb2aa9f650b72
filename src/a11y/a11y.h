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
// answered with an error, and the next job tries again. Before each job it
// checks that the connection is still up: when the bus went away
// (at-spi-bus-launcher ended or was restarted), the job is answered with an
// error saying so, the connection and every snapshot are dropped, and a
// later job connects again to the bus there is then.
//
// A job's budget runs from when it was posted, not from when it starts: a
// job that waited in the queue past its deadline is answered at once with
// a timeout, so no call waits longer than its tool's documented time
// however many are queued before it.
//
// Stopping is bounded too: for kEndGraceMs after end_soon() the jobs go on
// as before (a client that writes its calls and closes its end, as
// `printf ... | computer-use-mcp` does, is answered), each cut to that
// time; then the jobs still queued are answered that the server is
// stopping, and a call still blocked is ended by a watchdog thread that
// shuts down the sockets of the D-Bus connections the thread publishes
// before every bus call (the bus, and libatspi's peer-to-peer connection to
// each application), since libdbus waits on one of them and nothing else
// wakes it.
// Thread affinity: post(), cancel(), end_soon() and stop() on the loop
// thread; everything else on the a11y thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
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
typedef struct DBusConnection DBusConnection;

namespace cu {

struct a11y_job : job_header {
  std::unique_ptr<a11y_op> op;
  // When post() took it: its budget counts from here.
  std::chrono::steady_clock::time_point posted{};
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

  // The server is stopping (stdin's end or a signal): jobs run for
  // kEndGraceMs more, each cut to that time; then the queued ones are
  // answered with an error and never run, the running one stops at its
  // next bus call, and one blocked in a bus call has every D-Bus connection
  // of the thread shut under it (the bus and each application's
  // peer-to-peer one), so its call returns whichever connection it waits
  // on. Idempotent.
  void end_soon();

  // Ends the queued jobs as end_soon() does, then joins.
  void stop();

  // How long after end_soon() jobs still run: what a pipeline's last calls
  // need (list_apps on a bus just started takes tens of milliseconds),
  // and well inside the second the server has to exit in.
  static constexpr int kEndGraceMs = 600;

 private:
  void thread_main();
  bool is_cancelled(uint64_t seq);
  // Whether end_soon()'s grace is over; lock-free, for the jobs' checks.
  bool past_end() const;
  void watchdog_main();
  // On the a11y thread: makes now (the connections a call can block on)
  // the watchdog's list, each referenced while listed. Cheap when nothing
  // changed.
  void publish(const std::vector<DBusConnection*>& now);

  std::string display_;
  completion_queue& done_;
  GMainContext* context_ = nullptr;

  std::mutex mu_;  // Guards everything below up to thread_.
  std::condition_variable running_done_;  // running_ became false, or stop.
  std::deque<a11y_job> queue_;
  std::vector<uint64_t> cancels_;  // Cancelled requests not yet finished.
  bool stopping_ = false;
  bool ending_ = false;  // end_soon() was called.
  bool running_ = false;  // A job is in op->run.
  // Every D-Bus connection the a11y thread's calls can block on,
  // referenced: what the watchdog shuts down.
  std::vector<DBusConnection*> connections_;

  std::atomic<bool> ending_flag_{false};  // ending_, read without the lock by jobs.
  // When the grace ends (steady_clock's count), set before ending_flag_.
  std::atomic<int64_t> end_at_{0};
  std::thread thread_;
  std::thread watchdog_;  // Started by end_soon().
  std::vector<DBusConnection*> published_;  // The a11y thread's copy of connections_.
};

}  // namespace cu
