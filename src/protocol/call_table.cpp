#include "protocol/call_table.h"

#include <algorithm>
#include <cmath>

#include "build_config.h"
#include "core/json_writer.h"
#if CU_HAVE_A11Y
#include "a11y/a11y.h"
#endif
#include "protocol/loop_timer.h"
#include "toolsets/known_args.h"
#include "toolsets/registry.h"
#include "toolsets/tool_call.h"
#include "util/log.h"
#include "util/seconds_text.h"
#include "util/str_cat.h"

namespace cu {

using simdjson::dom::element;
using simdjson::dom::object;

// A tools/call, or one step of a batch (in_batch: its result goes back to
// the batch instead of out as an answer).
class table_tool_call final : public tool_call {
 public:
  table_tool_call(call_table& t, uint64_t seq, const tool_def& def, object arguments,
                  bool in_batch)
      : tool_call(arguments), t_(t), seq_(seq), def_(def), in_batch_(in_batch) {}

  void finish(tool_result r) override {
    done_ = true;
    if (in_batch_) {
      sync_ = std::move(r);
    } else {
      t_.complete(seq_, render_tool_response(f().id_json, r));
    }
  }

  void capture(capture_job job) override {
    done_ = true;
    job.seq = seq_;
    job.id_json = reply_id();
    t_.queue_capture(seq_, std::move(job));
  }

  void input(std::function<tool_result(input_context&, job_control&)> run,
             bool read_only) override {
    done_ = true;
    call_table::call_state& fl = f();
    fl.at = call_table::where::actor;
    if (in_batch_) fl.batch->leased = true;
    input_job job;
    job.seq = seq_;
    job.id_json = reply_id();
    job.run = std::move(run);
    job.lease = in_batch_ ? seq_ : 0;
    job.read_only = read_only;
    // Coordinates mapped through the session are valid only on the server
    // it was captured from: the actor checks again when the job runs.
    if (session_read_) {
      if (auto s = t_.ctx_.coords.live()) job.generation = s->generation;
    }
    t_.ctx_.actor.post(std::move(job));
  }

  void desktop(std::unique_ptr<desktop_op> op) override {
    done_ = true;
    f().at = call_table::where::desktop;
    desktop_job job;
    job.seq = seq_;
    job.id_json = reply_id();
    job.op = std::move(op);
    t_.ctx_.desk.post(std::move(job));
  }

  void a11y(std::unique_ptr<a11y_op> op) override {
#if CU_HAVE_A11Y
    if (t_.ctx_.ax == nullptr) return fail("the a11y toolset is not on");
    done_ = true;
    f().at = call_table::where::a11y;
    a11y_job job;
    job.seq = seq_;
    job.id_json = reply_id();
    job.op = std::move(op);
    t_.ctx_.ax->post(std::move(job));
#else
    (void)op;
    fail("this server was built without the a11y toolset (libatspi2.0-dev)");
#endif
  }

  void then(std::function<void(tool_call&, tool_result)> next) override {
    call_table::call_state& fl = f();
    fl.next = std::move(next);
    fl.next_def = &def_;
  }

  void finish_after(double seconds, tool_result r) override {
    if (seconds <= 0) return finish(std::move(r));
    done_ = true;
    call_table::call_state& fl = f();
    fl.at = call_table::where::timer;
    fl.is_wait = true;
    fl.waiting = std::move(r);
    expect_seconds(seconds);
    call_table* t = &t_;
    uint64_t seq = seq_;
    fl.timer = t_.start_timer(uint64_t(std::llround(seconds * 1000)), 0, [t, seq] {
      auto it = t->calls_.find(seq);
      if (it == t->calls_.end()) return;
      call_table::stop_timer(it->second.timer);
      it->second.at = call_table::where::here;
      it->second.is_wait = false;
      auto r = std::move(it->second.waiting);
      it->second.waiting.reset();
      t->deliver(seq, std::move(r));
    });
  }

  void watch(watch_spec spec) override {
    done_ = true;
    expect_seconds(spec.timeout_secs);
    t_.start_watch(seq_, std::move(spec));
  }

