#include "protocol/call_table.h"

#include <algorithm>
#include <cmath>

#include "build_config.h"
#include "core/json_writer.h"
#if CU_HAVE_A11Y
#include "a11y/a11y.h"
#endif
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
      t_.answer(seq_, std::move(r));
    }
  }

  void capture(capture_job job) override {
    done_ = true;
    job.seq = seq_;
    job.reply = reply();
    t_.hand_off(seq_, t_.captures_, std::move(job));
  }

  void input(std::function<tool_result(input_context&, job_control&)> run,
             bool read_only) override {
    done_ = true;
    if (in_batch_) f().batch->leased = true;
    input_job job;
    job.seq = seq_;
    job.reply = reply();
    job.run = std::move(run);
    job.lease = in_batch_ ? seq_ : 0;
    job.read_only = read_only;
    // Coordinates mapped through the session are valid only on the server
    // it was captured from: the actor checks again when the job runs.
    if (session_read_) {
      if (auto s = t_.ctx_.coords.live()) job.generation = s->generation;
    }
    t_.hand_off(seq_, t_.actor_, std::move(job));
  }

  void desktop(std::unique_ptr<desktop_op> op) override {
    done_ = true;
    desktop_job job;
    job.seq = seq_;
    job.reply = reply();
    job.op = std::move(op);
    t_.hand_off(seq_, t_.desktop_, std::move(job));
  }

  void a11y(std::unique_ptr<a11y_op> op) override {
#if CU_HAVE_A11Y
    if (!t_.a11y_) return fail("the a11y toolset is not on");
    done_ = true;
    a11y_job job;
    job.seq = seq_;
    job.reply = reply();
    job.op = std::move(op);
    t_.hand_off(seq_, *t_.a11y_, std::move(job));
#else
    (void)op;
    fail("this server was built without the a11y toolset (libatspi2.0-dev)");
#endif
  }

  void room(toolset t, std::function<void(job_header)> post) override {
    room_executor* where = t_.room_of(t);
    if (where == nullptr) return fail("that toolset is not on");
    done_ = true;
    job_header h;
    h.seq = seq_;
    h.reply = reply();
    f().at = where;
    post(std::move(h));
  }

  room_service* service(toolset t) override {
    for (auto& [id, s] : t_.ctx_.services) {
      if (id == t) return s;
    }
    return nullptr;
  }

  void then(std::function<void(tool_call&, tool_result)> next) override {
    call_table::call_state& fl = f();
    fl.next = std::move(next);
    fl.next_def = &def_;
  }

  void finish_after(double seconds, tool_result r) override {
    if (seconds <= 0) return finish(std::move(r));
    done_ = true;
    expect_seconds(seconds);
    call_table* t = &t_;
    uint64_t seq = seq_;
    f().at = &t_.waits_;
    t_.waits_.start(seq, uint64_t(std::llround(seconds * 1000)),
                    [t, seq, r = std::move(r)]() mutable { t->deliver(seq, std::move(r)); });
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
  damage_monitor* damage() override { return &t_.ctx_.pool.damage(); }
  std::optional<rect> display_area() const override { return t_.ctx_.coords.area(); }
  const std::string& x_display() const override { return t_.ctx_.cfg.display; }
  session_grants& grants() override { return t_.ctx_.grants; }
  grant_policy& policy() override { return t_.ctx_.policy; }
  toolset_mask toolsets() const override { return t_.ctx_.cfg.toolsets_on; }
  std::string_view tool_name() const override { return def_.name; }

  void expect_seconds(double seconds) override {
    // A batch's progress counts its steps instead.
    if (!in_batch_) t_.progress_.set_total(seq_, seconds);
  }

  bool done() const { return done_; }
  // A batch step's result when it finished at once.
  std::optional<tool_result> take_sync() { return std::move(sync_); }

 private:
  call_table::call_state& f() { return t_.calls_.at(seq_); }
  // A batch step's completion, or a step with a further one chained,
  // carries its result, not an answer line.
  // A chained step's result comes back to the loop, which answers with the
  // last step's: the id and era still go along, so a step that sizes its
  // answer against CU_MAX_RESULT_BYTES sizes the line it will be.
  reply_to reply() {
    if (in_batch_) return reply_to::result();
    if (f().next) return reply_to{reply_to::form::result, f().id_json, f().era};
    reply_to to = reply_to::line(f().id_json, f().era);
    to.keep_result = t_.ctx_.trace != nullptr;
    return to;
  }

  call_table& t_;
  uint64_t seq_;
  const tool_def& def_;
  bool in_batch_;
  bool done_ = false;
  mutable bool session_read_ = false;  // The handler mapped coordinates.
  std::optional<tool_result> sync_;
};

