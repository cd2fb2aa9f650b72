// Owns: the capture worker pool. Each worker thread owns a grabber (its own
// X connection and SHM segment); jobs are taken from one shared queue, and
// each job ends in exactly one completion pushed to the loop.
// Thread affinity: submit() and stop() on the loop thread; jobs run on workers.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "capture/geometry.h"
#include "protocol/completion_queue.h"

namespace cu {

struct capture_job {
  enum class kind { screenshot, zoom };
  uint64_t seq = 0;
  std::string id_json;
  kind what = kind::screenshot;
  // The device area a screenshot shows; none means the whole root window.
  std::optional<rect> area;
  // Zoom maps its region through this session; none means establish one
  // from the current screen first, as a screenshot would.
  std::optional<coord_session> session;
  std::array<int, 4> region{};
  bool save_to_disk = false;
};

struct capture_config {
  std::string display;
  std::string save_dir;
  int workers = 2;
};

class capture_pool {
 public:
  capture_pool(capture_config config, completion_queue& done);
  ~capture_pool();
  capture_pool(const capture_pool&) = delete;
  capture_pool& operator=(const capture_pool&) = delete;

  void submit(capture_job job);

  // Finishes the queued jobs, then joins every worker. Idempotent.
  void stop();

  int workers() const { return int(threads_.size()); }

 private:
  void worker_main(int index);

  capture_config config_;
  completion_queue& done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<capture_job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cu