  void find_until(capture_job job, bool appear, double timeout_secs) override {
    done_ = true;
    expect_seconds(timeout_secs);
    t_.start_until(seq_, std::move(job), appear, timeout_secs);
  }

  void run_batch(batch_plan plan) override {
    if (in_batch_) return fail("computer_batch cannot be nested inside a batch");
    done_ = true;
    auto b = std::make_unique<batch_run>();
    b->plan = std::move(plan);
    f().batch = std::move(b);
    t_.batches_.resume(seq_);
  }

  std::optional<coord_session> session() const override {
    session_read_ = true;
    return t_.ctx_.coords.live();
  }
  std::optional<rect> display_area() const override { return t_.ctx_.coords.area(); }
  const std::string& x_display() const override { return t_.ctx_.cfg.display; }
  session_grants& grants() override { return t_.ctx_.grants; }
  toolset_mask toolsets() const override { return t_.ctx_.cfg.toolsets_on; }
  std::string_view tool_name() const override { return def_.name; }

  void expect_seconds(double seconds) override {
    // A batch's progress counts its steps instead.
    if (!in_batch_) f().progress_total = seconds;
  }

  bool done() const { return done_; }
  // A batch step's result when it finished at once.
  std::optional<tool_result> take_sync() { return std::move(sync_); }

 private:
  call_table::call_state& f() { return t_.calls_.at(seq_); }
  // A batch step's completion, or a step with a further one chained,
  // carries its result, not an answer line.
  std::string reply_id() { return in_batch_ || f().next ? std::string() : f().id_json; }

