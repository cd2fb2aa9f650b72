#include "trace/recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xkbcommon/xkbcommon.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "build_config.h"
#include "capture/damage.h"
#include "capture/grabber.h"
#include "capture/png.h"
#include "capture/scale.h"
#include "core/json_writer.h"
#include "trace/records.h"
#include "util/log.h"
#include "util/str_cat.h"
#include "util/threads.h"
#include "vision/look_diff.h"

namespace cu {
namespace {

using clock_type = std::chrono::steady_clock;

// Past this many bytes of call records waiting for the writer, a record is
// dropped rather than queued (the disk is too slow for the calls).
constexpr size_t kMostQueuedBytes = size_t{32} << 20;
// Input events kept for calls not yet answered; past it they are dropped
// (a hold that types for hours).
constexpr size_t kMostInputEvents = 100000;
// A key frame at least this often, so the viewer can jump anywhere fast.
constexpr int kKeyEveryFrames = 50;
constexpr size_t kKeyEveryCropBytes = size_t{8} << 20;
// A frame whose changes cover more than this share of it is a key frame:
// its crops would cost about as much.
constexpr double kMostDeltaShare = 0.5;
constexpr size_t kMostCrops = 16;
// The longest input waits for the grab of a pending frame before it goes
// on (and the frame is marked late): a grab of the screen on the writer's
// connection takes a few milliseconds, and the agent loop's latency budget
// is 5% of a step.
constexpr auto kMostFrameWait = std::chrono::milliseconds(50);
// Frames whose grab times are kept to find a call's "before": a call's
// record is written soon after its answer, so its first input is recent.
constexpr size_t kFrameTimesKept = 64;
// Room kept in every part for its closing "end" record, so a part stays
// within CU_TRACE_MAX_BYTES with it.
constexpr size_t kEndRoom = 128;

std::string utc_text(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

const char* kind_name(input_event::kind k) {
  switch (k) {
    case input_event::kind::move: return "move";
    case input_event::kind::press: return "press";
    case input_event::kind::release: return "release";
    case input_event::kind::key: return "key";
  }
  return "move";
}

std::string keysym_text(uint32_t sym) {
  if (sym == 0) return "";
  char name[64];
  if (xkb_keysym_get_name(sym, name, sizeof name) <= 0) return "";
  return name;
}

}  // namespace

trace_config trace_config_of(const config& c) {
  trace_config t;
  t.dir = c.trace_dir;
  t.display = c.display;
  t.redact_text = c.trace_redact_text;
  t.max_bytes = c.trace_max_bytes;
  t.keep = c.trace_keep;
  t.settle_quiet_ms = c.settle_quiet_ms;
  t.settle_max_ms = c.screenshot_delay_secs * 1000;
  return t;
}

result<std::unique_ptr<recorder>> recorder::open(trace_config cfg, server_generation& generation) {
  if (mkdir(cfg.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return make_error(errc::io, str_cat("cannot make the trace directory ", cfg.dir, ": ",
                                        std::strerror(errno)));
  }
  // The directory is opened once, not followed if it is a link, and must be
  // this user's and writable by no one else: every part is then made in it
  // by name (openat), so nobody can plant a link or a file where a later
  // part goes.
  int dir_fd = ::open(cfg.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    return make_error(errc::io, str_cat("cannot open the trace directory ", cfg.dir, ": ",
                                        std::strerror(errno),
                                        errno == ELOOP ? " (it is a symbolic link)" : ""));
  }
  struct stat st;
  if (fstat(dir_fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    ::close(dir_fd);
    return make_error(errc::io, str_cat("refusing the trace directory ", cfg.dir,
                                        ": it must belong to this user and be writable by no "
                                        "one else (chmod go-w ", cfg.dir, "), or anyone could "
                                        "read or replace the trace; CU_TRACE_DIR names another"));
  }
  const std::time_t now = std::time(nullptr);
  std::string stem = str_cat(cfg.dir, cfg.dir.ends_with('/') ? "" : "/", "trace-",
                             utc_text(now, "%Y%m%d-%H%M%S"), "-", std::to_string(getpid()));
  std::string path = stem + ".html";
  int fd = ::openat(dir_fd, base_name(path).c_str(),
                    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_EXCL | O_NOFOLLOW, 0600);
  if (fd < 0) {
    const int e = errno;
    ::close(dir_fd);
    return make_error(errc::io, str_cat("cannot write a trace file in ", cfg.dir, " (", path,
                                        "): ", std::strerror(e)));
  }
  std::unique_ptr<recorder> r(new recorder(std::move(cfg), generation, fd, std::move(stem)));
  r->dir_fd_ = dir_fd;
  r->started_utc_ = utc_text(now, "%Y-%m-%dT%H:%M:%SZ");
  return r;
}

recorder::recorder(trace_config cfg, server_generation& generation, int fd, std::string stem)
    : cfg_(std::move(cfg)),
      generation_(generation),
      t_start_(clock_type::now()),
      stem_(std::move(stem)),
      fd_(fd) {}

recorder::~recorder() {
  stop("stopped");
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::string recorder::base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string recorder::part_path(size_t part) const {
  return part == 1 ? stem_ + ".html" : str_cat(stem_, ".", std::to_string(part), ".html");
}

std::string recorder::path() const { return part_path(part_); }

double recorder::ms_since_start(clock_type::time_point t) const {
  return std::round(std::chrono::duration<double, std::milli>(t - t_start_).count() * 10) / 10;
}

void recorder::start(damage_monitor& damage) {
  damage_ = &damage;
  thread_ = std::thread(&recorder::writer_main, this);
  name_thread(thread_, "cu-trace");
}

void recorder::input(const input_event& e) {
  if (e.seq == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (input_count_ >= kMostInputEvents) return;
  ++input_count_;
  input_[e.seq].push_back(e);
}

void recorder::before_input() {
  std::unique_lock<std::mutex> lock(mu_);
  // Asked already: that wait is over (served or given up), so the rest of
  // the input goes on without waiting again.
  if (stopping_ || now_asked_ || (!frame_wanted_ && !grab_pending_)) return;
  now_asked_ = true;
  const uint64_t grabs = grabs_;
  cv_.notify_one();
  if (!grabbed_cv_.wait_for(lock, kMostFrameWait, [&] { return grabs_ != grabs || stopping_; })) {
    now_late_ = true;
  }
}

void recorder::frame_grabbed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!grab_pending_) return;
    grab_pending_ = false;
    now_asked_ = false;
    taken_late_ = std::exchange(now_late_, false);
    ++grabs_;
  }
  grabbed_cv_.notify_all();
}

void recorder::call_started(uint64_t seq, std::string_view id_json, std::string_view tool,
                            const simdjson::dom::element* args) {
  if (stopped_) return;
  call_info c;
  c.id_json = std::string(id_json.substr(0, 256));
  c.tool = std::string(tool.substr(0, 64));
  if (args != nullptr) {
    json_writer w(c.args);
    write_args(w, c.tool, *args, cfg_.redact_text, c.secrets);
  }
  c.t0 = ms_since_start(clock_type::now());
  c.before = frame_n_.load(std::memory_order_relaxed);
  calls_[seq] = std::move(c);
}

void recorder::call_ended(uint64_t seq, const tool_result* r, bool cancelled, bool frame) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  pending_call p;
  p.seq = seq;
  p.info = std::move(it->second);
  calls_.erase(it);
  const clock_type::time_point now = clock_type::now();
  p.t1 = ms_since_start(now);
  p.cancelled = cancelled;
  if (r != nullptr) {
    p.answered = true;
    p.result.is_error = r->is_error;
    p.result.structured = r->structured;
    for (const content_block& b : r->content) {
      if (b.type == content_block::kind::text) {
        p.result.content.push_back(b);
      } else if (b.image) {
        p.images.emplace_back(b.image->mime_type, b.image->size);
      }
    }
  }
  p.frame = frame && !cancelled;
  p.bytes = p.info.args.size() + p.result.structured.size() + 256;
  for (const content_block& b : p.result.content) p.bytes += b.text.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto in = input_.find(seq); in != input_.end()) {
      input_count_ -= in->second.size();
      p.input = std::move(in->second);
      input_.erase(in);
    }
    if (p.frame) {
      frame_wanted_ = true;
      frame_since_ = now;
      frame_seqs_.push_back(seq);
    }
    if (queued_bytes_ + p.bytes > kMostQueuedBytes) {
      ++dropped_;
    } else {
      queued_bytes_ += p.bytes;
      queue_.push_back(std::move(p));
    }
    // A writer waiting for the screen to settle writes this record after
    // its frame anyway: waking it would only cost a loop of quick calls
    // a context switch each.
    if (settling_) return;
  }
  cv_.notify_one();
}

