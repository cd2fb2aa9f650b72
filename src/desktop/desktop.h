// Owns: the desktop thread and its X connection, an unmapped window of its
// own, the CLIPBOARD this server owns (served to other clients whenever
// they ask, not only during a call), and the operations of the clipboard,
// open_application and switch_display tools. It sleeps in poll() on the X
// connection and an eventfd until an X event, a new operation or a
// deadline; each operation reacts to events and its own wake-up time.
//
// It is also the server's watch on the display: connected from the start
// (and again every kReconnectMs while the display is down), it notices at
// once when the X server goes away, since its socket wakes its poll(), and
// it sees the root window resized (ConfigureNotify). It tells the loop both
// (screen_report), so coordinates from the old screen are void at once.
// Thread affinity: post(), cancel() and stop() on the loop thread;
// everything else on the desktop thread.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/completion_queue.h"
#include "core/job.h"
#include "x11/atoms.h"
#include "x11/connection.h"
#include "desktop/desktop_op.h"
#include "core/generation.h"
#include "desktop/clipboard.h"
#include "x11/app_identity.h"

namespace cu {

struct desktop_job : job_header {
  std::unique_ptr<desktop_op> op;
};

class desktop {
 public:
  desktop(std::string display, server_generation& generation, completion_queue& done);
  ~desktop();
  desktop(const desktop&) = delete;
  desktop& operator=(const desktop&) = delete;

  // Runs the job's operation; its completion carries the result.
  void post(desktop_job job);

  // Drops request seq's operation; its completion carries an empty line.
  void cancel(uint64_t seq);

  // Finishes the running operations (their deadlines bound it), then joins.
  void stop();

 private:
  struct running : desktop_job {
    bool started = false;
  };

  void thread_main();
  // Connects, interns atoms, makes our window and selects root events.
  bool ensure_connected(std::string* why);
  void drop_connection();
  void dispatch(const xcb_generic_event_t* ev);
  void finish(running& r, std::optional<desktop_result> result);
  void start_ready();
  void wake();
  void report(screen_report r);

  std::string display_;
  server_generation& generations_;
  completion_queue& done_;
  int wake_fd_ = -1;

  std::mutex mu_;  // Guards incoming_, cancels_ and stopping_.
  std::vector<running> incoming_;
  std::vector<uint64_t> cancels_;
  bool stopping_ = false;

  // Desktop thread only.
  xcb_ptr conn_;
  uint64_t conn_generation_ = 0;  // When conn_ was made.
  size2 root_size_;               // As last reported.
  desktop_clock::time_point next_connect_{};  // While disconnected.
  x11_atoms atoms_;
  xcb_window_t root_ = XCB_NONE;
  xcb_window_t window_ = XCB_NONE;
  clipboard_owner clipboard_;
  // Which application a window belongs to, for the grants; made with the
  // connection.
  std::optional<app_identifier> apps_;
  desktop_context ctx_;
  std::list<running> ops_;  // In arrival order; those not started wait for their key.
  std::thread thread_;
};

}  // namespace cu
