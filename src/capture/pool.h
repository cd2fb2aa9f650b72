// Owns: the capture worker pool. Each worker thread owns a grabber (its own
// X connection and SHM segment); all share the record of screen changes and
// the cache of what the last captures left; jobs are taken from one shared queue, and
// each job ends in exactly one completion pushed to the loop. A worker may
// also lend a hand with another worker's job: run_all queues the parts of one
// encode, idle workers take them before new jobs, and the asking worker runs
// whatever nobody has taken, so it never waits on a busy pool.
// Thread affinity: post(), cancel() and stop() on the loop thread; jobs and run_all
// on workers.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "capture/cache.h"
#include "capture/damage.h"
#include "capture/task_runner.h"
#include "core/geometry.h"
#include "core/completion_queue.h"
#include "core/job.h"
#include "core/generation.h"
#include "core/grant_policy.h"
#include "util/config.h"
#include "vision/marks.h"

namespace cu {

// screenshot_find's request: the template and where and how to search.
struct find_request {
  std::vector<uint8_t> template_png;  // A PNG's bytes (from base64), or empty.
  std::string template_path;          // Or a PNG file to read, or empty.
  // Or a part of the session's image: [x0, y0, x1, y1].
  std::optional<std::array<int, 4>> template_region;
  std::optional<std::array<int, 4>> region;  // Where to search (image pixels); none: all.
  double threshold = 0.9;
  int max_results = 10;
};

// find_text's request: the phrase and where and how to look for it.
struct text_request {
  std::string text;                          // Not empty, at most 256 bytes.
  std::optional<std::array<int, 4>> region;  // Where to look (image pixels); none: all.
  bool exact = false;
  int max_results = 10;
};

// What one look (a map) saw, as the capture side leaves it for the loop.
struct look_record {
  coord_session session;
  // Where the session's device pixel (0, 0) is on the root (a window's
  // session: the window's inside corner when grabbed; else 0, 0).
  point origin;
  // DAMAGE's mark of the moment before the grab: anything drawn after it
  // may be missing from the look. Nothing: changes were not recorded.
  std::optional<uint64_t> damage_mark;
  std::vector<mark> marks;  // Boxes in the session's image pixels.
  // A map (screenshot_marks), not a screenshot: marks refer to the latest.
  bool is_map = false;
  // The image the look showed, as RGB (session.image.w * 3 bytes a row),
  // scaled from the grab and without marks drawn: what `since` compares the
  // new pixels with. Null for a window's look, and once the look is no
  // longer among the newest toolsets/marks/looks.h keeps pixels for.
  std::shared_ptr<const std::vector<uint8_t>> pixels;
  // The grants' epoch the look's grab hid by (capture_env::view_epoch): a
  // since across another is answered whole. And what was hidden
  // (capture_env::hidden_print, hidden): a since across another print also
  // crops what either hid.
  uint64_t view_epoch = 0;
  uint64_t hidden_print = 0;
  std::shared_ptr<const std::vector<rect>> hidden;
};

// A look's `since`: the look it names, and what that look saw.
struct since_look {
  uint64_t id = 0;
  std::shared_ptr<const look_record> seen;
};

// screenshot_marks' request: what the sources found before the capture
// (accessibility elements, title bars: boxes in root pixels), and what to
// read and keep.
struct marks_request {
  std::vector<mark_candidate> on_root;
  bool ocr = false;
  std::optional<std::array<int, 4>> region;  // Image pixels; none: all.
  size_t max_marks = 150;
  // Sources asked for that gave nothing, and why ("a11y: no bus").
  std::vector<std::string> unavailable;
  // The map's look id (toolsets/marks/looks.h), named in its answer.
  uint64_t look_id = 0;
  // Filled on the capture side before the completion is posted: what the
  // map saw, for acting by mark and `since`.
  std::shared_ptr<look_record> record;
  // With `since`: the look to answer only the changes from.
  std::optional<since_look> since;
};

class text_recognizer;

struct capture_job : job_header {
  enum class kind { screenshot, zoom, find, find_text, marks };
  kind what = kind::screenshot;
  // The device area a screenshot shows; none means the whole root window.
  std::optional<rect> area;
  // Zoom maps its region through this session; none means establish one
  // from the current screen first, as a screenshot would.
  std::optional<coord_session> session;
  std::array<int, 4> region{};
  bool save_to_disk = false;
  // Nonzero: the screenshot or zoom is of this window alone (area is then
  // unused). A zoom whose session is of another window, or of the screen,
  // establishes this window's session first.
  uint32_t window = 0;
  // kind::find: what to find (shared: a template can be large, and jobs
  // are moved through queues).
  std::shared_ptr<const find_request> find;
  // kind::find_text: what to read for.
  std::shared_ptr<const text_request> text;
  // kind::marks: the map's sources and bounds.
  std::shared_ptr<const marks_request> marks;
  // kind::screenshot with the marks toolset on: the look it is (its id,
  // and its record, filled before the completion is posted), and the look
  // `since` names. Zero: not a look.
  uint64_t look_id = 0;
  std::shared_ptr<look_record> record;
  std::optional<since_look> since;
};

struct capture_config {
  std::string display;
  std::string save_dir;
  int workers = 2;
  server_generation* generation = nullptr;  // Required.
  image_format format = image_format::automatic;
  size_t max_result_bytes = 1000000;
  // The windows toolset is on: keep every top-level window's pixels
  // (grabber::keep_window_pixels) for screenshots of one window.
  bool window_pixels = false;
  // What captures hide (docs/grants.md); null: nothing.
  const grant_policy* grants = nullptr;
};

class capture_pool final : public task_runner {
 public:
  capture_pool(capture_config config, completion_queue& done);
  ~capture_pool();
  capture_pool(const capture_pool&) = delete;
  capture_pool& operator=(const capture_pool&) = delete;

  void post(capture_job job);

  // Drops request seq's job if no worker has taken it yet (its completion
  // carries nothing); a capture under way finishes, and the loop drops it.
  // A find_text recognition queued ends at once; one under way stops early.
  void cancel(uint64_t seq);

  // Finishes the queued jobs, then joins every worker. Idempotent.
  void stop();

  int workers() const { return int(threads_.size()); }

  // The record of screen changes (the settle before a screenshot that
  // follows input asks it when the screen last changed).
  const damage_monitor& damage() const { return damage_; }
  damage_monitor& damage() { return damage_; }

  // task_runner: for the worker threads' own encodes.
  void run_all(std::span<const std::function<void()>> tasks) override;

 private:
  // One part of another worker's job.
  struct helper_task {
    const std::function<void()>* run;
    enum class state { queued, running, done } st = state::queued;
  };

  void worker_main(int index);
  // Takes t off the helper queue and runs it; lock is held on entry and exit.
  void run_helper(helper_task* t, std::unique_lock<std::mutex>& lock);

  capture_config config_;
  completion_queue& done_;
  damage_monitor damage_;
  capture_cache cache_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable helped_;  // A helper task finished.
  std::deque<capture_job> queue_;
  std::deque<helper_task*> helpers_;
  std::vector<uint8_t> idle_;  // Per worker: waiting for work.
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  // find_text's OCR, on a thread of its own (capture/find_text.h).
  std::unique_ptr<text_recognizer> recognizer_;
};

}  // namespace cu