void recorder::stop(std::string_view why) {
  stopped_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    end_why_ = std::string(why);
  }
  cv_.notify_one();
  grabbed_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string recorder::start_line() const {
  std::string j;
  json_writer w(j);
  w.begin_object();
  w.key("kind").string("start");
  w.key("version").number(int64_t{1});
  w.key("part").number(int64_t(part_));
  w.key("server").string(str_cat("computer-use-mcp ", CU_VERSION));
  w.key("display").string(cfg_.display);
  w.key("screen").begin_array().number(int64_t(screen_w_)).number(int64_t(screen_h_)).end_array();
  w.key("scale").begin_array().number(int64_t(scale_w_)).number(int64_t(scale_h_)).end_array();
  w.key("started").string(started_utc_);
  w.key("redact_text").boolean(cfg_.redact_text);
  w.end_object();
  return script_line(j);
}

void recorder::append(std::string_view line) {
  if (fd_ < 0) return;
  // One write(2) per record on an O_APPEND file: a record is in the file
  // whole or, after a kill in the middle of the call, as the one partial
  // last line the viewer ignores.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      log(log_level::warn, "trace: writing %s failed (%s); recording stops", path().c_str(),
          std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
      return;
    }
    done += size_t(n);
  }
  file_bytes_ += line.size();
}

