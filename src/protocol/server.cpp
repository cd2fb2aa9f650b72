#include "protocol/server.h"

#include <unistd.h>

#include <cmath>
#include <csignal>

#include "config.h"
#include "protocol/json_writer.h"
#include "protocol/tool_result.h"
#include "tools/registry.h"
#include "tools/tool_call.h"
#include "util/log.h"

namespace cu {

const char* const kProtocolVersions[4] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                          "2025-11-25"};

using simdjson::dom::element;
using simdjson::dom::object;

// A tools/call being handled on the loop thread.
class loop_tool_call final : public tool_call {
 public:
  loop_tool_call(server& s, uint64_t seq, std::string_view id_json, const tool_def& def,
                 object arguments)
      : tool_call(arguments), s_(s), seq_(seq), id_json_(id_json), def_(def) {}

  void finish(tool_result r) override {
    done_ = true;
    s_.complete(seq_, render_tool_response(id_json_, r));
  }

  void capture(capture_job job) override {
    done_ = true;
    job.seq = seq_;
    job.id_json = std::string(id_json_);
    s_.submit_capture(seq_, std::move(job));
  }

  void input(std::function<tool_result(input_context&, job_control&)> run) override {
    done_ = true;
    s_.inflight_[seq_].on_actor = true;
    s_.actor_.post(input_job{seq_, std::string(id_json_), std::move(run)});
  }

  void desktop(std::unique_ptr<desktop_op> op) override {
    done_ = true;
    s_.inflight_[seq_].on_desktop = true;
    s_.desktop_.post(seq_, std::string(id_json_), std::move(op));
  }

  std::optional<coord_session> session() const override { return s_.session_; }
  std::optional<rect> display_area() const override { return s_.area_; }
  const std::string& x_display() const override { return s_.cfg_.display; }
  session_grants& grants() override { return s_.grants_; }
  std::string_view tool_name() const override { return def_.name; }
  bool done() const { return done_; }

 private:
  server& s_;
  uint64_t seq_;
  std::string_view id_json_;
  const tool_def& def_;
  bool done_ = false;
};

namespace {

// A capture waiting out CU_SCREENSHOT_DELAY after input, so the screen has
// settled before it is grabbed.
struct settle_wait {
  uv_timer_t timer;
  server* owner;
  uint64_t seq;
  capture_job job;
};

// Parser capacity kept between frames; requests are normally tiny.
constexpr size_t kParserKeepBytes = size_t{1} << 20;

bool is_valid_id(element id) { return id.is_string() || id.is_int64() || id.is_uint64(); }

}  // namespace

server::server(uv_loop_t* loop, config cfg, input_guard guard)
    : loop_(loop),
      cfg_(std::move(cfg)),
      splitter_(cfg_.max_frame_bytes),
      tools_list_json_(tools_list_json(computer_tools())),
      in_(
          loop, [this](const char* d, size_t n) { on_stdin(d, n); },
          [this](int status) { on_stdin_end(status); }),
      out_(loop, [this](int) { begin_stop(stop_reason::broken_pipe); }),
      completions_(loop, [this](std::vector<completion>& b) { on_completions(b); }),
      pool_(capture_config{cfg_.display, cfg_.save_dir, cfg_.capture_workers}, completions_),
      actor_(input_config{cfg_.display, cfg_.idle_release_secs, cfg_.type_delay_ms},
             std::move(guard), completions_),
      desktop_(cfg_.display, completions_),
      last_request_(std::chrono::steady_clock::now()) {
  empty_args_ = empty_parser_.parse(std::string_view("{}")).get_object().value();
}

server::~server() {
  pool_.stop();
  actor_.stop();
  desktop_.stop();
}

int server::start() {
  if (int err = out_.start(STDOUT_FILENO)) return err;
  if (int err = in_.start(STDIN_FILENO)) return err;
  auto watch = [this](uv_signal_t* h, int signum) {
    uv_signal_init(loop_, h);
    h->data = this;
    uv_signal_start(
        h,
        [](uv_signal_t* s, int n) {
          auto* self = static_cast<server*>(s->data);
          if (self->stopping_ && n != SIGHUP) {
            log(log_level::warn, "second signal %d while stopping; exiting now", n);
            _exit(0);
          }
          log(log_level::info, "signal %d: stopping", n);
          self->begin_stop(stop_reason::signal);
        },
        signum);
  };
  watch(&sigterm_, SIGTERM);
  watch(&sigint_, SIGINT);
  watch(&sighup_, SIGHUP);
  log(log_level::info, "serving on stdio; display %s, %d capture workers",
      cfg_.display.c_str(), pool_.workers());
  return 0;
}

void server::on_stdin(const char* data, size_t n) {
  splitter_.feed(
      data, n, [this](std::string_view line) { on_frame(line); },
      [this] {
        send(render_error("null", rpc_error::invalid_request,
                          "Invalid Request: frame longer than " +
                              std::to_string(cfg_.max_frame_bytes) + " bytes"));
      });
}

