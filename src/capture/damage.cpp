#include "capture/damage.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <xcb/damage.h>

#include <algorithm>

#include "util/log.h"
#include "util/str_cat.h"
#include "util/threads.h"
#include "vision/look_diff.h"
#include "x11/request.h"
#include "x11/windows.h"

namespace cu {
namespace {

// Changes kept for the questions workers ask: enough for the drawing
// between two screenshots of a busy screen (a terminal's redraw is about a
// rectangle per text line). When more came, the answer is "unknown", which
// costs only a full encode.
constexpr size_t kRingSize = 4096;

// Rectangles this close are one crop: a line of text drawn glyph by glyph,
// or a border beside its inside, reads better whole than in slivers.
constexpr int kMergeGap = 4;

// How often a monitor without a connection tries to connect again.
constexpr int kRetryMs = 500;

// The longest a capture waits for the monitor's first attempt to connect
// (a display that accepts connections but never answers).
constexpr auto kFirstAttemptWait = std::chrono::seconds(2);

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             damage_monitor::clock_type::now().time_since_epoch())
      .count();
}

}  // namespace

damage_monitor::damage_monitor(std::string display, server_generation& generation)
    : display_(std::move(display)), generations_(generation), ring_(kRingSize) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread(&damage_monitor::run, this);
  name_thread(thread_, "cu-damage");
}

damage_monitor::~damage_monitor() {
  stopping_.store(true);
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

std::optional<damage_monitor::clock_type::time_point> damage_monitor::last_change() const {
  int64_t ns = last_change_ns_.load(std::memory_order_acquire);
  if (ns < 0) return std::nullopt;
  return clock_type::time_point(std::chrono::nanoseconds(ns));
}

bool damage_monitor::connect() {
  int screen_number = 0;
  auto c = x11_connect(display_, &screen_number);
  if (!c) return false;
  xcb_connection_t* conn = c->get();
  xcb_screen_t* screen = x11_screen(conn, screen_number);
  const xcb_query_extension_reply_t* ext = xcb_get_extension_data(conn, &xcb_damage_id);
  reply_ptr<xcb_damage_query_version_reply_t> v;
  if (screen != nullptr && ext != nullptr && ext->present) {
    v.reset(xcb_damage_query_version_reply(conn, xcb_damage_query_version(conn, 1, 1), nullptr));
  }
  if (!v) {
    if (!warned_) {
      log(log_level::warn,
          "X display \"%s\" has no DAMAGE extension: a screenshot after input waits the "
          "whole CU_SCREENSHOT_DELAY, and every capture is encoded anew",
          display_.c_str());
      warned_ = true;
    }
    return false;
  }
  // Every rectangle as it is drawn: no DamageSubtract round trips, and the
  // rectangles say which strips of an image to redo.
  xcb_damage_create(conn, xcb_generate_id(conn), screen->root,
                    XCB_DAMAGE_REPORT_LEVEL_RAW_RECTANGLES);
  // Checked by a round trip: from its reply on, every drawing is reported.
  if (!x11_sync(conn)) return false;
  auto atoms = intern_atoms(conn);
  if (!atoms) return false;
  std::lock_guard<std::mutex> lock(mu_);
  atoms_ = *atoms;
  conn_generation_ = generations_.current();
  first_event_ = ext->first_event;
  conn_ = std::move(*c);
  root_ = screen->root;
  ids_.reset();
  // Marks handed out before cannot say what happened while nobody watched.
  epoch_ = next_;
  // The screen may have changed while nobody watched.
  last_change_ns_.store(now_ns(), std::memory_order_release);
  watching_.store(true, std::memory_order_release);
  warned_ = false;
  return true;
}

void damage_monitor::record(const rect& r) {
  ring_[next_ % kRingSize] = r;
  ++next_;
}

void damage_monitor::drain(bool read_socket) {
  xcb_connection_t* c = conn_.get();
  bool changed = false;
  for (;;) {
    xcb_generic_event_t* ev = read_socket ? xcb_poll_for_event(c) : xcb_poll_for_queued_event(c);
    if (ev == nullptr) break;
    if ((ev->response_type & 0x7f) == first_event_ + XCB_DAMAGE_NOTIFY) {
      auto* n = reinterpret_cast<xcb_damage_notify_event_t*>(ev);
      record(rect{n->area.x, n->area.y, n->area.width, n->area.height});
      changed = true;
    }
    free(ev);
  }
  if (changed) last_change_ns_.store(now_ns(), std::memory_order_release);
  if (xcb_connection_has_error(c)) {
    if (x11_server_gone(c)) generations_.lost(conn_generation_);
    watching_.store(false, std::memory_order_release);
    ids_.reset();
    conn_.reset();
    changed = true;  // Watches hear of the loss.
  }
  if (changed && listener_) listener_();
}

void damage_monitor::set_listener(std::function<void()> on_change) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = std::move(on_change);
}