call_table::call_table(call_context ctx)
    : ctx_(std::move(ctx)),
      batches_(*this),
      watches_(ctx_.loop, ctx_.pool.damage()),
      progress_(ctx_.loop, ctx_.out, [this](uint64_t seq) { return progress_message(seq); }),
      captures_(ctx_.loop, ctx_.cfg, ctx_.pool, ctx_.out),
      actor_(ctx_.actor),
      desktop_(ctx_.desk),
      waits_(ctx_.loop, "a wait"),
      pauses_(ctx_.loop, "a batch's pause"),
      parking_(ctx_.loop, "the wait for a screenshot sent before it"),
      watching_(watches_) {
  empty_args_ = empty_parser_.parse(std::string_view("{}")).get_object().value();
#if CU_HAVE_A11Y
  if (ctx_.ax != nullptr) a11y_.emplace(*ctx_.ax);
#endif
  for (auto& [id, service] : ctx_.services) {
    std::string name = "the ";
    for (const toolset_def& set : all_toolsets()) {
      if (set.id == id) name += set.name;
    }
    rooms_.push_back(std::make_unique<room_executor>(*service, name + " toolset's thread"));
  }
}

room_executor* call_table::room_of(toolset t) {
  for (size_t i = 0; i < ctx_.services.size(); ++i) {
    if (ctx_.services[i].first == t) return rooms_[i].get();
  }
  return nullptr;
}

void call_table::call(std::string_view id_json, const std::optional<object>& params,
                      rpc_era era) {
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
  uint64_t seq = accept(id_json, std::move(token), era);
  // Kept only when its end will be logged: no copy per call otherwise.
  if (log_wanted(log_level::debug)) calls_.at(seq).tool = std::string(name.substr(0, 64));
  object args = empty_args_;
  element a;
  const bool sent_args =
      params->at_key("arguments").get(a) == simdjson::SUCCESS && !a.is_null();
  if (ctx_.trace != nullptr) ctx_.trace->call_started(seq, id_json, name, sent_args ? &a : nullptr);
  if (sent_args) {
    if (!a.is_object()) {
      answer(seq, tool_result::failure("Invalid argument \"arguments\": expected an object"));
      return;
    }
    args = a;
  }
  const tool_def* def = find_tool(name, ctx_.cfg.toolsets_on);
  if (def == nullptr) {
    answer(seq, tool_result::failure(unknown_tool_message(name)));
    return;
  }
  if (must_park(seq, *def)) return park(seq, *def, args);
  if (def->makes_session) session_makers_.insert(seq);
  dispatch(seq, *def, args, false);
}

namespace {

// Whether def's arguments may be in the screenshot's image space: a batch's
// steps may be.
bool maps_coordinates(const tool_def& def) {
  return def.image_coordinates || def.name == "computer_batch";
}

}  // namespace

bool call_table::must_park(uint64_t seq, const tool_def& def) const {
  if (!maps_coordinates(def) && def.runs_on != executor::input) return false;
  if (!parked_.empty()) return true;
  return maps_coordinates(def) && !session_makers_.empty() && *session_makers_.begin() < seq;
}

void call_table::park(uint64_t seq, const tool_def& def, object args) {
  log(log_level::debug, "call %llu (%.*s) waits for the screenshot sent before it",
      static_cast<unsigned long long>(seq), int(def.name.size()), def.name.data());
  parked_.push_back({seq, &def, simdjson::minify(args)});
  parked_bytes_ += parked_.back().args.size();
  calls_.at(seq).at = &parking_;
  const double bound_ms = ctx_.cfg.screenshot_delay_secs * 1000.0 + double(kParkSlackMs);
  parking_.start(seq, uint64_t(bound_ms), [this, seq] { run_parked(seq); });
}

