// Owns: the waits on the screen: wait_for_change, wait_until_stable, and
// the watch behind screenshot_find's `until`. Each watches an area of the
// root window (a region of the session's image, a window, or the screen)
// through the damage monitor's record of drawing: no capture is taken to
// find out whether something changed. A watch is armed from a mark the
// monitor takes on its own thread (one round trip there, none on the
// loop), hears of new drawing through the monitor's listener, and ends on
// a change, on quiet, or at its timeout.
// Thread affinity: the loop thread (the monitor's callbacks only queue and
// wake it).
#pragma once

#include <uv.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/damage.h"
#include "core/geometry.h"
#include "core/tool_result.h"
#include "core/watch_spec.h"

namespace cu {

class screen_watches {
 public:
  struct hooks {
    // Watching from now on: every drawing after this counts.
    std::function<void()> armed;
    // kind::touch: the area was drawn on (bounding box in root coordinates).
    std::function<void(const rect&)> touched;
    // The end: the answer, or an error (the watch could not start, or the
    // X server went away).
    std::function<void(tool_result)> done;
    // kind::touch: the timeout came (done does not run then). Its owner
    // words it, knowing what it looked for; any other end is done's.
    std::function<void()> timed_out;
  };

  screen_watches(uv_loop_t* loop, damage_monitor& damage);
  ~screen_watches();
  screen_watches(const screen_watches&) = delete;
  screen_watches& operator=(const screen_watches&) = delete;

  // Starts watching for call seq (one watch per call).
  void start(uint64_t seq, watch_spec spec, hooks h);
  // Ends seq's watch, if any; none of its hooks runs afterwards.
  void stop(uint64_t seq);
  bool watching(uint64_t seq) const { return watches_.count(seq) != 0; }

  // Ends every watch (no hook runs) and closes the loop handle; the
  // monitor's later news is dropped. Before the loop stops.
  void close();

  // The area a watch of seq covers, in root coordinates, once armed.
  std::optional<rect> area(uint64_t seq) const;

 private:
  struct watch;
  struct inbox;
  using clock = std::chrono::steady_clock;

  void on_wake();
  void arm(uint64_t seq, damage_monitor::sync_answer a);
  void on_change(uint64_t seq, const rect& hit);
  void on_quiet(uint64_t seq);
  // Quiet held to its end: the wait's answer.
  void quiet_reached(uint64_t seq);
  // A filtering watch's drawing goes to the monitor to be judged (one
  // request at a time; more drawing waits for its answer), and judged
  // takes the answer: only what the view shows is a change.
  void judge(uint64_t seq, std::vector<rect> drawn);
  void judged(uint64_t seq, std::optional<std::vector<rect>> shown);
  void on_timeout(uint64_t seq);
  // Ends seq's watch with r (its done hook runs last, after it is gone).
  void finish(uint64_t seq, tool_result r);
  tool_result change_result(const watch& w, bool settled) const;
  // stable: quiet_ms of quiet came (false: the timeout came first, and
  // nothing was drawn).
  tool_result stable_result(const watch& w, bool stable) const;

  uv_loop_t* loop_;
  damage_monitor& damage_;
  std::shared_ptr<inbox> inbox_;
  std::unordered_map<uint64_t, std::unique_ptr<watch>> watches_;
};

}  // namespace cu