  call_table& t_;
  uint64_t seq_;
  const tool_def& def_;
  bool in_batch_;
  bool done_ = false;
  mutable bool session_read_ = false;  // The handler mapped coordinates.
  std::optional<tool_result> sync_;
};

uv_timer_t* call_table::start_timer(uint64_t ms, uint64_t repeat_ms, std::function<void()> fire) {
  return start_loop_timer(ctx_.loop, ms, repeat_ms, std::move(fire));
}

void call_table::stop_timer(uv_timer_t*& t) { stop_loop_timer(t); }

call_table::call_table(call_context ctx)
    : ctx_(std::move(ctx)), batches_(*this), watches_(ctx_.loop, ctx_.pool.damage()) {
  empty_args_ = empty_parser_.parse(std::string_view("{}")).get_object().value();
}

void call_table::call(std::string_view id_json, const std::optional<object>& params) {
  std::string_view name;
  if (!params || params->at_key("name").get(name) != simdjson::SUCCESS) {
    ctx_.out.respond(render_error(id_json, rpc_error::invalid_params,
                                  "Invalid params: tools/call needs a string \"name\""));
    return;
  }
  std::string token;
  element meta, t;
  if (params->at_key("_meta").get(meta) == simdjson::SUCCESS && meta.is_object() &&
      object(meta).at_key("progressToken").get(t) == simdjson::SUCCESS &&
      (t.is_string() || t.is_int64() || t.is_uint64())) {
    token = simdjson::minify(t);
  }
  log(log_level::debug, "tools/call %.*s (id %.*s)", int(std::min<size_t>(name.size(), 64)),
      name.data(), int(std::min<size_t>(id_json.size(), 64)), id_json.data());
  uint64_t seq = accept(id_json, std::move(token));
  // Kept only when its end will be logged: no copy per call otherwise.
  if (log_wanted(log_level::debug)) calls_.at(seq).tool = std::string(name.substr(0, 64));
  object args = empty_args_;
  element a;
  if (params->at_key("arguments").get(a) == simdjson::SUCCESS && !a.is_null()) {
    if (!a.is_object()) {
      complete(seq, render_tool_response(id_json, tool_result::failure(
                                                      "Invalid argument \"arguments\": "
                                                      "expected an object")));
      return;
    }
    args = a;
  }
  const tool_def* def = find_tool(name, ctx_.cfg.toolsets_on);
  if (def == nullptr) {
    complete(seq, render_tool_response(id_json, tool_result::failure(unknown_tool_message(name))));
    return;
  }
  dispatch(seq, *def, args, false);
}

std::optional<tool_result> call_table::run_step(uint64_t seq, const tool_def& def, object args) {
  return dispatch(seq, def, args, true);
}

std::optional<tool_result> call_table::dispatch(uint64_t seq, const tool_def& def, object args,
                                                bool in_batch) {
  table_tool_call call(*this, seq, def, args, in_batch);
  // An argument the tool does not take is refused before its handler runs,
  // so nothing is pressed or changed by a call the model got wrong.
  if (auto bad = refuse_unknown_arguments(def, toolsets(), args); !bad) {
    call.fail(bad.take_error().message);
  } else {
    def.handler(call);
  }
  if (!call.done()) {
    log(log_level::error, "handler for %s finished without a result", def.name.data());
    call.fail("internal error");
  }
  return call.take_sync();
}

void call_table::run_next(uint64_t seq, std::optional<tool_result> r) {
  call_state& f = calls_.at(seq);
  auto next = std::move(f.next);
  f.next = nullptr;
  const tool_def* def = f.next_def;
  f.at = where::here;
  if (!r || f.cancelled) return deliver(seq, std::nullopt);
  const bool in_batch = f.batch != nullptr;
  table_tool_call call(*this, seq, *def, empty_args_, in_batch);
  next(call, std::move(*r));
  if (!call.done()) {
    log(log_level::error, "the next step of %s finished without a result", def->name.data());
    return deliver(seq, tool_result::failure("internal error"));
  }
  if (in_batch) {
    if (auto sync = call.take_sync()) deliver(seq, std::move(sync));
  }
}

uint64_t call_table::accept(std::string_view id_json, std::string progress_token) {
  uint64_t seq = ++next_seq_;
  call_state f;
  f.id_json = std::string(id_json);
  f.started = std::chrono::steady_clock::now();
  f.group = ctx_.out.join();
  if (!progress_token.empty()) {
    f.progress_token = std::move(progress_token);
    f.progress = start_timer(1000, 1000, [this, seq] { send_progress(seq); });
  }
  calls_.emplace(seq, std::move(f));
  return seq;
}

void call_table::complete(uint64_t seq, std::string line) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  call_state& f = it->second;
  stop_timer(f.progress);
  stop_timer(f.timer);
  watches_.stop(seq);
  std::function<void()> written;
  if (!f.tool.empty()) {
    log_call_end(f, line);
    // And when its last byte left: the latency the client sees, less the
    // pipe's way to it (tools/bench-capture reads these lines).
    written = [tool = f.tool, id = f.id_json, started = f.started] {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      log(log_level::debug, "tools/call %s (id %.*s) written %.3f ms after it was read",
          tool.c_str(), int(std::min<size_t>(id.size(), 64)), id.data(), ms);
    };
  }
  if (f.cancelled) line.clear();
  std::shared_ptr<rpc_group> group = std::move(f.group);
  calls_.erase(it);
  ctx_.out.answer(std::move(group), std::move(line), std::move(written));
  ctx_.on_call_end();
}

// At debug, every tool call's end: how long it took, how it ended and how
// big its answer was. A rendered answer ends with its isError member.
void call_table::log_call_end(const call_state& f, std::string_view line) const {
  using namespace std::chrono;
  const double ms = duration<double, std::milli>(steady_clock::now() - f.started).count();
  std::string_view outcome = "ok";
  if (f.cancelled) {
    outcome = "cancelled, not answered";
  } else if (line.empty()) {
    outcome = "not answered";
  } else if (line.size() >= 17 && line.substr(line.size() - 17) == "\"isError\":true}}\n") {
    outcome = "isError";
  }
  log(log_level::debug, "tools/call %s (id %.*s): %.*s in %.1f ms, %zu bytes", f.tool.c_str(),
      int(std::min<size_t>(f.id_json.size(), 64)), f.id_json.data(), int(outcome.size()),
      outcome.data(), ms, line.size());
}

void call_table::deliver(uint64_t seq, std::optional<tool_result> r) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  it->second.at = where::here;
  // The call's (or the step's) work is over: so is any watch of it.
  watches_.stop(seq);
  it->second.until.reset();
  if (it->second.batch) return batches_.on_result(seq, std::move(r));
  if (!r) return complete(seq, std::string());
  complete(seq, render_tool_response(it->second.id_json, *r));
}

