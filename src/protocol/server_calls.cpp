// The server's tool calls: accepting them, handing their work to the
// threads and timers that do it, cancelling them, reporting their progress,
// and running computer_batch's steps one after another.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "protocol/json_writer.h"
#include "protocol/server.h"
#include "protocol/tool_result.h"
#include "tools/registry.h"
#include "tools/tool_call.h"
#include "util/log.h"
#include "util/str_cat.h"

namespace cu {

using simdjson::dom::element;
using simdjson::dom::object;


// A tools/call, or one step of a batch (in_batch: its result goes back to
// the batch instead of out as a response).
class server_tool_call final : public tool_call {
 public:
  server_tool_call(server& s, uint64_t seq, const tool_def& def, object arguments, bool in_batch)
      : tool_call(arguments), s_(s), seq_(seq), def_(def), in_batch_(in_batch) {}

  void finish(tool_result r) override {
    done_ = true;
    if (in_batch_) {
      sync_ = std::move(r);
    } else {
      s_.complete(seq_, render_tool_response(f().id_json, r));
    }
  }

  void capture(capture_job job) override {
    done_ = true;
    job.seq = seq_;
    job.id_json = in_batch_ ? std::string() : f().id_json;
    s_.submit_capture(seq_, std::move(job));
  }

  void input(std::function<tool_result(input_context&, job_control&)> run,
             bool read_only) override {
    done_ = true;
    server::inflight& fl = f();
    fl.at = server::where::actor;
    if (in_batch_) fl.batch->leased = true;
    input_job job{seq_, in_batch_ ? std::string() : fl.id_json, std::move(run),
                  in_batch_ ? seq_ : 0, read_only};
    // Coordinates mapped through the session are valid only on the server
    // it was captured from: the actor checks again when the job runs.
    if (session_read_) {
      if (auto s = s_.live_session()) job.generation = s->generation;
    }
    s_.actor_.post(std::move(job));
  }

  void desktop(std::unique_ptr<desktop_op> op) override {
    done_ = true;
    server::inflight& fl = f();
    fl.at = server::where::desktop;
    s_.desktop_.post(seq_, in_batch_ ? std::string() : fl.id_json, std::move(op));
  }

  void finish_after(double seconds, tool_result r) override {
    if (seconds <= 0) return finish(std::move(r));
    done_ = true;
    server::inflight& fl = f();
    fl.at = server::where::timer;
    fl.is_wait = true;
    fl.waiting = std::move(r);
    if (!in_batch_) fl.progress_total = seconds;
    server* s = &s_;
    uint64_t seq = seq_;
    fl.timer = s_.start_timer(uint64_t(std::llround(seconds * 1000)), 0, [s, seq] {
      auto it = s->inflight_.find(seq);
      if (it == s->inflight_.end()) return;
      server::stop_timer(it->second.timer);
      it->second.at = server::where::here;
      it->second.is_wait = false;
      auto r = std::move(it->second.waiting);
      it->second.waiting.reset();
      s->deliver(seq, std::move(r));
    });
  }

  void run_batch(batch_plan plan) override {
    if (in_batch_) return fail("computer_batch cannot be nested inside a batch");
    done_ = true;
    s_.start_batch(seq_, std::move(plan));
  }

  std::optional<coord_session> session() const override {
    session_read_ = true;
    return s_.live_session();
  }
  std::optional<rect> display_area() const override { return s_.area_; }
  const std::string& x_display() const override { return s_.cfg_.display; }
  session_grants& grants() override { return s_.grants_; }
  std::string_view tool_name() const override { return def_.name; }

  bool done() const { return done_; }
  // A batch step's result when it finished at once.
  std::optional<tool_result> take_sync() { return std::move(sync_); }

 private:
  server::inflight& f() { return s_.inflight_.at(seq_); }

