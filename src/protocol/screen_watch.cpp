#include "protocol/screen_watch.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <utility>
#include <vector>

#include "core/json_writer.h"
#include "protocol/loop_timer.h"
#include "util/seconds_text.h"
#include "util/str_cat.h"
#include "x11/windows.h"

namespace cu {

// What the monitor's thread hands the loop: answers to the watches'
// requests for a mark, and news that something was drawn. Shared with the
// monitor's callbacks, which may outlive the watches.
struct screen_watches::inbox {
  std::mutex mu;
  uv_async_t* async = nullptr;  // Null once closed.
  bool drawn = false;
  std::vector<std::pair<uint64_t, damage_monitor::sync_answer>> answers;
  // Answers to request_shown: what of a filtering watch's drawing the
  // view shows.
  std::vector<std::pair<uint64_t, std::optional<std::vector<rect>>>> shown;

  // mu held.
  void wake() {
    if (async != nullptr) uv_async_send(async);
  }
};

struct screen_watches::watch {
  watch_spec spec;
  hooks h;
  clock::time_point started;
  bool armed = false;
  uint64_t mark = 0;
  rect area;            // Root coordinates.
  coord_session basis;  // The image space answers are in.
  point origin;         // Where basis device coordinates are on the root.
  std::optional<rect> changed;  // Everything drawn in area, root coordinates.
  uv_timer_t* timeout = nullptr;
  uv_timer_t* quiet = nullptr;
  // Filtering (spec.view): drawing not yet judged, whether the monitor is
  // judging some now, and whether quiet came while it was (the answer
  // decides: something shown restarts the quiet, nothing ends the wait).
  std::vector<rect> unjudged;
  bool judging = false;
  bool quiet_due = false;

  ~watch() {
    stop_loop_timer(timeout);
    stop_loop_timer(quiet);
  }
};

namespace {

// The most rectangles of drawing a filtering watch hands the monitor to
// judge at a time (closer ones are merged).
constexpr size_t kMostJudged = 32;

rect bounding(const rect& a, const rect& b) {
  const int x0 = std::min(a.x, b.x), y0 = std::min(a.y, b.y);
  const int x1 = std::max(a.x + a.w, b.x + b.w), y1 = std::max(a.y + a.h, b.y + b.h);
  return rect{x0, y0, x1 - x0, y1 - y0};
}

uint64_t millis(double ms) { return uint64_t(std::max(0.0, std::ceil(ms))); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  return std::round(s * 1000) / 1000;
}

}  // namespace

screen_watches::screen_watches(uv_loop_t* loop, damage_monitor& damage)
    : loop_(loop), damage_(damage), inbox_(std::make_shared<inbox>()) {
  auto* async = new uv_async_t;
  uv_async_init(loop_, async, [](uv_async_t* h) {
    static_cast<screen_watches*>(h->data)->on_wake();
  });
  async->data = this;
  inbox_->async = async;
  std::weak_ptr<inbox> box = inbox_;
  damage_.set_listener([box] {
    auto b = box.lock();
    if (!b) return;
    std::lock_guard<std::mutex> lock(b->mu);
    b->drawn = true;
    b->wake();
  });
}

screen_watches::~screen_watches() { close(); }

void screen_watches::close() {
  if (!inbox_) return;
  damage_.set_listener({});
  uv_async_t* async;
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    async = std::exchange(inbox_->async, nullptr);
  }
  watches_.clear();
  if (async != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(async),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
  }
  inbox_.reset();
}

void screen_watches::start(uint64_t seq, watch_spec spec, hooks h) {
  if (!inbox_) return h.done(tool_result::failure("the server is stopping"));
  auto w = std::make_unique<watch>();
  w->spec = std::move(spec);
  w->h = std::move(h);
  w->started = clock::now();
  const uint32_t window = w->spec.window;
  w->timeout = start_loop_timer(loop_, millis(w->spec.timeout_secs * 1000), 0,
                                [this, seq] { on_timeout(seq); });
  watches_[seq] = std::move(w);
  std::weak_ptr<inbox> box = inbox_;
  std::shared_ptr<const grant_view> view = watches_[seq]->spec.view;
  damage_.request_sync(
      window,
      [box, seq](damage_monitor::sync_answer a) {
        auto b = box.lock();
        if (!b) return;
        std::lock_guard<std::mutex> lock(b->mu);
        b->answers.emplace_back(seq, std::move(a));
        b->wake();
      },
      std::move(view));
}

