// Owns: the record of what changed on screen, from the X DAMAGE extension: a
// connection of its own with a damage object on the root window, which
// reports every rectangle any client draws. A thread of its own reads the
// reports as they come, so the loop can ask when the screen last changed
// (the settle before a screenshot that follows input), and capture workers
// can ask whether an area was drawn on since a mark (an unchanged screen is
// answered from the bytes already encoded; an encode redoes only the strips
// that changed).
// It also serves the waits (wait_for_change, wait_until_stable,
// screenshot_find's until): a listener hears of every batch of changes as
// it is read, and a watch asks for a mark of "now" taken on this thread, so
// the loop never waits on X.
// Thread affinity: any thread; the reading thread is private.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/generation.h"
#include "core/geometry.h"
#include "core/grant_policy.h"
#include "x11/app_identity.h"
#include "x11/atoms.h"
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

  // What was drawn inside area since mark: the bounding box of it (empty:
  // nothing), or nothing when that is unknown (as for rows_changed). The
  // mark moves on to now.
  std::optional<rect> changed_since(uint64_t& mark, const rect& area) const;

  // What was drawn inside area since mark, as at most most rectangles in
  // root coordinates (vision/look_diff.h's merge_rects: those a few pixels
  // apart are one, and the closest are merged past most); empty: nothing;
  // nothing when that is unknown (as for rows_changed). A look's `since`
  // answers these as crops.
  std::optional<std::vector<rect>> rects_changed(uint64_t mark, const rect& area,
                                                 size_t most) const;

  // Called on the reading thread after every batch of changes it read,
  // and when the connection is lost. Must not block, nor call back into
  // the monitor (it runs with the monitor's lock held): uv_async_send is
  // what it is for. Empty: nobody listens.
  void set_listener(std::function<void()> on_change);

  // What a watch starts from: a mark of everything the X server drew
  // until the request was served, the root window's size, and, for a
  // window, where its inside is on the root now.
  struct sync_answer {
    std::optional<uint64_t> mark;  // Nothing: not watching (error says why).
    size2 root;
    std::optional<rect> window_rect;  // Root coordinates of the window's inside.
    std::string error;
  };
  // Serves the request on the reading thread (one round trip there, none
  // here) and hands the answer to done, on that thread.
  // With a view that filters, a window it does not allow is refused
  // (grant_view::refusal's text).
  void request_sync(uint32_t window, std::function<void(sync_answer)> done,
                    std::shared_ptr<const grant_view> view = nullptr);

  // What was drawn inside area since mark, as at most most rectangles
  // (as rects_changed), and the mark moves on to now.
  std::optional<std::vector<rect>> rects_since(uint64_t& mark, const rect& area,
                                               size_t most) const;

  // The parts of rects (root coordinates) that view shows now: each less
  // what the windows view does not allow cover there, and the desktop's
  // parts when it keeps the desktop out, read with the X server grabbed
  // on the reading thread's connection. done gets them on that thread;
  // nothing when the windows could not be read (no connection).
  void request_shown(std::shared_ptr<const grant_view> view, std::vector<rect> rects,
                     std::function<void(std::optional<std::vector<rect>>)> done);

 private:
  void run();
  // Connects and creates the damage object; false (with the reason logged
  // once) when that is not possible now.
  bool connect();
  // Reads every event waiting; mu_ held.
  void drain(bool read_socket);
  void record(const rect& r);
  // The rectangles drawn inside area since mark, unmerged (nothing when
  // unknown), read under mu_; *now, when given, gets the mark of now from
  // the same moment.
  std::optional<std::vector<rect>> hits_since(uint64_t mark, const rect& area,
                                              uint64_t* now) const;
  // Serves the sync requests waiting (the shown requests first); mu_ not
  // held.
  void serve_syncs();
  void serve_shown();

  std::string display_;
  server_generation& generations_;
  std::atomic<bool> watching_{false};
  std::atomic<int64_t> last_change_ns_{-1};
  std::atomic<bool> stopping_{false};
  int wake_fd_ = -1;  // eventfd: stop, or sync requests wait.

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
  std::function<void()> listener_;  // Guarded by mu_.
  struct sync_request {
    uint32_t window;
    std::function<void(sync_answer)> done;
    std::shared_ptr<const grant_view> view;
  };
  std::vector<sync_request> syncs_;  // Guarded by mu_.
  struct shown_request {
    std::shared_ptr<const grant_view> view;
    std::vector<rect> rects;
    std::function<void(std::optional<std::vector<rect>>)> done;
  };
  std::vector<shown_request> shown_requests_;  // Guarded by mu_.
  // Which application each window is, on conn_ (made at the first
  // request_shown of a connection). Guarded by mu_.
  std::optional<app_identifier> ids_;
  xcb_window_t root_ = 0;            // Guarded by mu_.
  x11_atoms atoms_;                  // Guarded by mu_; tells applications' windows apart.

  std::thread thread_;
};

}  // namespace cu