void server::on_stdin_end(int status) {
  splitter_.finish([this](std::string_view line) { on_frame(line); });
  if (status != 0) log(log_level::warn, "stdin read failed: %s", uv_strerror(status));
  begin_stop(stop_reason::eof);
}

void server::on_frame(std::string_view line) {
  if (stopping_) return;
  actor_.note_activity();
  // The idle release also ends the session's grants (the actor releases
  // held input on its own timer).
  auto now = std::chrono::steady_clock::now();
  if (cfg_.idle_release_secs > 0 && !grants_.empty() &&
      now - last_request_ >= std::chrono::duration<double>(cfg_.idle_release_secs)) {
    log(log_level::info, "no request for %gs: clearing the session's grants",
        cfg_.idle_release_secs);
    grants_ = session_grants{};
  }
  last_request_ = now;
  // The parser keeps buffers as large as the largest document it has seen;
  // after a huge frame (a long write_clipboard, say), give that memory back.
  if (parser_.capacity() > kParserKeepBytes && line.size() <= kParserKeepBytes) {
    parser_ = simdjson::dom::parser();
  }
  element doc;
  if (auto err = parser_.parse(line.data(), line.size()).get(doc)) {
    send(render_error("null", rpc_error::parse_error,
                      std::string("Parse error: ") + simdjson::error_message(err)));
    return;
  }
  if (!doc.is_object()) {
    send(render_error("null", rpc_error::invalid_request,
                      doc.is_array() ? "Invalid Request: batch arrays are not supported"
                                     : "Invalid Request: expected a JSON-RPC 2.0 object"));
    return;
  }
  object msg = doc;
  element id;
  bool has_id = msg.at_key("id").get(id) == simdjson::SUCCESS;
  std::string id_json;
  if (has_id) {
    if (!is_valid_id(id)) {
      send(render_error("null", rpc_error::invalid_request,
                        "Invalid Request: id must be a string or an integer"));
      return;
    }
    id_json = simdjson::minify(id);
  }
  std::string_view jsonrpc, method;
  bool has_method = msg.at_key("method").get(method) == simdjson::SUCCESS;
  if (!has_method && has_id &&
      (msg.at_key("result").error() == simdjson::SUCCESS ||
       msg.at_key("error").error() == simdjson::SUCCESS)) {
    return;  // A response to a request we never send; nothing to do.
  }
  if (msg.at_key("jsonrpc").get(jsonrpc) != simdjson::SUCCESS || jsonrpc != "2.0" ||
      !has_method) {
    if (!has_id && has_method) return;  // A malformed notification: no response, ever.
    send(render_error(has_id ? id_json : "null", rpc_error::invalid_request,
                      has_method ? "Invalid Request: \"jsonrpc\" must be \"2.0\""
                                 : "Invalid Request: \"method\" must be a string"));
    return;
  }
  element params;
  bool has_params = msg.at_key("params").get(params) == simdjson::SUCCESS;
  if (has_params && !params.is_object() && !params.is_array()) {
    if (has_id) {
      send(render_error(id_json, rpc_error::invalid_params,
                        "Invalid params: \"params\" must be an object"));
    }
    return;
  }
  if (has_id) {
    on_request(id_json, method, params, has_params);
  } else {
    on_notification(method, params);
  }
}

void server::on_request(std::string_view id_json, std::string_view method, element params,
                        bool has_params) {
  if (method == "tools/call") {
    call_tool(id_json, params, has_params);
  } else if (method == "ping") {
    send(render_result(id_json, "{}"));
  } else if (method == "tools/list") {
    send(render_result(id_json, tools_list_json_));
  } else if (method == "initialize") {
    send(render_result(id_json, initialize_result(params, has_params)));
  } else {
    send(render_error(id_json, rpc_error::method_not_found,
                      "Method not found: " + std::string(method)));
  }
}

void server::on_notification(std::string_view method, element params) {
  if (method == "notifications/cancelled") {
    element request_id;
    if (params.is_object() &&
        object(params).at_key("requestId").get(request_id) == simdjson::SUCCESS &&
        is_valid_id(request_id)) {
      cancel(simdjson::minify(request_id));
    }
  }
  // notifications/initialized and anything else: nothing to do.
}

std::string server::initialize_result(element params, bool has_params) const {
  const char* version = kProtocolVersions[3];
  std::string_view requested;
  if (has_params && params.is_object() &&
      object(params).at_key("protocolVersion").get(requested) == simdjson::SUCCESS) {
    for (const char* v : kProtocolVersions) {
      if (requested == v) version = v;
    }
  }
  std::string out;
  json_writer w(out);
  w.begin_object().key("protocolVersion").string(version);
  w.key("capabilities").begin_object().key("tools").begin_object();
  w.key("listChanged").boolean(false).end_object().end_object();
  w.key("serverInfo").begin_object().key("name").string("computer-use");
  w.key("version").string(CU_VERSION).end_object();
  w.end_object();
  return out;
}

