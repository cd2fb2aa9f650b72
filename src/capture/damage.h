// Owns: the record of what changed on screen, from the X DAMAGE extension: a
// connection of its own with a damage object on the root window, which
// reports every rectangle any client draws. A thread of its own reads the
// reports as they come, so the loop can ask when the screen last changed
// (the settle before a screenshot that follows input), and capture workers
// can ask whether an area was drawn on since a mark (an unchanged screen is
// answered from the bytes already encoded; an encode redoes only the strips
// that changed).
// Thread affinity: any thread; the reading thread is private.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/generation.h"
#include "core/geometry.h"
#include "x11/connection.h"

namespace cu {

class damage_monitor {
 public:
  using clock_type = std::chrono::steady_clock;

  // Starts the reading thread, which connects to display (again after the
  // X server restarts).
  damage_monitor(std::string display, server_generation& generation);
  ~damage_monitor();
  damage_monitor(const damage_monitor&) = delete;
  damage_monitor& operator=(const damage_monitor&) = delete;

  // Whether changes are being recorded now: connected, and the server has
  // DAMAGE. When not, nobody can know the screen is unchanged or quiet.
  bool watching() const { return watching_.load(std::memory_order_acquire); }

  // When the last change was read; nothing before the first.
  std::optional<clock_type::time_point> last_change() const;

  // Brings the record up to date with everything the X server has drawn
  // until now (one round trip on the monitor's connection) and returns a
  // mark of that point; nothing when not watching. Pixels grabbed after
  // this call show at least every change recorded before the mark. The
  // first call waits for the monitor's first attempt to connect, so the
  // captures right after start have a record too.
  std::optional<uint64_t> sync_mark();

  // The rows of area (in root coordinates) drawn on since mark, as
  // [first, last) ranges in area-relative rows, merged and sorted; nothing
  // when that is unknown (the record of changes since mark was dropped,
  // or mark is from before a reconnection): treat the whole area as changed.
  std::optional<std::vector<std::pair<int, int>>> rows_changed(uint64_t mark,
                                                                 const rect& area) const;

  // Whether anything inside area was drawn on since mark (true when that
  // is unknown).
  bool touched(uint64_t mark, const rect& area) const;

 private:
  void run();
  // Connects and creates the damage object; false (with the reason logged
  // once) when that is not possible now.
  bool connect();
  // Reads every event waiting; mu_ held.
  void drain(bool read_socket);
  void record(const rect& r);

  std::string display_;
  server_generation& generations_;
  std::atomic<bool> watching_{false};
  std::atomic<int64_t> last_change_ns_{-1};
  std::atomic<bool> stopping_{false};
  int wake_fd_ = -1;  // eventfd: stop.

  mutable std::mutex mu_;
  xcb_ptr conn_;
  uint64_t conn_generation_ = 0;
  uint8_t first_event_ = 0;
  // The last changes, a ring: change n is at ring_[n % size]. next_ is the
  // number of changes recorded so far, the mark of "now".
  std::vector<rect> ring_;
  uint64_t next_ = 0;
  // Marks below this came before the current connection.
  uint64_t epoch_ = 0;
  bool warned_ = false;
  bool first_attempt_done_ = false;  // Guarded by mu_.
  std::condition_variable first_attempt_;

  std::thread thread_;
};

}  // namespace cu