void screen_watches::judge(uint64_t seq, std::vector<rect> drawn) {
  watch& w = *watches_.at(seq);
  for (rect& r : drawn) w.unjudged.push_back(r);
  if (w.judging || w.unjudged.empty()) return;
  w.judging = true;
  std::weak_ptr<inbox> box = inbox_;
  damage_.request_shown(w.spec.view, std::exchange(w.unjudged, {}),
                        [box, seq](std::optional<std::vector<rect>> shown) {
                          auto b = box.lock();
                          if (!b) return;
                          std::lock_guard<std::mutex> lock(b->mu);
                          b->shown.emplace_back(seq, std::move(shown));
                          b->wake();
                        });
}

void screen_watches::judged(uint64_t seq, std::optional<std::vector<rect>> shown) {
  auto it = watches_.find(seq);
  if (it == watches_.end()) return;
  watch& w = *it->second;
  w.judging = false;
  // Nothing when the windows could not be read: the connection is gone,
  // which the next wake reports; nothing hidden is told meanwhile.
  std::optional<rect> hit;
  if (shown) {
    for (const rect& r : *shown) hit = hit ? bounding(*hit, r) : r;
  }
  if (hit) {
    on_change(seq, *hit);
    if (watches_.find(seq) == watches_.end()) return;
  }
  if (!w.unjudged.empty()) return judge(seq, {});
  if (w.quiet_due) {
    w.quiet_due = false;
    quiet_reached(seq);
  }
}

void screen_watches::stop(uint64_t seq) { watches_.erase(seq); }

std::optional<rect> screen_watches::area(uint64_t seq) const {
  auto it = watches_.find(seq);
  if (it == watches_.end() || !it->second->armed) return std::nullopt;
  return it->second->area;
}

void screen_watches::on_wake() {
  if (!inbox_) return;
  std::vector<std::pair<uint64_t, damage_monitor::sync_answer>> answers;
  std::vector<std::pair<uint64_t, std::optional<std::vector<rect>>>> shown;
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    answers.swap(inbox_->answers);
    shown.swap(inbox_->shown);
    inbox_->drawn = false;
  }
  for (auto& [seq, a] : answers) arm(seq, std::move(a));
  for (auto& [seq, s] : shown) judged(seq, std::move(s));
  // Every armed watch reads what was drawn in its area since its mark.
  std::vector<uint64_t> seqs;
  for (const auto& [seq, w] : watches_) {
    if (w->armed) seqs.push_back(seq);
  }
  const bool watching = damage_.watching();
  for (uint64_t seq : seqs) {
    auto it = watches_.find(seq);
    // A hook ended it (and may have started the next one of a batch).
    if (it == watches_.end() || !it->second->armed) continue;
    watch& w = *it->second;
    if (!watching) {
      finish(seq, tool_result::failure(
                      "the X server stopped reporting changes (it went away) while waiting"));
      continue;
    }
    if (w.spec.view) {
      // What the view hides is no change: the monitor judges the drawing
      // against the windows shown now (unknown: all of the area).
      auto drawn = damage_.rects_since(w.mark, w.area, kMostJudged);
      if (!drawn) drawn = std::vector<rect>{w.area};
      if (!drawn->empty()) judge(seq, std::move(*drawn));
      continue;
    }
    // Unknown (more drawing than the record keeps, or a new connection):
    // the whole area may have changed.
    auto hit = damage_.changed_since(w.mark, w.area);
    if (!hit) hit = w.area;
    if (hit->w > 0 && hit->h > 0) on_change(seq, *hit);
  }
}

