// Owns: find_text off the loop. On a capture worker: the pixels read (the
// session's area of the screen, or one window, cut to the region asked),
// turned grey and handed on. On the recognizer thread: the OCR
// (vision/ocr.h, one Tesseract handle kept for the process), the phrase
// found among the words read (vision/phrase.h), and the answer in the
// session's image pixels.
// Thread affinity: run_find_text on a capture worker (it uses that worker's
// grabber); text_recognizer's post() from the workers, cancel() and stop()
// from the pool's owner (the loop thread), recognition on its own thread.
//
// Why a thread of its own: a recognition takes 0.3 to 0.9 s (docs/vision.md),
// and the pool has two workers; on a worker it would hold one of them, and
// two find_text calls both, while screenshots waited behind them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "capture/capture.h"
#include "core/completion_queue.h"
#include "vision/match.h"
#include "vision/ocr.h"

namespace cu {


// A find_text job whose pixels were grabbed: what the recognizer needs to
// finish it with exactly one completion.
struct text_job {
  uint64_t seq = 0;
  reply_to reply;
  std::shared_ptr<const text_request> request;
  gray_image pixels;     // The part of the session searched, in device pixels.
  coord_session session;  // The session the answer is in.
  rect searched;          // In image pixels.
  point part;             // Where pixels start in the session's device area.
  point origin;           // Where session device coordinates are on the root.
  uint32_t window = 0;
  // The session this job established (none before, or a window's), sent
  // back with the answer.
  std::optional<coord_session> established;
  // Set: the job wants the words themselves (screenshot_marks); the
  // recognizer gives them here, in pixels' own coordinates, and answers
  // with what it returns (no words and why, when Tesseract cannot be
  // loaded), instead of looking for request's phrase.
  std::function<tool_result(std::vector<ocr_word>, std::string)> with_words;
};

class text_recognizer {
 public:
  explicit text_recognizer(completion_queue& done) : done_(done) {}
  ~text_recognizer();
  text_recognizer(const text_recognizer&) = delete;
  text_recognizer& operator=(const text_recognizer&) = delete;

  // Queues job; its completion comes from the recognizer thread (started
  // by the first job). First it pushes a completion that only frees the
  // job's place among the captures the loop lets into the pool
  // (completion::handed_on): a recognition holds neither a worker nor one
  // of the places screenshots and zooms wait for, and its own completion
  // does not count as the pool's.
  void post(text_job job);

  // Request seq's recognition: a queued one ends now with an empty
  // completion, a running one stops at Tesseract's next check (its answer
  // is dropped by the loop). Nothing for a seq it does not hold.
  void cancel(uint64_t seq);

  // Finishes the queued jobs, then joins the thread. Idempotent.
  void stop();

 private:
  void main();
  tool_result run(const text_job& job);

  completion_queue& done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<text_job> queue_;
  uint64_t running_ = 0;  // The seq under way, 0 for none.
  std::atomic<bool> stop_running_{false};
  bool stopping_ = false;
  std::thread thread_;
  // The recognizer's own: made by its first job, kept while the process
  // runs (Tesseract's start-up costs about 100 ms), touched by no other
  // thread.
  std::unique_ptr<ocr_engine> engine_;
  std::optional<error> engine_error_;
};

// Runs a kind::find_text job's part on a capture worker: grabs and checks
// as run_find does (stamp: as there), then posts the rest to recognizer,
// with the session the job establishes (none yet, or a window's): the
// recognizer's completion carries it. Nothing when it posted (the
// recognizer completes the job), or the failure to answer now.
std::optional<tool_result> run_find_text(grabber& g, const capture_job& job,
                                         text_recognizer& recognizer, coord_session stamp);

}  // namespace cu
