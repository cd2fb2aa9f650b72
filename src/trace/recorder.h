// Owns: the flight recorder (docs/trace.md). Every tool call's record (its
// arguments, answer, timings, request id and the input it sent) and frames
// of the screen after each settled action and each capture, written to
// self-contained HTML trace files in CU_TRACE_DIR: one record per write(2)
// on an O_APPEND file, so a killed server leaves whole records; files
// rotate past CU_TRACE_MAX_BYTES and only CU_TRACE_KEEP are kept.
//
// A writer thread of its own does all the work that costs: formatting
// records, waiting for the screen to settle, grabbing it on its own X
// connection (so a frame never takes a capture worker the next screenshot
// needs), scaling, encoding only what X DAMAGE says changed, and writing.
// The loop only moves values into a bounded queue: past its bound a record
// is dropped (and a "dropped" record says how many), and frames asked for
// while one is pending are one frame, so a slow disk never slows a call.
// A pending frame does not wait for the settle past the next input: the
// actor asks for it before that input goes out (before_input) and waits,
// briefly, for its grab, so each step's frame shows what that step did and
// not what the steps sent right after its answer did.
// Thread affinity: call_started, call_ended and stop on the loop thread;
// input and before_input on the input actor's; the writer thread is private.
#pragma once

#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/generation.h"
#include "core/grant_policy.h"
#include "core/input_event.h"
#include "core/tool_result.h"
#include "util/config.h"
#include "util/result.h"

namespace cu {

class damage_monitor;
class grabber;

struct trace_config {
  std::string dir;
  std::string display;
  bool redact_text = false;
  size_t max_bytes = size_t{64} << 20;  // Per file.
  size_t keep = 8;                      // Files per trace.
  // The settle before a frame, as before a screenshot that follows input.
  double settle_quiet_ms = 100;
  double settle_max_ms = 2000;
  // Frames hide what captures hide (docs/grants.md); null: nothing.
  const grant_policy* grants = nullptr;
};

// The trace_config of a server's configuration.
trace_config trace_config_of(const config& c);

class recorder {
 public:
  // Opens the trace's first file in cfg.dir (made when missing); an error
  // says why when it cannot be written. Nothing is recorded before start().
  static result<std::unique_ptr<recorder>> open(trace_config cfg, server_generation& generation);
  ~recorder();
  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  // Starts the writer thread, which writes the start record and a key
  // frame; damage is the record of screen changes frames are cut from.
  void start(damage_monitor& damage);

  // Input actor: a piece of input went out (input_context::on_event).
  void input(const input_event& e);

  // Input actor: a piece of input is about to go out
  // (input_context::before_event). When a frame is pending (a call was
  // answered and the screen after it is not taken yet), the writer takes it
  // now, unsettled, and this waits until its grab is done, at most
  // kMostFrameWait; past that the input goes on and the frame, taken after
  // it, is marked late. With nothing pending it returns at once.
  void before_input();

  // A tools/call was accepted as seq (args: its arguments; null: none).
  void call_started(uint64_t seq, std::string_view id_json, std::string_view tool,
                    const simdjson::dom::element* args);
  // Call seq was answered with r (null: nothing, it was cancelled or
  // unanswered); frame: it sent input or captured, so a frame of the
  // settled screen follows.
  void call_ended(uint64_t seq, const tool_result* r, bool cancelled, bool frame);

  // Writes what is queued and the end record saying why ("stdin closed",
  // "signal"), and joins the writer. Idempotent.
  void stop(std::string_view why);

  // The file being written now.
  std::string path() const;

 private:
  struct call_info {
    std::string id_json;
    std::string tool;
    std::string args;  // JSON, redacted as asked.
    std::vector<std::string> secrets;
    double t0 = 0;
    uint64_t before = 0;
  };
  // A call record waiting for the writer.
  struct pending_call {
    uint64_t seq = 0;
    call_info info;
    double t1 = 0;
    bool cancelled = false;
    bool answered = false;
    // The answer's text and structured result; its images only as their
    // type and size (a queued record never holds an image alive).
    tool_result result;
    std::vector<std::pair<std::string, size_t>> images;
    std::vector<input_event> input;
    bool frame = false;
    size_t bytes = 0;  // What it holds, for the queue's bound.
  };