void server::call_tool(std::string_view id_json, element params, bool has_params) {
  std::string_view name;
  if (!has_params || !params.is_object() ||
      object(params).at_key("name").get(name) != simdjson::SUCCESS) {
    send(render_error(id_json, rpc_error::invalid_params,
                      "Invalid params: tools/call needs a string \"name\""));
    return;
  }
  uint64_t seq = accept(id_json);
  object args = empty_args_;
  element a;
  if (object(params).at_key("arguments").get(a) == simdjson::SUCCESS && !a.is_null()) {
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
    std::string msg = "Unknown tool: ";
    append_json_string(msg, name);
    msg += ". tools/list names the available tools.";
    complete(seq, render_tool_response(id_json, tool_result::failure(std::move(msg))));
    return;
  }
  loop_tool_call call(*this, seq, id_json, *def, args);
  def->handler(call);
  if (!call.done()) {
    log(log_level::error, "handler for %s finished without a result", def->name.data());
    complete(seq, render_tool_response(id_json, tool_result::failure("internal error")));
  }
}

uint64_t server::accept(std::string_view id_json) {
  uint64_t seq = ++next_seq_;
  inflight_.emplace(seq, inflight{std::string(id_json)});
  return seq;
}

void server::complete(uint64_t seq, std::string line) {
  auto it = inflight_.find(seq);
  if (it == inflight_.end()) return;
  if (!it->second.cancelled) send(std::move(line));
  inflight_.erase(it);
  maybe_finish_stop();
}

void server::on_completions(std::vector<completion>& batch) {
  for (completion& c : batch) {
    auto it = inflight_.find(c.seq);
    bool live = it != inflight_.end() && !it->second.cancelled;
    // A cancelled screenshot was never seen by the model, so it must not
    // move the coordinate session.
    if (live && c.session) session_ = *c.session;
    if (live && c.display_area && *c.display_area != area_) {
      // Coordinates the model holds refer to the old area: it must look
      // again before it can click.
      area_ = *c.display_area;
      session_.reset();
    }
    if (c.was_input) last_input_ = std::chrono::steady_clock::now();
    complete(c.seq, std::move(c.line));
  }
}

void server::submit_capture(uint64_t seq, capture_job job) {
  if (cfg_.screenshot_delay_secs > 0 && last_input_) {
    auto ready = *last_input_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(cfg_.screenshot_delay_secs));
    auto now = std::chrono::steady_clock::now();
    if (ready > now) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(ready - now).count();
      auto* w = new settle_wait{{}, this, seq, std::move(job)};
      uv_timer_init(loop_, &w->timer);
      w->timer.data = w;
      inflight_[seq].settle = &w->timer;
      uv_timer_start(
          &w->timer,
          [](uv_timer_t* t) {
            auto* w = static_cast<settle_wait*>(t->data);
            server* self = w->owner;
            auto it = self->inflight_.find(w->seq);
            if (it != self->inflight_.end()) it->second.settle = nullptr;
            self->pool_.submit(std::move(w->job));
            uv_close(reinterpret_cast<uv_handle_t*>(t),
                     [](uv_handle_t* h) { delete static_cast<settle_wait*>(h->data); });
          },
          uint64_t(ms), 0);
      return;
    }
  }
  pool_.submit(std::move(job));
}

void server::cancel(std::string_view id_json) {
  for (auto& [seq, f] : inflight_) {
    if (f.id_json != id_json || f.cancelled) continue;
    f.cancelled = true;
    if (f.settle != nullptr) {
      // It never reached the pool: end it here, silently.
      uv_close(reinterpret_cast<uv_handle_t*>(f.settle),
               [](uv_handle_t* h) { delete static_cast<settle_wait*>(h->data); });
      f.settle = nullptr;
      complete(seq, std::string());
    } else if (f.on_desktop) {
      desktop_.cancel(seq);
    } else if (f.on_actor) {
      // The actor stops it (a hold releases its keys at once) and sends
      // back an empty completion, which ends the request silently.
      actor_.cancel(seq);
    }
    return;  // complete() may have changed the table; ids are unique anyway.
  }
}

void server::send(std::string line) { out_.write(std::move(line)); }

void server::begin_stop(stop_reason why) {
  if (!stopping_) {
    stopping_ = true;
    in_.stop();
  }
  if (why == stop_reason::eof) {
    // Nobody can ask for a release any more: end holds now rather than at
    // their deadlines (they still answer, early).
    actor_.end_holds();
  } else {
    // Nobody will read the answers, or we were told to stop now: drop them.
    std::vector<std::string> ids;
    for (auto& [seq, f] : inflight_) {
      if (!f.cancelled) ids.push_back(f.id_json);
    }
    for (const std::string& id : ids) cancel(id);
  }
  maybe_finish_stop();
}

void server::maybe_finish_stop() {
  if (!stopping_ || finished_ || !inflight_.empty()) return;
  finished_ = true;
  pool_.stop();
  actor_.stop();
  desktop_.stop();
  completions_.close();
  for (uv_signal_t* s : {&sigterm_, &sigint_, &sighup_}) {
    uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
  }
  out_.close([this] { uv_stop(loop_); });
}

}  // namespace cu