void call_table::run_parked(uint64_t forced) {
  // A call run here that ends at once ends through complete(), which asks
  // again: the loop below goes on instead, so thousands of parked calls
  // refused at once do not nest thousands of frames.
  if (running_parked_) return;
  running_parked_ = true;
  struct reset {
    bool& flag;
    ~reset() { flag = false; }
  } done{running_parked_};
  while (!parked_.empty()) {
    parked_call& p = parked_.front();
    auto it = calls_.find(p.seq);
    if (it == calls_.end() || it->second.cancelled) {
      parked_bytes_ -= p.args.size();
      parked_.pop_front();
      continue;
    }
    const bool waits = maps_coordinates(*p.def) && !session_makers_.empty() &&
                       *session_makers_.begin() < p.seq;
    if (waits && p.seq != forced) return;
    if (waits) {
      log(log_level::warn,
          "call %llu (%.*s) waited its bound for the screenshot sent before it; it runs "
          "against the coordinate session there is",
          static_cast<unsigned long long>(p.seq), int(p.def->name.size()), p.def->name.data());
    }
    parked_call run = std::move(p);
    parked_bytes_ -= run.args.size();
    parked_.pop_front();
    parking_.stop(run.seq);
    it->second.at = nullptr;
    object args;
    if (parked_parser_.parse(run.args).get(args) != simdjson::SUCCESS) {
      answer(run.seq, tool_result::failure("internal error"));
      continue;
    }
    if (run.def->makes_session) session_makers_.insert(run.seq);
    dispatch(run.seq, *run.def, args, false);
  }
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
  f.at = nullptr;
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

uint64_t call_table::accept(std::string_view id_json, std::string progress_token, rpc_era era) {
  uint64_t seq = ++next_seq_;
  call_state f;
  f.id_json = std::string(id_json);
  f.era = era;
  f.started = std::chrono::steady_clock::now();
  f.group = ctx_.out.join();
  if (!progress_token.empty()) progress_.start(seq, std::move(progress_token), f.started);
  calls_.emplace(seq, std::move(f));
  return seq;
}

void call_table::answer(uint64_t seq, std::optional<tool_result> r) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  if (!r) return complete(seq, std::string(), false);
  complete(seq, render_tool_response(it->second.id_json, *r, it->second.era), r->is_error, &*r);
}

void call_table::complete(uint64_t seq, std::string line, bool is_error, const tool_result* r) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  call_state& f = it->second;
  const bool answered = !line.empty(), cancelled = f.cancelled, frame = f.traced_frame;
  progress_.stop(seq);
  watches_.stop(seq);
  std::function<void()> written;
  if (!f.tool.empty()) {
    log_call_end(f, line, is_error);
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
  session_makers_.erase(seq);
  ctx_.out.answer(std::move(group), std::move(line), std::move(written));
  // Recorded once the answer is on its way: the record's copy is not the
  // caller's wait.
  if (ctx_.trace != nullptr) ctx_.trace->call_ended(seq, answered ? r : nullptr, cancelled, frame);
  // Calls waiting for this screenshot (or behind this call) may run now.
  if (!parked_.empty()) run_parked();
  ctx_.on_call_end();
}

// At debug, every tool call's end: how long it took, how it ended and how
// big its answer was.
void call_table::log_call_end(const call_state& f, std::string_view line, bool is_error) const {
  using namespace std::chrono;
  const double ms = duration<double, std::milli>(steady_clock::now() - f.started).count();
  std::string_view outcome = "ok";
  if (f.cancelled) {
    outcome = "cancelled, not answered";
  } else if (line.empty()) {
    outcome = "not answered";
  } else if (is_error) {
    outcome = "isError";
  }
  log(log_level::debug, "tools/call %s (id %.*s): %.*s in %.1f ms, %zu bytes", f.tool.c_str(),
      int(std::min<size_t>(f.id_json.size(), 64)), f.id_json.data(), int(outcome.size()),
      outcome.data(), ms, line.size());
}

void call_table::deliver(uint64_t seq, std::optional<tool_result> r) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return;
  it->second.at = nullptr;
  // The call's (or the step's) work is over: so is any watch of it.
  watches_.stop(seq);
  it->second.until.reset();
  if (it->second.batch) return batches_.on_result(seq, std::move(r));
  answer(seq, std::move(r));
}

void call_table::on_completion(completion& c) {
  if (captures_.on_completion(c)) return;  // Handed on: not the end yet.
  auto it = calls_.find(c.seq);
  bool live = it != calls_.end() && !it->second.cancelled;
  // A cancelled screenshot was never seen by the model, so it must not
  // move the coordinate session.
  if (live && c.session) ctx_.coords.adopt(*c.session);
  if (live && c.display_area) ctx_.coords.set_area(*c.display_area);
  if (c.was_input) captures_.note_input();
  if (it == calls_.end()) return;
  call_state& f = it->second;
  if (c.was_input || (c.was_capture && !c.handed_on)) f.traced_frame = true;
  if (f.next) return run_next(c.seq, std::move(c.result));
  if (f.until && c.was_capture) {
    // The look is back: the call waits on the screen again.
    if (c.result) f.at = &watching_;
    return f.until->looked(std::move(c.result));
  }
  if (f.batch) {
    deliver(c.seq, std::move(c.result));
  } else {
    complete(c.seq, std::move(c.line), c.is_error, c.traced.get());
  }
}