void call_table::on_completion(completion& c) {
  if (c.was_capture) --captures_in_pool_;
  // The worker has posted the call's rest elsewhere: the next capture may
  // take its place, while the call waits for its real completion.
  if (c.handed_on) return pump_captures();
  if (texts_out_.erase(c.seq) != 0) pump_captures();
  auto it = calls_.find(c.seq);
  bool live = it != calls_.end() && !it->second.cancelled;
  // A cancelled screenshot was never seen by the model, so it must not
  // move the coordinate session.
  if (live && c.session) ctx_.coords.adopt(*c.session);
  if (live && c.display_area) ctx_.coords.set_area(*c.display_area);
  if (c.was_input) last_input_ = std::chrono::steady_clock::now();
  if (it == calls_.end()) return;
  if (it->second.next) return run_next(c.seq, std::move(c.result));
  if (it->second.until && c.was_capture) return until_result(c.seq, std::move(c.result));
  if (it->second.batch) {
    deliver(c.seq, std::move(c.result));
  } else {
    complete(c.seq, std::move(c.line));
  }
}

void call_table::queue_capture(uint64_t seq, capture_job job) {
  auto ready = settled_at();
  if (ready) {
    // Input came just before: the screen may still be changing.
    call_state& f = calls_.at(seq);
    f.at = where::settle;
    f.settle_job = std::move(job);
    arm_settle(seq, *ready);
    return;
  }
  calls_.at(seq).at = where::pool;
  capture_backlog_.push_back(std::move(job));
  pump_captures();
}

std::optional<std::chrono::steady_clock::time_point> call_table::settled_at() const {
  using clock = std::chrono::steady_clock;
  if (ctx_.cfg.screenshot_delay_secs <= 0 || !last_input_) return std::nullopt;
  auto secs = [](double s) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
  };
  // The bound: CU_SCREENSHOT_DELAY after the input, whatever the screen does.
  const clock::time_point bound = *last_input_ + secs(ctx_.cfg.screenshot_delay_secs);
  clock::time_point ready = bound;
  const damage_monitor& damage = ctx_.pool.damage();
  if (damage.watching()) {
    // Quiet for CU_SETTLE_QUIET_MS since the input and since the last change.
    clock::time_point quiet_from = *last_input_;
    if (auto changed = damage.last_change(); changed && *changed > quiet_from) {
      quiet_from = *changed;
    }
    ready = std::min(bound, quiet_from + secs(ctx_.cfg.settle_quiet_ms / 1000));
  }
  if (ready <= clock::now()) return std::nullopt;
  return ready;
}

void call_table::arm_settle(uint64_t seq, std::chrono::steady_clock::time_point ready) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(ready - std::chrono::steady_clock::now());
  calls_.at(seq).timer = start_timer(uint64_t(std::max<int64_t>(0, ms.count())), 0, [this, seq] {
    auto it = calls_.find(seq);
    if (it == calls_.end()) return;
    call_state& f = it->second;
    stop_timer(f.timer);
    // The screen changed while we waited: wait for quiet again.
    if (auto again = settled_at()) return arm_settle(seq, *again);
    f.at = where::pool;
    capture_backlog_.push_back(std::move(*f.settle_job));
    f.settle_job.reset();
    pump_captures();
  });
}

void call_table::capture_for_batch(uint64_t seq) {
  capture_job job;
  job.seq = seq;  // The batch's own seq, and no id: the result comes back raw.
  job.what = capture_job::kind::screenshot;
  job.area = ctx_.coords.area();
  // A window's session stays that window's: the batch's looks are of it.
  if (auto s = ctx_.coords.live()) job.window = s->window;
  queue_capture(seq, std::move(job));
}

void call_table::pause_batch(uint64_t seq, uint64_t ms) {
  call_state& f = calls_.at(seq);
  f.at = where::timer;
  f.timer = start_timer(ms, 0, [this, seq] {
    auto it = calls_.find(seq);
    if (it == calls_.end()) return;
    stop_timer(it->second.timer);
    it->second.at = where::here;
    batches_.resume(seq);
  });
}