void damage_monitor::request_sync(uint32_t window, std::function<void(sync_answer)> done,
                                  std::shared_ptr<const grant_view> view) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    syncs_.push_back(sync_request{window, std::move(done), std::move(view)});
  }
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

void damage_monitor::request_shown(std::shared_ptr<const grant_view> view,
                                   std::vector<rect> rects,
                                   std::function<void(std::optional<std::vector<rect>>)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shown_requests_.push_back(shown_request{std::move(view), std::move(rects), std::move(done)});
  }
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

void damage_monitor::serve_shown() {
  std::vector<shown_request> requests;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests.swap(shown_requests_);
  }
  for (shown_request& req : requests) {
    std::optional<std::vector<rect>> out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (conn_ && req.view) {
        xcb_connection_t* c = conn_.get();
        if (!ids_) ids_.emplace(c, root_);
        // The windows as one moment: none moves between the reads.
        xcb_grab_server(c);
        auto shown = ids_->layout();
        xcb_ungrab_server(c);
        xcb_flush(c);
        if (shown) {
          out.emplace();
          for (const rect& r : req.rects) {
            for (const rect& part : shown_rects(*shown, *req.view, r)) out->push_back(part);
          }
        }
        drain(false);
      }
    }
    req.done(std::move(out));
  }
}

void damage_monitor::serve_syncs() {
  serve_shown();
  std::vector<sync_request> requests;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests.swap(syncs_);
  }
  for (sync_request& req : requests) {
    sync_answer a;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!conn_) {
        a.error = str_cat("the X display \"", display_,
                          "\" reports no changes (no DAMAGE extension, or no connection now)");
      } else {
        xcb_connection_t* c = conn_.get();
        // The replies come after every report of drawing the server did
        // before these requests: the mark covers all of it.
        auto root_geo = xcb_get_geometry(c, root_);
        xcb_get_geometry_cookie_t geo{};
        xcb_translate_coordinates_cookie_t where{};
        xcb_get_window_attributes_cookie_t attrs{};
        if (req.window != 0) {
          geo = xcb_get_geometry(c, req.window);
          where = xcb_translate_coordinates(c, req.window, root_, 0, 0);
          attrs = xcb_get_window_attributes(c, req.window);
        }
        reply_ptr<xcb_get_geometry_reply_t> rg(xcb_get_geometry_reply(c, root_geo, nullptr));
        if (req.window != 0) {
          reply_ptr<xcb_get_geometry_reply_t> g(xcb_get_geometry_reply(c, geo, nullptr));
          reply_ptr<xcb_translate_coordinates_reply_t> t(
              xcb_translate_coordinates_reply(c, where, nullptr));
          reply_ptr<xcb_get_window_attributes_reply_t> at(
              xcb_get_window_attributes_reply(c, attrs, nullptr));
          std::optional<std::string> refusal;
          if (g && t && at) refusal = client_window_refusal(c, atoms_, root_, req.window);
          if (!g || !t || !at) {
            a.error = str_cat("window ", window_id_text(req.window), " no longer exists");
          } else if (refusal) {
            a.error = std::move(*refusal);
          } else if (at->map_state != XCB_MAP_STATE_VIEWABLE) {
            a.error = str_cat("window ", window_id_text(req.window),
                              " is not shown (minimized or unmapped)");
          } else {
            a.window_rect = rect{t->dst_x, t->dst_y, g->width, g->height};
          }
          // A window the view does not allow is not watched: its size and
          // its drawing are what the view hides.
          if (a.window_rect && req.view && req.view->filtering()) {
            if (!ids_) ids_.emplace(c, root_);
            auto app = ids_->of_window(req.window);
            const std::string id = window_id_text(req.window);
            if (!app) {
              a.error = str_cat("window ", id, " could not be identified: ", app.err().message);
            } else if (const auto v = req.view->judge(*app); v != grant_view::verdict::allowed) {
              a.error = req.view->refusal(str_cat("a watch of window ", id),
                                          str_cat("window ", id, " is"), *app, v);
            }
            if (!a.error.empty()) a.window_rect.reset();
          }
        }
        drain(false);
        if (rg) a.root = size2{rg->width, rg->height};
        if (!conn_ || !rg) {
          a.error = "the X server went away";
          a.window_rect.reset();
        } else if (a.error.empty()) {
          a.mark = next_;
        }
      }
    }
    req.done(std::move(a));
  }
}