void screen_watches::arm(uint64_t seq, damage_monitor::sync_answer a) {
  auto it = watches_.find(seq);
  if (it == watches_.end()) return;
  watch& w = *it->second;
  if (!a.mark) return finish(seq, tool_result::failure(a.error));
  const rect root{0, 0, a.root.w, a.root.h};
  const watch_spec& s = w.spec;
  if (s.window != 0) {
    const rect inside = *a.window_rect;
    w.origin = point{inside.x, inside.y};
    if (s.session && s.session->window == s.window) {
      w.basis = *s.session;
    } else {
      w.basis = make_session(rect{0, 0, inside.w, inside.h});
      w.basis.window = s.window;
    }
  } else {
    w.origin = point{0, 0};
    if (s.session && s.session->window == 0) {
      w.basis = *s.session;
    } else {
      const rect shown = s.display_area ? intersect(*s.display_area, root) : root;
      if (shown.w == 0) {
        return finish(seq, tool_result::failure("the selected display area is not on screen"));
      }
      w.basis = make_session(shown);
    }
  }
  rect device = w.basis.device;
  if (s.region) {
    auto r = region_to_device(w.basis, *s.region);
    if (!r) return finish(seq, tool_result::failure(str_cat("Invalid argument \"region\": ",
                                                              r.err().message)));
    device = *r;
  }
  w.area = intersect(rect{device.x + w.origin.x, device.y + w.origin.y, device.w, device.h}, root);
  if (w.area.w == 0 || w.area.h == 0) {
    return finish(seq, tool_result::failure("the area to watch is not on screen"));
  }
  w.mark = *a.mark;
  w.armed = true;
  if (s.what == watch_spec::kind::stable) {
    w.quiet = start_loop_timer(loop_, millis(s.quiet_ms), 0, [this, seq] { on_quiet(seq); });
  }
  if (w.h.armed) w.h.armed();
}

void screen_watches::on_change(uint64_t seq, const rect& hit) {
  watch& w = *watches_.at(seq);
  w.changed = w.changed ? bounding(*w.changed, hit) : hit;
  w.quiet_due = false;
  switch (w.spec.what) {
    case watch_spec::kind::touch:
      if (w.h.touched) w.h.touched(hit);
      return;
    case watch_spec::kind::change:
      if (w.spec.quiet_ms <= 0) return finish(seq, change_result(w, true));
      [[fallthrough]];
    case watch_spec::kind::stable:
      // Quiet is counted from the last change.
      stop_loop_timer(w.quiet);
      w.quiet = start_loop_timer(loop_, millis(w.spec.quiet_ms), 0,
                                 [this, seq] { on_quiet(seq); });
      return;
  }
}

void screen_watches::on_quiet(uint64_t seq) {
  auto it = watches_.find(seq);
  if (it == watches_.end()) return;
  watch& w = *it->second;
  stop_loop_timer(w.quiet);
  // Drawing may have been read but not yet handed to the loop: look first.
  if (w.spec.view) {
    auto drawn = damage_.rects_since(w.mark, w.area, kMostJudged);
    if (!drawn) drawn = std::vector<rect>{w.area};
    if (!drawn->empty() || w.judging || !w.unjudged.empty()) {
      // The judgement decides.
      w.quiet_due = true;
      return judge(seq, std::move(*drawn));
    }
    return quiet_reached(seq);
  }
  if (auto hit = damage_.changed_since(w.mark, w.area); !hit || hit->w > 0) {
    return on_change(seq, hit ? *hit : w.area);
  }
  quiet_reached(seq);
}

void screen_watches::quiet_reached(uint64_t seq) {
  watch& w = *watches_.at(seq);
  finish(seq,
         w.spec.what == watch_spec::kind::stable ? stable_result(w, true) : change_result(w, true));
}