status recorder::open_part() {
  std::string p = part_path(part_);
  // A new file, never one that is there (a link planted at the name is
  // refused, not followed), only this user's to read.
  fd_ = ::openat(dir_fd_, base_name(p).c_str(),
                 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_EXCL | O_NOFOLLOW, 0600);
  if (fd_ < 0) return make_error(errc::io, str_cat("cannot open ", p, ": ", std::strerror(errno)));
  file_bytes_ = 0;
  file_has_key_ = false;
  // Only the newest parts are kept.
  if (part_ > cfg_.keep) ::unlinkat(dir_fd_, base_name(part_path(part_ - cfg_.keep)).c_str(), 0);
  return {};
}

void recorder::rotate() {
  std::string j;
  json_writer w(j);
  w.begin_object().key("kind").string("end");
  w.key("t").number(ms_since_start(clock_type::now()));
  w.key("why").string("rotated").end_object();
  append(script_line(j));
  if (fd_ >= 0) ::close(fd_);
  ++part_;
  if (auto s = open_part(); !s) {
    log(log_level::warn, "trace: %s; recording stops", s.err().message.c_str());
    return;
  }
  append(trace_viewer_html);
  append(start_line());
  take_frame(true);
}

void recorder::write_record(const std::string& line) {
  if (fd_ < 0) return;
  if (file_bytes_ + line.size() + kEndRoom > cfg_.max_bytes && file_has_key_) rotate();
  append(line);
}