void damage_monitor::run() {
  while (!stopping_.load()) {
    bool connected;
    {
      std::lock_guard<std::mutex> lock(mu_);
      connected = conn_ != nullptr;
    }
    if (!connected) {
      const bool ok = connect();
      {
        std::lock_guard<std::mutex> lock(mu_);
        first_attempt_done_ = true;
      }
      first_attempt_.notify_all();
      if (ok) continue;
      pollfd wake{wake_fd_, POLLIN, 0};
      poll(&wake, 1, kRetryMs);
      if (wake.revents != 0) {
        uint64_t n;
        (void)!read(wake_fd_, &n, sizeof n);
      }
      // Nobody watches now: requests are answered so.
      serve_syncs();
      continue;
    }
    int fd;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!conn_) continue;
      fd = xcb_get_file_descriptor(conn_.get());
      // Events a sync_mark read along with its reply are handled first.
      drain(false);
      if (!conn_) continue;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) {
      if (stopping_.load()) break;
      uint64_t n;
      (void)!read(wake_fd_, &n, sizeof n);
      serve_syncs();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (conn_) drain(true);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    watching_.store(false);
    ids_.reset();
    conn_.reset();
    first_attempt_done_ = true;
  }
  first_attempt_.notify_all();
  serve_syncs();  // Answered: the monitor stops.
}

std::optional<uint64_t> damage_monitor::sync_mark() {
  std::unique_lock<std::mutex> lock(mu_);
  first_attempt_.wait_for(lock, kFirstAttemptWait, [this] { return first_attempt_done_; });
  if (!conn_) return std::nullopt;
  xcb_connection_t* c = conn_.get();
  // The reply comes after every report of drawing the server did before it.
  const bool answered = x11_sync(c);
  drain(false);
  if (!answered || !conn_) return std::nullopt;
  return next_;
}

std::optional<std::vector<std::pair<int, int>>> damage_monitor::rows_changed(
    uint64_t mark, const rect& area) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (mark < epoch_ || mark > next_ || next_ - mark > kRingSize) return std::nullopt;
  std::vector<std::pair<int, int>> rows;
  for (uint64_t i = mark; i < next_; ++i) {
    rect hit = intersect(ring_[i % kRingSize], area);
    if (hit.w > 0) rows.emplace_back(hit.y - area.y, hit.y + hit.h - area.y);
  }
  std::sort(rows.begin(), rows.end());
  std::vector<std::pair<int, int>> merged;
  for (const auto& r : rows) {
    if (!merged.empty() && r.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

std::optional<rect> damage_monitor::changed_since(uint64_t& mark, const rect& area) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t from = mark;
  mark = next_;
  if (from < epoch_ || from > next_ || next_ - from > kRingSize) return std::nullopt;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool any = false;
  for (uint64_t i = from; i < next_; ++i) {
    const rect hit = intersect(ring_[i % kRingSize], area);
    if (hit.w <= 0 || hit.h <= 0) continue;
    if (!any) {
      x0 = hit.x, y0 = hit.y, x1 = hit.x + hit.w, y1 = hit.y + hit.h;
      any = true;
    } else {
      x0 = std::min(x0, hit.x), y0 = std::min(y0, hit.y);
      x1 = std::max(x1, hit.x + hit.w), y1 = std::max(y1, hit.y + hit.h);
    }
  }
  return any ? rect{x0, y0, x1 - x0, y1 - y0} : rect{};
}

std::optional<std::vector<rect>> damage_monitor::hits_since(uint64_t mark, const rect& area,
                                                            uint64_t* now) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (now != nullptr) *now = next_;
  if (mark < epoch_ || mark > next_ || next_ - mark > kRingSize) return std::nullopt;
  std::vector<rect> hits;
  for (uint64_t i = mark; i < next_; ++i) {
    const rect hit = intersect(ring_[i % kRingSize], area);
    if (hit.w > 0 && hit.h > 0) hits.push_back(hit);
  }
  return hits;
}

std::optional<std::vector<rect>> damage_monitor::rects_changed(uint64_t mark, const rect& area,
                                                               size_t most) const {
  auto hits = hits_since(mark, area, nullptr);
  if (!hits) return std::nullopt;
  // Merged outside the lock: the reading thread records on.
  return merge_rects(std::move(*hits), kMergeGap, most);
}

std::optional<std::vector<rect>> damage_monitor::rects_since(uint64_t& mark, const rect& area,
                                                             size_t most) const {
  auto hits = hits_since(mark, area, &mark);
  if (!hits) return std::nullopt;
  return merge_rects(std::move(*hits), kMergeGap, most);
}

bool damage_monitor::touched(uint64_t mark, const rect& area) const {
  auto rows = rows_changed(mark, area);
  return !rows || !rows->empty();
}

}  // namespace cu