  recorder(trace_config cfg, server_generation& generation, int fd, std::string stem);
  void writer_main();
  double ms_since_start(std::chrono::steady_clock::time_point t) const;
  // Writer thread: the record of a call, as its line.
  std::string call_line(pending_call& c);
  // Waits until the screen has settled after `since` (or the stop); false
  // when input asked for the frame first (before_input) and the screen had
  // not settled yet.
  bool settle(std::chrono::steady_clock::time_point since);
  // Writer thread: the pending frame's pixels are read (or the screen is
  // known unchanged), so input that waits for them may go on. Called as
  // soon as the grab returns and again after the frame, once acting.
  void frame_grabbed();
  // Takes a frame: a key frame when asked or when the record of changes
  // cannot say what changed; nothing when nothing did. Writes it.
  void take_frame(bool key);
  // Writes line as one record, rotating first when it would pass the
  // bound. (A frame checks the bound itself: past it, the new part's key
  // frame is that frame.)
  void write_record(const std::string& line);
  // One write(2) of line, whole.
  void append(std::string_view line);
  // Ends this file and starts the next part with a start record and a key frame.
  void rotate();
  status open_part();
  std::string part_path(size_t part) const;
  static std::string base_name(const std::string& path);
  std::string start_line() const;

  trace_config cfg_;
  server_generation& generation_;
  const std::chrono::steady_clock::time_point t_start_;
  std::string started_utc_;
  std::string stem_;  // dir/trace-YYYYMMDD-HHMMSS-PID
  damage_monitor* damage_ = nullptr;

  // Loop thread only.
  std::unordered_map<uint64_t, call_info> calls_;
  bool stopped_ = false;

  // Shared with the writer and the actor, under mu_.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<pending_call> queue_;
  size_t queued_bytes_ = 0;
  uint64_t dropped_ = 0;  // Records dropped since the last said so.
  std::unordered_map<uint64_t, std::vector<input_event>> input_;
  size_t input_count_ = 0;
  // A frame is wanted once the screen settles after frame_since_; these
  // calls then name it in settled records.
  bool frame_wanted_ = false;
  std::chrono::steady_clock::time_point frame_since_;
  std::vector<uint64_t> frame_seqs_;
  // The writer took the pending frame on (frame_wanted_ is clear again)
  // and has not grabbed it yet.
  bool grab_pending_ = false;
  // Input waits for the pending frame's grab (before_input); it gave up
  // waiting (late).
  bool now_asked_ = false;
  // The writer waits for the screen to settle (settle()): new call records
  // wait for its frame, so they do not wake it.
  bool settling_ = false;
  bool now_late_ = false;
  uint64_t grabs_ = 0;  // Pending frames grabbed; before_input waits for it to move.
  std::condition_variable grabbed_cv_;
  bool stopping_ = false;
  std::string end_why_;
  // The latest frame's number (0: none yet); read by the loop for "before".
  std::atomic<uint64_t> frame_n_{0};

  // Writer thread only.
  std::thread thread_;
  int fd_ = -1;
  int dir_fd_ = -1;  // The trace directory, opened once (open()).
  size_t part_ = 1;
  size_t file_bytes_ = 0;
  bool file_has_key_ = false;  // This part has its key frame.
  std::unique_ptr<grabber> grab_;
  std::optional<uint64_t> mark_;  // The DAMAGE mark of the latest frame.
  // The grants' epoch the latest frame hid by (0: nothing hidden): a frame
  // under another is a key frame, since a change of grants draws nothing.
  uint64_t view_epoch_ = 0;
  uint64_t print_ = 0;  // grabber::last_print of the last frame written.

  int screen_w_ = 0, screen_h_ = 0, scale_w_ = 0, scale_h_ = 0;
  int frames_since_key_ = 0;
  size_t crop_bytes_since_key_ = 0;
  // What frame_grabbed found of the latest pending frame: input had given
  // up waiting for it.
  bool taken_late_ = false;
  // The latest frames, each with the time its grab returned: a call's
  // "before" is the latest grabbed before its first input went out.
  std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> grabbed_at_;
};

}  // namespace cu