void call_table::capture_for_batch(uint64_t seq) {
  capture_job job;
  job.seq = seq;  // The batch's own seq; the result comes back as it is.
  job.reply = reply_to::result();
  job.what = capture_job::kind::screenshot;
  job.area = ctx_.coords.area();
  // A window's session stays that window's: the batch's looks are of it.
  if (auto s = ctx_.coords.live()) job.window = s->window;
  hand_off(seq, captures_, std::move(job));
}

void call_table::pause_batch(uint64_t seq, uint64_t ms) {
  calls_.at(seq).at = &pauses_;
  pauses_.start(seq, ms, [this, seq] {
    auto it = calls_.find(seq);
    if (it == calls_.end()) return;
    it->second.at = nullptr;
    batches_.resume(seq);
  });
}

void call_table::finish_batch(uint64_t seq, std::optional<tool_result> r) {
  call_state& f = calls_.at(seq);
  std::unique_ptr<batch_run> b = std::move(f.batch);
  // Other callers' input may run again.
  if (b->leased) ctx_.actor.release_lease(seq);
  answer(seq, std::move(r));
}

void call_table::cancel(std::string_view id_json) {
  for (auto& [s, f] : calls_) {
    if (f.id_json != id_json || f.cancelled) continue;
    uint64_t seq = s;
    f.cancelled = true;
    progress_.stop(seq);
    // Nothing runs between a call's steps (at is null); an executor either
    // ends the work at once, or sends back the completion that ends it.
    if (f.at != nullptr && f.at->cancel(seq)) deliver(seq, std::nullopt);
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
  std::vector<uint64_t> waits, pauses;
  for (auto& [seq, f] : calls_) {
    if (f.cancelled) continue;
    if (f.until && f.until->looking()) {
      // Ends when its look comes back, unless that look is the answer.
      f.until->end_after_look("stdin closed, the server is stopping");
      continue;
    }
    if (f.at == &watching_ || f.at == &waits_) waits.push_back(seq);
    if (f.at == &pauses_) pauses.push_back(seq);
  }
  // A batch pausing between steps would only wake to start no further step
  // (none starts once stdin has closed): end the pause now.
  for (uint64_t seq : pauses) {
    auto it = calls_.find(seq);
    if (it == calls_.end()) continue;
    pauses_.stop(seq);
    it->second.at = nullptr;
    batches_.resume(seq);
  }
  for (uint64_t seq : waits) {
    auto it = calls_.find(seq);
    if (it == calls_.end()) continue;
    waits_.stop(seq);
    deliver(seq, tool_result::failure(
                     str_cat("wait ended early after ",
                             elapsed_text(std::chrono::steady_clock::now() - it->second.started),
                             "s: stdin closed, the server is stopping")));
  }
}

std::string call_table::progress_message(uint64_t seq) const {
  auto it = calls_.find(seq);
  if (it == calls_.end() || !it->second.batch) return {};
  return batch_runner::progress_message(*it->second.batch);
}

void call_table::start_watch(uint64_t seq, watch_spec spec) {
  calls_.at(seq).at = &watching_;
  screen_watches::hooks h;
  h.armed = [this, seq] {
    log(log_level::debug, "call %llu: watching the screen", static_cast<unsigned long long>(seq));
    progress_.send(seq, "watching");
  };
  h.done = [this, seq](tool_result r) { deliver(seq, std::move(r)); };
  watches_.start(seq, std::move(spec), std::move(h));
}

void call_table::start_until(uint64_t seq, capture_job job, bool appear, double timeout_secs) {
  call_state& f = calls_.at(seq);
  f.at = &watching_;
  f.until = std::make_unique<find_until>(*this, seq, std::move(job), appear, timeout_secs,
                                         f.started);
  watch_spec spec = f.until->watch();
  // Each hook finds the run again: the call may have ended meanwhile.
  auto run = [this, seq]() -> find_until* {
    auto it = calls_.find(seq);
    return it == calls_.end() ? nullptr : it->second.until.get();
  };
  screen_watches::hooks h;
  h.armed = [run] {
    if (find_until* u = run()) u->armed();
  };
  h.touched = [run](const rect&) {
    if (find_until* u = run()) u->touched();
  };
  h.timed_out = [run] {
    if (find_until* u = run()) u->timed_out();
  };
  h.done = [run](tool_result r) {
    if (find_until* u = run()) u->watch_ended(std::move(r));
  };
  watches_.start(seq, std::move(spec), std::move(h));
}

void call_table::look(uint64_t seq, capture_job job) {
  job.seq = seq;
  job.reply = reply_to::result();  // The look comes back as it is, to the run.
  hand_off(seq, captures_, std::move(job));
}

}  // namespace cu
