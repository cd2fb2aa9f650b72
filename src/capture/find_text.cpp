#include "capture/find_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "capture/find.h"
#include "core/json_writer.h"
#include "util/log.h"
#include "util/str_cat.h"
#include "util/threads.h"
#include "vision/ocr.h"
#include "vision/phrase.h"
#include "x11/windows.h"

namespace cu {
namespace {

// How the screen is read: enlarged twice (xterm's 6x13 font reads right
// only enlarged), dark backgrounds made light, sparse text (a screen is
// scattered words, not a page). docs/vision.md has the measurements.
ocr_options screen_ocr_options() {
  ocr_options o;
  o.scale = 2;
  o.fix_polarity = true;
  o.page_seg_mode = 11;
  return o;
}

// How many of the words read nearest to a phrase not found the answer
// lists: enough to see a misreading, few enough to cost little context.
constexpr size_t kNearestWords = 10;

}  // namespace

std::optional<tool_result> run_find_text(grabber& g, const capture_job& job,
                                         text_recognizer& recognizer, coord_session stamp) {
  const text_request& req = *job.text;
  auto grabbed = grab_session_pixels(g, job, stamp);
  if (!grabbed) return tool_result::failure(grabbed.err());
  const frame& f = grabbed->pixels;
  const point origin = grabbed->origin;
  const coord_session& s = grabbed->session;
  rect searched{0, 0, s.image.w, s.image.h};
  rect part{0, 0, f.area.w, f.area.h};  // In the grabbed frame.
  if (req.region) {
    auto device = region_to_device(s, *req.region);
    if (!device) return tool_result::failure("Invalid argument \"region\": " + device.err().message);
    const auto& r = *req.region;
    searched = rect{r[0], r[1], r[2] - r[0], r[3] - r[1]};
    part = intersect(rect{device->x - s.device.x, device->y - s.device.y, device->w, device->h},
                     part);
  }
  text_job t;
  t.seq = job.seq;
  t.reply = job.reply;
  t.request = job.text;
  // Grey now, on the worker: the frame is this worker's SHM segment, which
  // its next grab overwrites.
  t.pixels = to_gray(f.data + size_t(part.y) * f.stride + size_t(part.x) * 4, part.w, part.h,
                     f.stride, color_layout{4, f.layout.r, f.layout.g, f.layout.b});
  t.session = s;
  t.searched = searched;
  t.part = point{part.x, part.y};
  t.origin = origin;
  t.window = job.window;
  if (grabbed->established) t.established = s;
  recognizer.post(std::move(t));
  return std::nullopt;
}

text_recognizer::~text_recognizer() { stop(); }

void text_recognizer::post(text_job job) {
  // The loop hears first that the worker is done with the job, so that a
  // screenshot waiting for a place in the pool takes it now, not after the
  // recognition; the completion that ends the call is pushed after this
  // one, so it cannot overtake it.
  completion handed = job_done(job.seq, job.reply, std::nullopt);
  handed.was_capture = true;
  handed.handed_on = true;
  done_.push(std::move(handed));
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    if (!thread_.joinable()) {
      thread_ = std::thread(&text_recognizer::main, this);
      name_thread(thread_, "cu-ocr");
    }
  }
  cv_.notify_all();
}

void text_recognizer::cancel(uint64_t seq) {
  std::optional<text_job> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ == seq && seq != 0) stop_running_ = true;
    auto it = std::find_if(queue_.begin(), queue_.end(),
                           [&](const text_job& j) { return j.seq == seq; });
    if (it != queue_.end()) {
      dropped = std::move(*it);
      queue_.erase(it);
    }
  }
  if (dropped) {
    // Not was_capture: the worker's slot was freed when it handed the job on.
    done_.push(job_done(dropped->seq, dropped->reply, std::nullopt));
  }
}