void screen_watches::on_timeout(uint64_t seq) {
  auto it = watches_.find(seq);
  if (it == watches_.end()) return;
  watch& w = *it->second;
  stop_loop_timer(w.timeout);
  const std::string waited = seconds_text(std::chrono::duration<double>(w.spec.timeout_secs));
  switch (w.spec.what) {
    case watch_spec::kind::change:
      // A change came but the area did not go quiet: it still changed.
      if (w.changed) return finish(seq, change_result(w, false));
      return finish(seq, tool_result::failure(
                             str_cat("no change within ", waited, "s (timeout)")));
    case watch_spec::kind::stable: {
      if (!w.changed) {
        // Nothing was drawn: the quiet asked is longer than the wait could
        // last (quiet_ms is counted from the mark, after the timeout's
        // start). Not "still changing": say what happened, and answer the
        // fields of a stable answer, stable false, so a client reading
        // them sees no change either.
        std::string why =
            str_cat("not stable within ", waited, "s (timeout), though nothing was drawn: quiet for ",
                    elapsed_text(clock::now() - w.started), "s, less than the ",
                    seconds_text(std::chrono::duration<double>(w.spec.quiet_ms / 1000)),
                    "s asked (quiet_ms); the timeout ended first");
        // Before it was armed (a timeout of 0) there is no area to describe.
        if (!w.armed) return finish(seq, tool_result::failure(std::move(why)));
        tool_result r = stable_result(w, false);
        r.is_error = true;
        r.content.insert(r.content.begin(),
                         content_block{content_block::kind::text, std::move(why), nullptr});
        return finish(seq, std::move(r));
      }
      std::string why = str_cat("not stable within ", waited, "s (timeout): still changing");
      if (w.changed) {
        const rect img = device_rect_to_image(
            w.basis, rect{w.changed->x - w.origin.x, w.changed->y - w.origin.y, w.changed->w,
                          w.changed->h});
        why += str_cat(" at ", point_text({img.x, img.y}), " ", std::to_string(img.w), "x",
                       std::to_string(img.h), " (image pixels)");
      }
      return finish(seq, tool_result::failure(std::move(why)));
    }
    case watch_spec::kind::touch: {
      std::unique_ptr<watch> gone = std::move(it->second);
      watches_.erase(it);
      if (gone->h.timed_out) gone->h.timed_out();
      return;
    }
  }
}

void screen_watches::finish(uint64_t seq, tool_result r) {
  auto it = watches_.find(seq);
  if (it == watches_.end()) return;
  std::unique_ptr<watch> w = std::move(it->second);
  watches_.erase(it);
  if (w->h.done) w->h.done(std::move(r));
}

namespace {

// The part of the image a root rectangle covers, clamped to the image.
rect image_part(const coord_session& basis, point origin, const rect& root) {
  rect img = device_rect_to_image(basis, rect{root.x - origin.x, root.y - origin.y, root.w,
                                              root.h});
  return intersect(img, rect{0, 0, basis.image.w, basis.image.h});
}

void write_common(json_writer& j, const coord_session& basis, point origin, const rect& area) {
  j.key("watched");
  write_rect(j, image_part(basis, origin, area));
  j.key("image").begin_object().key("width").number(int64_t(basis.image.w));
  j.key("height").number(int64_t(basis.image.h)).end_object();
  if (basis.window != 0) j.key("window").string(window_id_text(basis.window));
}

}  // namespace

tool_result screen_watches::change_result(const watch& w, bool settled) const {
  std::string out;
  json_writer j(out);
  j.begin_object().key("changed").boolean(true).key("rect");
  write_rect(j, image_part(w.basis, w.origin, *w.changed));
  j.key("device");
  write_rect(j, *w.changed);
  j.key("after").number(seconds_since(w.started));
  if (w.spec.quiet_ms > 0) j.key("settled").boolean(settled);
  write_common(j, w.basis, w.origin, w.area);
  j.end_object();
  return tool_result::json(std::move(out));
}

tool_result screen_watches::stable_result(const watch& w, bool stable) const {
  std::string out;
  json_writer j(out);
  j.begin_object().key("stable").boolean(stable).key("after").number(seconds_since(w.started));
  j.key("quiet_ms").number(w.spec.quiet_ms).key("changed").boolean(w.changed.has_value());
  j.key("rect");
  if (w.changed) {
    write_rect(j, image_part(w.basis, w.origin, *w.changed));
  } else {
    j.null();
  }
  write_common(j, w.basis, w.origin, w.area);
  j.end_object();
  return tool_result::json(std::move(out));
}

}  // namespace cu