void call_table::finish_batch(uint64_t seq, std::optional<tool_result> r) {
  call_state& f = calls_.at(seq);
  std::unique_ptr<batch_run> b = std::move(f.batch);
  // Other callers' input may run again.
  if (b->leased) ctx_.actor.release_lease(seq);
  if (!r) return complete(seq, std::string());
  complete(seq, render_tool_response(f.id_json, *r));
}

void call_table::pump_captures() {
  // Enough jobs queued that no worker idles, few enough that the images
  // they make fit the stdout bound.
  const size_t depth = 2 * size_t(ctx_.pool.workers());
  auto next = capture_backlog_.begin();
  while (next != capture_backlog_.end() && captures_in_pool_ < depth) {
    if (ctx_.out.waiting_bytes() > kStdoutHighBytes) {
      if (!captures_held_) {
        captures_held_ = true;
        log(log_level::debug,
            "backpressure: %zu bytes of answers unread; %zu captures wait for the client",
            ctx_.out.waiting_bytes(), capture_backlog_.size());
      }
      return;
    }
    captures_held_ = false;
    // A find_text's grab leaves a grey copy of the area waiting for the
    // recognizer, which reads one at a time: past kTextsOut such calls it
    // waits here, holding nothing, and the captures behind it go first.
    if (next->what == capture_job::kind::find_text) {
      if (texts_out_.size() >= kTextsOut) {
        ++next;
        continue;
      }
      texts_out_.insert(next->seq);
    }
    ++captures_in_pool_;
    ctx_.pool.post(std::move(*next));
    next = capture_backlog_.erase(next);
  }
}

void call_table::cancel(std::string_view id_json) {
  for (auto& [s, f] : calls_) {
    if (f.id_json != id_json || f.cancelled) continue;
    uint64_t seq = s;
    f.cancelled = true;
    switch (f.at) {
      case where::settle:
      case where::timer:
      case where::watch:
        // A wait, a watch of the screen, a batch's pause or a capture not
        // yet started: end it here (deliver ends the watch).
        stop_timer(f.timer);
        f.is_wait = false;
        deliver(seq, std::nullopt);
        break;
      case where::desktop: ctx_.desk.cancel(seq); break;
#if CU_HAVE_A11Y
      case where::a11y: ctx_.ax->cancel(seq); break;
#else
      case where::a11y: break;
#endif
      // The actor stops it (a hold releases its keys at once) and sends
      // back an empty completion, which ends the call silently.
      case where::actor: ctx_.actor.cancel(seq); break;
      case where::pool: {
        // Still waiting its turn: it never reaches the pool. In the pool's
        // queue, the pool drops it; under way, its result is dropped when
        // it arrives.
        auto queued = std::find_if(capture_backlog_.begin(), capture_backlog_.end(),
                                   [&](const capture_job& j) { return j.seq == seq; });
        if (queued != capture_backlog_.end()) {
          capture_backlog_.erase(queued);
          deliver(seq, std::nullopt);
        } else {
          ctx_.pool.cancel(seq);
        }
        break;
      }
      case where::here: break;  // Nothing runs between a call's steps.
    }
    return;  // deliver() may have changed the table; ids are unique anyway.
  }
  // Nothing in flight has that id: the call was answered before the cancel
  // was read (or never existed). The debug log says so, which is how a test
  // tells a late cancel from a lost one.
  log(log_level::debug, "notifications/cancelled for id %.*s: not in flight (already answered?)",
      int(std::min<size_t>(id_json.size(), 64)), id_json.data());
}

void call_table::cancel_all() {
  std::vector<std::string> ids;
  for (auto& [seq, f] : calls_) {
    if (!f.cancelled) ids.push_back(f.id_json);
  }
  for (const std::string& id : ids) cancel(id);
}