  server& s_;
  uint64_t seq_;
  const tool_def& def_;
  bool in_batch_;
  bool done_ = false;
  mutable bool session_read_ = false;  // The handler mapped coordinates.
  std::optional<tool_result> sync_;
};

namespace {

struct loop_timer {
  uv_timer_t handle;
  std::function<void()> fire;
};

std::string unknown_tool(std::string_view name) {
  std::string msg = "Unknown tool: ";
  append_json_string(msg, name);
  msg += ". tools/list names the available tools.";
  return msg;
}

}  // namespace

uv_timer_t* server::start_timer(uint64_t ms, uint64_t repeat_ms, std::function<void()> fire) {
  auto* t = new loop_timer{{}, std::move(fire)};
  uv_timer_init(loop_, &t->handle);
  t->handle.data = t;
  uv_timer_start(
      &t->handle, [](uv_timer_t* h) { static_cast<loop_timer*>(h->data)->fire(); }, ms,
      repeat_ms);
  return &t->handle;
}

void server::stop_timer(uv_timer_t*& t) {
  if (t == nullptr) return;
  uv_timer_stop(t);
  uv_close(reinterpret_cast<uv_handle_t*>(t),
           [](uv_handle_t* h) { delete static_cast<loop_timer*>(h->data); });
  t = nullptr;
}

void server::call_tool(std::string_view id_json, params_t params) {
  std::string_view name;
  if (!params || params->at_key("name").get(name) != simdjson::SUCCESS) {
    respond(render_error(id_json, rpc_error::invalid_params,
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
  if (log_wanted(log_level::debug)) inflight_.at(seq).tool = std::string(name.substr(0, 64));
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
  const tool_def* def = find_tool(name);
  if (def == nullptr) {
    complete(seq, render_tool_response(id_json, tool_result::failure(unknown_tool(name))));
    return;
  }
  server_tool_call call(*this, seq, *def, args, false);
  def->handler(call);
  if (!call.done()) {
    log(log_level::error, "handler for %s finished without a result", def->name.data());
    complete(seq, render_tool_response(id_json, tool_result::failure("internal error")));
    return;
  }
  // A hold's length is known: progress can say how far along it is.
  double d = 0;
  if (def->name == "hold_key" && args.at_key("duration").get(d) == simdjson::SUCCESS) {
    if (auto it = inflight_.find(seq); it != inflight_.end()) it->second.progress_total = d;
  }
}

uint64_t server::accept(std::string_view id_json, std::string progress_token) {
  uint64_t seq = ++next_seq_;
  inflight f;
  f.id_json = std::string(id_json);
  f.started = std::chrono::steady_clock::now();
  f.group = group_;
  if (group_) ++group_->pending;
  if (!progress_token.empty()) {
    f.progress_token = std::move(progress_token);
    f.progress = start_timer(1000, 1000, [this, seq] { send_progress(seq); });
  }
  inflight_.emplace(seq, std::move(f));
  return seq;
}

void server::complete(uint64_t seq, std::string line) {
  auto it = inflight_.find(seq);
  if (it == inflight_.end()) return;
  inflight& f = it->second;
  stop_timer(f.progress);
  stop_timer(f.timer);
  bool write = !f.cancelled && !line.empty();
  if (!f.tool.empty()) log_call_end(f, line);
  std::shared_ptr<rpc_group> group = std::move(f.group);
  inflight_.erase(it);
  if (group) {
    if (write) group->add(std::move(line), group_bytes_);
    if (--group->pending == 0 && !group->open) flush_group(*group);
  } else if (write) {
    send(std::move(line));
  }
  relieve_pressure();
  maybe_finish_stop();
}

// At debug, every tool call's end: how long it took, how it ended and how
// big its answer was. A rendered answer ends with its isError member.
void server::log_call_end(const inflight& f, std::string_view line) const {
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

void server::deliver(uint64_t seq, std::optional<tool_result> r) {
  auto it = inflight_.find(seq);
  if (it == inflight_.end()) return;
  it->second.at = where::here;
  if (it->second.batch) return on_batch_result(seq, std::move(r));
  if (!r) return complete(seq, std::string());
  complete(seq, render_tool_response(it->second.id_json, *r));
}

void server::on_completions(std::vector<completion>& batch) {
  for (completion& c : batch) {
    if (c.seq == 0) {
      if (c.screen) on_screen_report(*c.screen);
      // A notification (notifications/message).
      if (!c.line.empty()) send(std::move(c.line));
      continue;
    }
    if (c.was_capture) --captures_in_pool_;
    auto it = inflight_.find(c.seq);
    bool live = it != inflight_.end() && !it->second.cancelled;
    // A cancelled screenshot was never seen by the model, so it must not
    // move the coordinate session.
    if (live && c.session) adopt_session(*c.session);
    if (live && c.display_area && *c.display_area != area_) {
      // Coordinates the model holds refer to the old area: it must look
      // again before it can click.
      area_ = *c.display_area;
      session_.reset();
    }
    if (c.was_input) last_input_ = std::chrono::steady_clock::now();
    if (it == inflight_.end()) continue;
    if (it->second.batch) {
      deliver(c.seq, std::move(c.result));
    } else {
      complete(c.seq, std::move(c.line));
    }
  }
}

void server::on_screen_report(const screen_report& r) {
  if (r.lost) {
    // Every coordinate the model holds is of a screen that is gone, and
    // whatever the actor held went with the server.
    if (session_ || area_) {
      log(log_level::info, "X display %s went away: the coordinate session is void until the "
          "next screenshot", cfg_.display.c_str());
    }
    session_.reset();
    early_session_.reset();
    area_.reset();
    root_size_.reset();
    actor_.display_lost();
    return;
  }
  if (root_size_ && *root_size_ != r.root) {
    log(log_level::info, "the screen of %s is now %dx%d (was %dx%d): the coordinate session is "
        "void until the next screenshot", cfg_.display.c_str(), r.root.w, r.root.h,
        root_size_->w, root_size_->h);
    // A capture already taken at the new size (its report came first)
    // stays; anything else is of the old screen.
    session_ = early_session_ && early_session_->root == r.root ? early_session_ : std::nullopt;
    area_.reset();
  }
  early_session_.reset();
  root_size_ = r.root;
}

void server::adopt_session(const coord_session& s) {
  if (s.generation != generation_.current()) return;  // Of a server that is gone.
  if (!root_size_) root_size_ = s.root;
  if (s.root == *root_size_) {
    session_ = s;
  } else {
    // Captured after a resize the desktop thread has not reported yet (or
    // before one it has): decided when the report comes.
    early_session_ = s;
  }
}

std::optional<coord_session> server::live_session() const {
  if (session_ && session_->generation == generation_.current()) return session_;
  return std::nullopt;
}

void server::submit_capture(uint64_t seq, capture_job job) {
  inflight& f = inflight_.at(seq);
  if (cfg_.screenshot_delay_secs > 0 && last_input_) {
    auto ready = *last_input_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(cfg_.screenshot_delay_secs));
    auto now = std::chrono::steady_clock::now();
    if (ready > now) {
      // Wait out CU_SCREENSHOT_DELAY, so the screen has settled after input.
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(ready - now).count();
      f.at = where::settle;
      f.timer = start_timer(uint64_t(ms), 0, [this, seq, job = std::move(job)]() mutable {
        auto it = inflight_.find(seq);
        if (it == inflight_.end()) return;
        stop_timer(it->second.timer);
        it->second.at = where::pool;
        to_pool(std::move(job));
      });
      return;
    }
  }
  f.at = where::pool;
  to_pool(std::move(job));
}

void server::to_pool(capture_job job) {
  capture_backlog_.push_back(std::move(job));
  pump_captures();
}

void server::pump_captures() {
  // Enough jobs queued that no worker idles, few enough that the images
  // they make fit the stdout bound.
  const size_t depth = 2 * size_t(pool_.workers());
  while (!capture_backlog_.empty() && captures_in_pool_ < depth) {
    if (out_.queued_bytes() + group_bytes_ > kStdoutHighBytes) {
      if (!captures_held_) {
        captures_held_ = true;
        log(log_level::debug,
            "backpressure: %zu bytes of answers unread; %zu captures wait for the client",
            out_.queued_bytes() + group_bytes_, capture_backlog_.size());
      }
      return;
    }
    captures_held_ = false;
    ++captures_in_pool_;
    pool_.submit(std::move(capture_backlog_.front()));
    capture_backlog_.pop_front();
  }
}

void server::cancel(std::string_view id_json) {
  for (auto& [s, f] : inflight_) {
    if (f.id_json != id_json || f.cancelled) continue;
    uint64_t seq = s;
    f.cancelled = true;
    switch (f.at) {
      case where::settle:
      case where::timer:
        // A wait, a batch's pause or a capture not yet started: end it here.
        stop_timer(f.timer);
        f.is_wait = false;
        deliver(seq, std::nullopt);
        break;
      case where::desktop: desktop_.cancel(seq); break;
      // The actor stops it (a hold releases its keys at once) and sends
      // back an empty completion, which ends the request silently.
      case where::actor: actor_.cancel(seq); break;
      case where::pool: {
        // Still waiting its turn: it never reaches the pool. Otherwise its
        // result is dropped when it arrives.
        auto queued = std::find_if(capture_backlog_.begin(), capture_backlog_.end(),
                                   [&](const capture_job& j) { return j.seq == seq; });
        if (queued != capture_backlog_.end()) {
          capture_backlog_.erase(queued);
          deliver(seq, std::nullopt);
        }
        break;
      }
      case where::here: break;  // Nothing runs between a call's steps.
    }
    return;  // deliver() may have changed the table; ids are unique anyway.
  }
  // Nothing in flight has that id: the request was answered before the
  // cancel was read (or never existed). The debug log says so, which is how
  // a test tells a late cancel from a lost one.
  log(log_level::debug, "notifications/cancelled for id %.*s: not in flight (already answered?)",
      int(std::min<size_t>(id_json.size(), 64)), id_json.data());
}

void server::end_waits_early() {
  std::vector<uint64_t> waits, pauses;
  for (auto& [seq, f] : inflight_) {
    if (f.at != where::timer || f.cancelled) continue;
    if (f.is_wait) {
      waits.push_back(seq);
    } else if (f.batch) {
      pauses.push_back(seq);
    }
  }
  // A batch pausing between steps would only wake to start no further step
  // (none starts once stdin has closed): end the pause now.
  for (uint64_t seq : pauses) {
    auto it = inflight_.find(seq);
    if (it == inflight_.end()) continue;
    stop_timer(it->second.timer);
    it->second.at = where::here;
    run_batch_steps(seq);
  }
  for (uint64_t seq : waits) {
    auto it = inflight_.find(seq);
    if (it == inflight_.end()) continue;
    inflight& f = it->second;
    stop_timer(f.timer);
    f.is_wait = false;
    char took[32];
    snprintf(took, sizeof took, "%.1f",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - f.started).count());
    deliver(seq, tool_result::failure(
                     str_cat("wait ended early after ", took, "s: stdin closed, the server is "
                                                              "stopping")));
  }
}

void server::send_progress(uint64_t seq) {
  auto it = inflight_.find(seq);
  if (it == inflight_.end() || it->second.cancelled) return;
  const inflight& f = it->second;
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - f.started).count();
  std::string line;
  json_writer w(line);
  w.begin_object().key("jsonrpc").string("2.0").key("method").string("notifications/progress");
  w.key("params").begin_object().key("progressToken").raw(f.progress_token);
  w.key("progress").number(std::round(elapsed * 10) / 10);
  if (f.progress_total > 0) w.key("total").number(f.progress_total);
  if (f.batch) {
    const batch_run& b = *f.batch;
    size_t step = b.next == 0 ? 0 : b.next - 1;
    w.key("message").string(str_cat("step ", std::to_string(step + 1), " of ",
                                     std::to_string(b.plan.steps.size()), ": ",
                                     b.plan.steps[step].name));
  }
  w.end_object().end_object();
  line.push_back('\n');
  send(std::move(line));
}

// computer_batch: the batch lives in its request's inflight entry and runs
// one step at a time; every step's work goes out under the batch's own
// sequence number, and comes back through deliver().

void server::start_batch(uint64_t seq, batch_plan plan) {
  auto b = std::make_unique<batch_run>();
  b->plan = std::move(plan);
  inflight_.at(seq).batch = std::move(b);
  run_batch_steps(seq);
}

void server::run_batch_steps(uint64_t seq) {
  for (;;) {
    auto r = start_step(seq);
    if (!r) return;  // Under way; its result comes back through deliver().
    if (!step_done(seq, std::move(*r))) return;
  }
}

std::optional<tool_result> server::start_step(uint64_t seq) {
  batch_run& b = *inflight_.at(seq).batch;
  const batch_step& step = b.plan.steps[b.next++];
  if (stopping_) {
    // stdin is closed (or the server is stopping): start nothing new.
    return tool_result::failure("not started: stdin closed, the server is stopping");
  }
  if (step.refusal) return tool_result::failure(*step.refusal);
  const tool_def* def = find_tool(step.name);
  if (def == nullptr) return tool_result::failure(unknown_tool(step.name));
  element args;
  if (b.parser.parse(step.arguments_json).get(args) != simdjson::SUCCESS || !args.is_object()) {
    return tool_result::failure("internal error: the step's arguments did not parse");
  }
  server_tool_call call(*this, seq, *def, args.get_object().value(), true);
  def->handler(call);
  if (!call.done()) {
    log(log_level::error, "handler for %s finished without a result", def->name.data());
    return tool_result::failure("internal error");
  }
  return call.take_sync();
}

bool server::step_done(uint64_t seq, tool_result r) {
  inflight& f = inflight_.at(seq);
  batch_run& b = *f.batch;
  bool last = r.is_error || b.next == b.plan.steps.size();
  b.done.push_back(step_outcome{b.plan.steps[b.next - 1].name, std::move(r), std::nullopt});
  if (f.cancelled) {
    end_batch(seq);
    return false;
  }
  if (capture_after_step(b.plan, b.done.back(), last)) {
    b.capturing = true;
    capture_job job;
    job.seq = seq;  // The batch's own seq, and no id: the result comes back raw.
    job.what = capture_job::kind::screenshot;
    job.area = area_;
    submit_capture(seq, std::move(job));
    return false;
  }
  return after_step(seq);
}

bool server::after_step(uint64_t seq) {
  inflight& f = inflight_.at(seq);
  batch_run& b = *f.batch;
  if (b.done.back().result.is_error || b.next == b.plan.steps.size()) {
    end_batch(seq);
    return false;
  }
  if (b.plan.delay_ms > 0) {
    f.at = where::timer;
    f.timer = start_timer(b.plan.delay_ms, 0, [this, seq] {
      auto it = inflight_.find(seq);
      if (it == inflight_.end()) return;
      stop_timer(it->second.timer);
      it->second.at = where::here;
      run_batch_steps(seq);
    });
    return false;
  }
  return true;
}

void server::on_batch_result(uint64_t seq, std::optional<tool_result> r) {
  inflight& f = inflight_.at(seq);
  batch_run& b = *f.batch;
  if (!r || f.cancelled) return end_batch(seq);
  if (b.capturing) {
    b.capturing = false;
    b.done.back().capture = std::move(*r);
    if (after_step(seq)) run_batch_steps(seq);
    return;
  }
  if (step_done(seq, std::move(*r))) run_batch_steps(seq);
}

void server::end_batch(uint64_t seq) {
  inflight& f = inflight_.at(seq);
  std::unique_ptr<batch_run> b = std::move(f.batch);
  // Other callers' input may run again.
  if (b->leased) actor_.release_lease(seq);
  if (f.cancelled) return complete(seq, std::string());
  std::string line =
      render_tool_response(f.id_json, batch_result(b->plan, std::move(b->done)));
  complete(seq, std::move(line));
}

}  // namespace cu