void text_recognizer::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void text_recognizer::main() {
  for (;;) {
    text_job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = job.seq;
      stop_running_ = false;
    }
    tool_result r = run(job);
    bool cancelled = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = 0;
      cancelled = stop_running_;
    }
    completion c = job_done(job.seq, job.reply,
                            cancelled ? std::nullopt : std::optional<tool_result>(std::move(r)));
    if (!cancelled) c.session = job.established;
    done_.push(std::move(c));
  }
}

tool_result text_recognizer::run(const text_job& job) {
  if (!engine_ && !engine_error_) {
    // CU_TESSERACT_LIBRARY: another library to load (a test points it at
    // nothing to see the message a machine without Tesseract gives).
    const char* library = getenv("CU_TESSERACT_LIBRARY");
    auto opened = ocr_engine::open(library != nullptr ? library : "", "");
    if (opened) {
      engine_ = std::move(*opened);
      log(log_level::info, "find_text: Tesseract %s loaded", engine_->version().c_str());
    } else {
      // Remembered: until the server restarts, find_text says what to
      // install instead of trying again on every call. (An install while
      // it runs is picked up by a new server.)
      engine_error_ = opened.take_error();
    }
  }
  if (!engine_ && job.with_words) {
    // The map is drawn without the words, and says why.
    return job.with_words({}, engine_error_->message);
  }
  if (!engine_) return tool_result::failure(*engine_error_);
  auto words = engine_->recognize(job.pixels.view(), screen_ocr_options(), &stop_running_);
  if (!words) return tool_result::failure(words.err());
  if (job.with_words) return job.with_words(std::move(*words), {});
  const text_request& req = *job.request;
  // The words' boxes are in the part's device pixels: to the session's.
  for (ocr_word& w : *words) {
    w.box.x += job.part.x;
    w.box.y += job.part.y;
  }
  const std::vector<phrase_match> found =
      find_phrase(*words, req.text, req.exact, size_t(req.max_results));
  const coord_session& s = job.session;

  std::string out;
  json_writer j(out);
  std::vector<found_match> typed;
  typed.reserve(found.size());
  j.begin_object().key("matches").begin_array();
  for (const phrase_match& m : found) {
    const rect device{s.device.x + m.box.x, s.device.y + m.box.y, m.box.w, m.box.h};
    const rect image = device_rect_to_image(s, device);
    const point center =
        device_to_image(s, point{device.x + device.w / 2, device.y + device.h / 2});
    typed.push_back(found_match{image, center});
    j.begin_object().key("text").string(m.text);
    j.key("x").number(int64_t(image.x)).key("y").number(int64_t(image.y));
    j.key("width").number(int64_t(image.w)).key("height").number(int64_t(image.h));
    j.key("center").begin_array().number(int64_t(center.x)).number(int64_t(center.y)).end_array();
    j.key("confidence").number(m.confidence);
    j.key("device");
    write_rect(j, rect{job.origin.x + device.x, job.origin.y + device.y, device.w, device.h});
    j.end_object();
  }
  j.end_array().key("searched");
  write_rect(j, job.searched);
  j.key("backend").string("ocr");
  j.key("words_read").number(int64_t(words->size()));
  if (found.empty()) {
    // What the recognizer did read nearest to the phrase, so that the one
    // who asked sees why nothing matched (a misread letter, two words read
    // as one) and where.
    j.key("nearest").begin_array();
    for (const near_text& n : nearest_words(*words, req.text, kNearestWords)) {
      const rect device{s.device.x + n.box.x, s.device.y + n.box.y, n.box.w, n.box.h};
      const rect image = device_rect_to_image(s, device);
      j.begin_object().key("text").string(n.text);
      j.key("x").number(int64_t(image.x)).key("y").number(int64_t(image.y));
      j.key("width").number(int64_t(image.w)).key("height").number(int64_t(image.h));
      j.key("similarity").number(std::round(n.similarity * 100) / 100);
      j.end_object();
    }
    j.end_array();
  }
  if (job.window != 0) j.key("window").string(window_id_text(job.window));
  j.end_object();
  tool_result r = tool_result::json(std::move(out));
  r.matches = std::move(typed);
  return r;
}

}  // namespace cu