void call_table::end_waits_early() {
  std::vector<uint64_t> waits, pauses, watches;
  for (auto& [seq, f] : calls_) {
    if (f.cancelled) continue;
    if (f.until && f.until->finding) {
      // Ends when its find comes back, unless that find is the answer.
      f.until->end_reason = "stdin closed, the server is stopping";
      continue;
    }
    if (f.at == where::watch) watches.push_back(seq);
    if (f.at != where::timer) continue;
    if (f.is_wait) {
      waits.push_back(seq);
    } else if (f.batch) {
      pauses.push_back(seq);
    }
  }
  // A batch pausing between steps would only wake to start no further step
  // (none starts once stdin has closed): end the pause now.
  for (uint64_t seq : pauses) {
    auto it = calls_.find(seq);
    if (it == calls_.end()) continue;
    stop_timer(it->second.timer);
    it->second.at = where::here;
    batches_.resume(seq);
  }
  for (uint64_t seq : watches) {
    auto it = calls_.find(seq);
    if (it == calls_.end()) continue;
    deliver(seq, tool_result::failure(
                     str_cat("wait ended early after ",
                             elapsed_text(std::chrono::steady_clock::now() - it->second.started),
                             "s: stdin closed, the server is stopping")));
  }
  for (uint64_t seq : waits) {
    auto it = calls_.find(seq);
    if (it == calls_.end()) continue;
    call_state& f = it->second;
    stop_timer(f.timer);
    f.is_wait = false;
    deliver(seq, tool_result::failure(
                     str_cat("wait ended early after ",
                             elapsed_text(std::chrono::steady_clock::now() - f.started),
                             "s: stdin closed, the server is stopping")));
  }
}

void call_table::send_progress(uint64_t seq, std::string_view note) {
  auto it = calls_.find(seq);
  if (it == calls_.end() || it->second.cancelled || it->second.progress_token.empty()) return;
  call_state& f = it->second;
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - f.started).count();
  // Progress only ever grows (the protocol says so); a note may come
  // within the tenth of a second of a tick.
  const double progress = std::max(std::round(elapsed * 10) / 10, f.progress_sent + 0.1);
  f.progress_sent = progress;
  std::string line;
  json_writer w(line);
  w.begin_object().key("jsonrpc").string("2.0").key("method").string("notifications/progress");
  w.key("params").begin_object().key("progressToken").raw(f.progress_token);
  w.key("progress").number(std::round(progress * 10) / 10);
  if (f.progress_total > 0) w.key("total").number(f.progress_total);
  if (f.batch) {
    w.key("message").string(batch_runner::progress_message(*f.batch));
  } else if (!note.empty()) {
    w.key("message").string(note);
  }
  w.end_object().end_object();
  line.push_back('\n');
  ctx_.out.send(std::move(line));
}

void call_table::start_watch(uint64_t seq, watch_spec spec) {
  calls_.at(seq).at = where::watch;
  screen_watches::hooks h;
  h.armed = [this, seq] {
    log(log_level::debug, "call %llu: watching the screen", static_cast<unsigned long long>(seq));
    send_progress(seq, "watching");
  };
  h.done = [this, seq](tool_result r) { deliver(seq, std::move(r)); };
  watches_.start(seq, std::move(spec), std::move(h));
}

void call_table::start_until(uint64_t seq, capture_job job, bool appear, double timeout_secs) {
  call_state& f = calls_.at(seq);
  f.at = where::watch;
  auto u = std::make_unique<until_run>();
  u->appear = appear;
  u->timeout_secs = timeout_secs;
  watch_spec spec;
  spec.what = watch_spec::kind::touch;
  spec.region = job.find->region;
  spec.window = job.window;
  spec.session = job.session;
  spec.display_area = job.area;
  spec.timeout_secs = timeout_secs;
  u->job = std::move(job);
  f.until = std::move(u);
  screen_watches::hooks h;
  // The first find starts once drawing is watched, so nothing drawn after
  // its grab can go unseen.
  h.armed = [this, seq] {
    send_progress(seq, "watching");
    until_find(seq);
  };
  h.touched = [this, seq](const rect&) {
    until_run& u = *calls_.at(seq).until;
    if (u.finding) {
      u.dirty = true;
    } else {
      until_find(seq);
    }
  };
  h.timed_out = [this, seq] {
    auto it = calls_.find(seq);
    if (it == calls_.end() || !it->second.until) return;
    until_run& u = *it->second.until;
    u.end_reason = "timeout";
    if (!u.finding) until_result(seq, std::nullopt);
  };
  h.done = [this, seq](tool_result r) {
    // The watch could not start, or could not go on: the X server went
    // away. That is the answer, not a timeout.
    auto it = calls_.find(seq);
    if (it == calls_.end() || !it->second.until) return;
    until_run& u = *it->second.until;
    if (!r.is_error) return;
    if (u.checks == 0 && !u.finding) return deliver(seq, std::move(r));
    u.end_reason = r.content.empty() ? std::string("the watch ended") : r.content[0].text;
    if (!u.finding) until_result(seq, std::nullopt);
  };
  watches_.start(seq, std::move(spec), std::move(h));
}