std::string recorder::call_line(pending_call& c) {
  std::string j;
  json_writer w(j);
  w.begin_object();
  w.key("kind").string("call");
  w.key("seq").number(int64_t(c.seq));
  w.key("id").raw(c.info.id_json.empty() ? "null" : c.info.id_json);
  w.key("tool").string(c.info.tool);
  w.key("args").raw(c.info.args.empty() ? "{}" : c.info.args);
  w.key("t0").number(c.info.t0);
  w.key("t1").number(c.t1);
  w.key("ok").boolean(c.answered && !c.cancelled && !c.result.is_error);
  if (c.cancelled) w.key("cancelled").boolean(true);
  std::string text;
  for (const content_block& b : c.result.content) {
    if (b.type != content_block::kind::text) continue;
    if (!text.empty()) text += "\n";
    text += b.text;
  }
  // Text from the desktop (the clipboard's) is left out whole, and so is
  // an error of a call whose arguments carry text: an error echoes pieces
  // of it (an unknown key's name, a long text cut short, the keys of a
  // refused chord), which are not the whole text redact_secrets looks for.
  const bool hide_answer = cfg_.redact_text && (answers_text(c.info.tool) ||
                                                (c.result.is_error && carries_text(c.info.tool)));
  if (hide_answer) {
    w.key("text").string("[redacted " + std::to_string(char_count(text)) + " chars]");
    if (!c.result.structured.empty()) w.key("structured").string("[redacted]");
    c.result.structured.clear();
  } else {
    const bool redact = cfg_.redact_text && !c.info.secrets.empty();
    w.key("text").string(redact ? redact_secrets(std::move(text), c.info.secrets) : text);
  }
  const bool redact = cfg_.redact_text && !c.info.secrets.empty();
  if (!c.result.structured.empty()) {
    // The structured result is the server's own JSON; redacted, it is a
    // string (a secret's replacement may not leave valid JSON).
    if (redact) {
      std::string s = redact_secrets(c.result.structured, c.info.secrets);
      if (s == c.result.structured) {
        w.key("structured").raw(s);
      } else {
        w.key("structured").string(s);
      }
    } else {
      w.key("structured").raw(c.result.structured);
    }
  }
  w.key("images").begin_array();
  for (const auto& [mime, bytes] : c.images) {
    w.begin_object().key("mime").string(mime);
    w.key("bytes").number(int64_t(bytes)).end_object();
  }
  w.end_array();
  // A call that sent input: the screen just before its first input went
  // out, which may be a frame taken after the call began (the one of the
  // step before it, taken for this input).
  uint64_t before = c.info.before;
  if (!c.input.empty()) {
    for (const auto& [at, n] : grabbed_at_) {
      if (at < c.input.front().at) before = std::max(before, n);
    }
  }
  if (before != 0) {
    w.key("before").number(int64_t(before));
  } else {
    w.key("before").null();
  }
  const uint64_t now_frame = frame_n_.load();
  if (c.frame || now_frame == 0) {
    w.key("after").null();
  } else {
    w.key("after").number(int64_t(now_frame));
  }
  w.key("input").begin_array();
  const bool hide_keys = cfg_.redact_text && carries_text(c.info.tool);
  for (const input_event& e : c.input) {
    w.begin_object();
    w.key("t").number(ms_since_start(e.at));
    w.key("type").string(kind_name(e.type));
    switch (e.type) {
      case input_event::kind::move:
        w.key("x").number(int64_t(e.x)).key("y").number(int64_t(e.y));
        break;
      case input_event::kind::press:
      case input_event::kind::release:
        w.key("button").number(int64_t(e.button));
        break;
      case input_event::kind::key:
        w.key("keysym").string(hide_keys ? "[redacted]" : keysym_text(e.keysym));
        w.key("down").boolean(e.down);
        break;
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return script_line(j);
}

bool recorder::settle(clock_type::time_point since) {
  using ms = std::chrono::duration<double, std::milli>;
  const auto quiet = std::chrono::duration_cast<clock_type::duration>(ms(cfg_.settle_quiet_ms));
  const auto latest =
      since + std::chrono::duration_cast<clock_type::duration>(ms(cfg_.settle_max_ms));
  std::unique_lock<std::mutex> lock(mu_);
  settling_ = true;
  struct done_settling {
    bool& flag;
    ~done_settling() { flag = false; }
  } done{settling_};
  for (;;) {
    clock_type::time_point ready = since + quiet;
    if (damage_->watching()) {
      if (auto last = damage_->last_change(); last && *last > since) ready = *last + quiet;
    }
    ready = std::min(ready, latest);
    if (stopping_ || clock_type::now() >= ready) return true;
    if (now_asked_) return false;
    cv_.wait_until(lock, ready, [this] { return stopping_ || now_asked_; });
  }
}

void recorder::take_frame(bool key) {
  if (!grab_) grab_ = std::make_unique<grabber>(cfg_.display, generation_);
  auto screen = grab_->screen_rect();
  if (!screen) return;
  if (screen->w != screen_w_ || screen->h != screen_h_) {
    // A resized screen: every frame after is of the new size, from a key.
    screen_w_ = screen->w;
    screen_h_ = screen->h;
    size2 s = image_size_for(size2{screen->w, screen->h});
    scale_w_ = s.w;
    scale_h_ = s.h;
    key = true;
  }
  // The frame hides what captures hide, by the grants of now.
  std::shared_ptr<const grant_view> view;
  if (cfg_.grants != nullptr) view = cfg_.grants->view();
  const uint64_t view_epoch = view && view->filtering() ? view->epoch : 0;
  grab_->use_view(std::move(view));
  if (view_epoch != view_epoch_) key = true;
  const std::optional<uint64_t> mark = damage_->sync_mark();
  std::optional<std::vector<rect>> changed;
  if (!key && mark_ && mark) changed = damage_->rects_changed(*mark_, *screen, kMostCrops);
  if (changed && changed->empty()) {
    mark_ = mark;
    return;  // An unchanged screen costs nothing.
  }
  auto pixels = grab_->grab(*screen);
  const clock_type::time_point grabbed_at = clock_type::now();
  // The pixels are read: input waiting for them may go on while they are
  // scaled and encoded.
  frame_grabbed();
  if (!pixels) return;
  const size2 scale{scale_w_, scale_h_};
  coord_session session = make_session(*screen);
  std::vector<rect> crops;
  if (changed) {
    int64_t area = 0;
    for (const rect& r : *changed) {
      rect c = pad_within(device_rect_to_image(session, r), 2, scale);
      if (c.w > 0 && c.h > 0) crops.push_back(c);
    }
    crops = merge_rects(std::move(crops), 4, kMostCrops);
    for (const rect& c : crops) area += int64_t(c.w) * c.h;
    if (double(area) > kMostDeltaShare * double(scale.w) * scale.h) changed.reset();
  }
  // What the grants hide moved, or a window's identity changed, with no
  // drawing there: the damage cannot say where, so the frame is whole.
  if (grab_->last_print() != print_) changed.reset();
  if (!changed || frames_since_key_ >= kKeyEveryFrames ||
      crop_bytes_since_key_ >= kKeyEveryCropBytes) {
    key = true;
    crops = {rect{0, 0, scale.w, scale.h}};
  }
  // The frame's scaled rows, made once and cut into crops: only the rows a
  // crop covers are scaled, and the buffer is left uninitialized so the
  // rows never scaled are never made resident either.
  std::unique_ptr<uint8_t[]> rgb(new uint8_t[size_t(scale.w) * scale.h * 3]);
  std::vector<uint8_t> wanted(size_t(scale.h), 0);
  for (const rect& c : crops) std::fill_n(wanted.begin() + c.y, c.h, uint8_t{1});
  area_scaler scaler(pixels->area.w, pixels->area.h, scale.w, scale.h, pixels->layout);
  for (int y = 0; y < scale.h; ++y) {
    if (wanted[size_t(y)]) {
      scaler.row(pixels->data, pixels->stride, y, rgb.get() + size_t(y) * scale.w * 3);
    }
  }
  const uint64_t n = frame_n_.load() + 1;
  std::string j;
  json_writer w(j);
  w.begin_object().key("kind").string("frame");
  w.key("n").number(int64_t(n));
  // When the screen was read, not when its crops were encoded.
  w.key("t").number(ms_since_start(grabbed_at));
  w.key("key").boolean(key);
  w.key("crops").begin_array();
  size_t bytes = 0;
  for (const rect& c : crops) {
    auto png = encode_png_rgb(c.w, c.h, [&](int y, uint8_t* row) {
      std::memcpy(row, rgb.get() + (size_t(c.y + y) * scale.w + size_t(c.x)) * 3,
                  size_t(c.w) * 3);
    });
    if (!png) {
      log(log_level::warn, "trace: a frame's PNG failed: %s", png.err().message.c_str());
      return;
    }
    bytes += png->size;
    w.begin_object().key("box").begin_array();
    w.number(int64_t(c.x)).number(int64_t(c.y)).number(int64_t(c.w)).number(int64_t(c.h));
    w.end_array().key("png").base64(png->data.get(), png->size).end_object();
  }
  w.end_array().end_object();
  const std::string line = script_line(j);
  if (file_bytes_ + line.size() + kEndRoom > cfg_.max_bytes && file_has_key_) {
    // This part is full: the next one opens with a key frame of its own,
    // taken now, which shows this screen too and takes this number.
    rotate();
    return;
  }
  mark_ = mark;
  view_epoch_ = view_epoch;
  print_ = grab_->last_print();
  if (key) {
    frames_since_key_ = 0;
    crop_bytes_since_key_ = 0;
    file_has_key_ = true;
  } else {
    ++frames_since_key_;
    crop_bytes_since_key_ += bytes;
  }
  frame_n_.store(n);
  grabbed_at_.emplace_back(grabbed_at, n);
  if (grabbed_at_.size() > kFrameTimesKept) grabbed_at_.pop_front();
  append(line);
}

void recorder::writer_main() {
  append(trace_viewer_html);
  grab_ = std::make_unique<grabber>(cfg_.display, generation_);
  if (auto s = grab_->screen_rect()) {
    screen_w_ = s->w;
    screen_h_ = s->h;
    size2 sc = image_size_for(size2{s->w, s->h});
    scale_w_ = sc.w;
    scale_h_ = sc.h;
  }
  append(start_line());
  take_frame(true);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || frame_wanted_; });
    while (!queue_.empty()) {
      pending_call c = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= c.bytes;
      const uint64_t dropped = std::exchange(dropped_, 0);
      lock.unlock();
      if (dropped != 0) {
        std::string j;
        json_writer w(j);
        w.begin_object().key("kind").string("dropped");
        w.key("t").number(ms_since_start(clock_type::now()));
        w.key("records").number(int64_t(dropped)).end_object();
        write_record(script_line(j));
      }
      write_record(call_line(c));
      lock.lock();
    }
    if (frame_wanted_) {
      const clock_type::time_point since = frame_since_;
      lock.unlock();
      const bool settled = settle(since);
      lock.lock();
      // Calls that ended while it settled share its frame: waiting again
      // for each would starve the frames of a loop of quick screenshots.
      std::vector<uint64_t> seqs = std::move(frame_seqs_);
      frame_seqs_.clear();
      frame_wanted_ = false;
      grab_pending_ = true;
      // Their call records go first: a settled record follows its call's.
      while (!queue_.empty()) {
        pending_call c = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= c.bytes;
        lock.unlock();
        write_record(call_line(c));
        lock.lock();
      }
      lock.unlock();
      take_frame(false);
      // Also when take_frame grabbed nothing (an unchanged screen, or none).
      frame_grabbed();
      const uint64_t n = frame_n_.load();
      if (n != 0) {
        for (uint64_t seq : seqs) {
          std::string j;
          json_writer w(j);
          w.begin_object().key("kind").string("settled");
          w.key("seq").number(int64_t(seq)).key("frame").number(int64_t(n));
          // Taken for the next input before the screen went quiet: the
          // screen the agent acted on next, not a settled one.
          if (!settled) w.key("settled").boolean(false);
          // Taken only after the next input had gone out, so it may show
          // what that input did.
          if (taken_late_) w.key("late").boolean(true);
          w.end_object();
          write_record(script_line(j));
        }
      }
      lock.lock();
    }
    if (stopping_ && queue_.empty()) break;
  }
  lock.unlock();
  std::string j;
  json_writer w(j);
  w.begin_object().key("kind").string("end");
  w.key("t").number(ms_since_start(clock_type::now()));
  w.key("why").string(end_why_).end_object();
  append(script_line(j));
  grab_.reset();
}

}  // namespace cu