void call_table::until_find(uint64_t seq) {
  call_state& f = calls_.at(seq);
  until_run& u = *f.until;
  u.finding = true;
  u.dirty = false;
  ++u.checks;
  capture_job j = u.job;
  j.seq = seq;
  j.id_json.clear();  // Its result comes back raw, to until_result.
  queue_capture(seq, std::move(j));
}

namespace {

// How many matches a find answered, and the first one's centre.
size_t count_matches(simdjson::dom::parser& p, const tool_result& r, point* first) {
  simdjson::dom::element doc;
  simdjson::dom::array matches;
  if (p.parse(r.structured).get(doc) != simdjson::SUCCESS ||
      doc["matches"].get(matches) != simdjson::SUCCESS) {
    return 0;
  }
  if (matches.size() > 0) {
    int64_t x = 0, y = 0;
    simdjson::dom::array c;
    if (matches.at(0)["center"].get(c) == simdjson::SUCCESS && c.size() == 2 &&
        c.at(0).get(x) == simdjson::SUCCESS && c.at(1).get(y) == simdjson::SUCCESS) {
      *first = point{int(x), int(y)};
    }
  }
  return matches.size();
}

}  // namespace

void call_table::until_result(uint64_t seq, std::optional<tool_result> r) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  call_state& f = it->second;
  until_run& u = *f.until;
  if (r) {
    u.finding = false;
    f.at = where::watch;
  }
  if (f.cancelled || (!r && !u.end_reason)) return deliver(seq, std::nullopt);
  const char* what = u.appear ? "appear" : "disappear";
  if (r) {
    if (r->is_error) return deliver(seq, std::move(*r));
    point first;
    const size_t n = count_matches(until_parser_, *r, &first);
    u.last_matches = n;
    u.last_first = first;
    if (u.appear == (n > 0)) {
      // The find's answer, and how the wait went.
      std::string json = r->structured;
      const double after =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - f.started).count();
      json.pop_back();
      json_writer w(json);
      json += str_cat(",\"until\":\"", what, "\",\"after\":");
      w.number(std::round(after * 1000) / 1000);
      json += str_cat(",\"checks\":", std::to_string(u.checks), "}");
      return deliver(seq, tool_result::json(std::move(json)));
    }
    if (!u.end_reason) {
      log(log_level::debug, "call %llu: look %d, the template did not %s yet",
          static_cast<unsigned long long>(seq), u.checks, what);
      if (u.dirty) until_find(seq);
      return;  // Until the next drawing there.
    }
  }
  const std::string looks =
      str_cat(std::to_string(u.checks), u.checks == 1 ? " look" : " looks");
  if (*u.end_reason != "timeout") {
    return deliver(seq, tool_result::failure(str_cat("screenshot_find ended early: ",
                                                       *u.end_reason, " (after ", looks, ")")));
  }
  // The timeout: the last look stands.
  std::string why = str_cat("timeout: the template did not ", what, " within ",
                            seconds_text(std::chrono::duration<double>(u.timeout_secs)), "s (",
                            looks);
  if (!u.appear) {
    why += str_cat("; still ", std::to_string(u.last_matches), " on screen, the first at ",
                   point_text(u.last_first));
  }
  why += ")";
  deliver(seq, tool_result::failure(std::move(why)));
}

}  // namespace cu
