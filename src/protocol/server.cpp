#include "protocol/server.h"

#include <unistd.h>

#include <cmath>
#include <csignal>

#include "build_config.h"
#include "protocol/json_diagnose.h"
#include "core/json_writer.h"
#include "core/tool_result.h"
#include "desktop/app_lookup.h"
#include "input/marker.h"
#include "toolsets/registry.h"
#include "toolsets/tool_call.h"
#include "util/log.h"
#if CU_HAVE_A11Y
#include "a11y/a11y.h"
#else
namespace cu {
class a11y {};  // Never made without libatspi.
}  // namespace cu
#endif

namespace cu {

const char* const kProtocolVersions[4] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                          "2025-11-25"};

using simdjson::dom::element;
using simdjson::dom::object;

namespace {

// How long a client may keep server/discover's and tools/list's answers:
// neither changes while the process lives. "private": the list depends on
// this server's configuration (CU_TOOLSETS), so it is not to be shared.
constexpr int64_t kCacheTtlMs = 3600000;

void write_cache_members(json_writer& w) {
  w.key("ttlMs").number(kCacheTtlMs).key("cacheScope").string("private");
}

// tools/list's answer in the 2026-07-28 shape: the same tools, in a result
// that says what it is and how long it keeps.
std::string modern_tools_list(std::string_view legacy) {
  simdjson::dom::parser parser;
  simdjson::dom::element tools;
  std::string out;
  json_writer w(out);
  w.begin_object();
  write_era_members(w, rpc_era::modern);
  write_cache_members(w);
  if (parser.parse(legacy).at_key("tools").get(tools) == simdjson::SUCCESS) {
    w.key("tools").raw(simdjson::minify(tools));
  }
  w.end_object();
  return out;
}

// What a request's _meta says of its era. A request that names no protocol
// version there is legacy (it came after initialize, or without it as this
// server has always allowed). One that names one must also declare its
// capabilities (MCP 2026-07-28, basic/index: both are required, and a
// request missing either is answered -32602); it is modern when it names
// 2026-07-28, legacy when it names a version initialize negotiates, and
// refused with -32022 otherwise. error: the answer when it is refused.
struct era_check {
  rpc_era era = rpc_era::legacy;
  bool declared = false;  // _meta named a version and capabilities.
  std::string error;
};

std::string supported_versions_json() {
  std::string out;
  json_writer w(out);
  w.begin_array();
  for (const char* v : kProtocolVersions) w.string(v);
  w.string(kModernProtocolVersion).end_array();
  return out;
}

era_check check_era(std::string_view id_json, const std::optional<object>& params) {
  static constexpr std::string_view kVersionKey = "io.modelcontextprotocol/protocolVersion";
  static constexpr std::string_view kCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
  element meta_el;
  if (!params || params->at_key("_meta").get(meta_el) != simdjson::SUCCESS) return {};
  // MCP's _meta is an object wherever it appears: null, an array or a
  // string is a malformed request, not a legacy one.
  if (!meta_el.is_object()) {
    return era_check{rpc_era::legacy, false,
                     render_error(id_json, rpc_error::invalid_params,
                                  "Invalid params: _meta must be an object")};
  }
  object meta = meta_el;
  element version_el, capabilities, info, level;
  const bool has_version = meta.at_key(kVersionKey).get(version_el) == simdjson::SUCCESS;
  const bool has_capabilities = meta.at_key(kCapabilitiesKey).get(capabilities) == simdjson::SUCCESS;
  if (!has_version && !has_capabilities) return {};
  auto refuse = [&](std::string message) {
    return era_check{rpc_era::legacy, false,
                     render_error(id_json, rpc_error::invalid_params, "Invalid params: " + message)};
  };
  std::string_view version;
  if (!has_version || version_el.get(version) != simdjson::SUCCESS) {
    return refuse("_meta needs a string \"io.modelcontextprotocol/protocolVersion\"");
  }
  if (!has_capabilities || !capabilities.is_object()) {
    return refuse("_meta needs an object \"io.modelcontextprotocol/clientCapabilities\"");
  }
  if (meta.at_key("io.modelcontextprotocol/clientInfo").get(info) == simdjson::SUCCESS &&
      !info.is_object()) {
    return refuse("_meta \"io.modelcontextprotocol/clientInfo\" must be an object");
  }
  if (meta.at_key("io.modelcontextprotocol/logLevel").get(level) == simdjson::SUCCESS &&
      !level.is_string()) {
    return refuse("_meta \"io.modelcontextprotocol/logLevel\" must be a string");
  }
  if (version == kModernProtocolVersion) return {rpc_era::modern, true, {}};
  for (const char* v : kProtocolVersions) {
    if (version == v) return {rpc_era::legacy, true, {}};
  }
  std::string data;
  json_writer w(data);
  w.begin_object().key("supported").raw(supported_versions_json());
  w.key("requested").string(version).end_object();
  return {rpc_era::legacy, false,
          render_error(id_json, rpc_error::unsupported_protocol_version,
                       "Unsupported protocol version", data)};
}

bool a11y_on([[maybe_unused]] const config& cfg) {
#if CU_HAVE_A11Y
  // screenshot_marks reads the accessibility trees on the same thread.
  return has(cfg.toolsets_on, toolset::a11y) || has(cfg.toolsets_on, toolset::marks);
#else
  return false;
#endif
}

// The a11y thread, made only when the a11y toolset is on (it connects to
// the accessibility bus at its first job, not here).
std::unique_ptr<a11y> make_a11y([[maybe_unused]] const config& cfg,
                                [[maybe_unused]] completion_queue& done) {
#if CU_HAVE_A11Y
  if (a11y_on(cfg)) return std::make_unique<a11y>(cfg.display, done);
#endif
  return nullptr;
}

// The rooms' services, started for the toolsets that are on.
std::vector<std::pair<toolset, std::unique_ptr<room_service>>> start_room_services(
    toolset_mask on, const config& cfg, completion_queue& done, guard_devices& guard) {
  room_start with{cfg, done, guard};
  return start_services(on, with);
}

std::vector<std::pair<toolset, room_service*>> service_pointers(
    const std::vector<std::pair<toolset, std::unique_ptr<room_service>>>& services) {
  std::vector<std::pair<toolset, room_service*>> out;
  for (const auto& [id, service] : services) out.emplace_back(id, service.get());
  return out;
}

// The longest line the kept parser takes; requests are normally tiny.
constexpr size_t kParserKeepBytes = size_t{1} << 20;

// The flight recorder when CU_TRACE_DIR (or --trace) names a directory.
// One that cannot be written is said once on stderr, and the server runs
// untraced: a recorder is a witness, and must not take the service down.
std::unique_ptr<recorder> open_trace(const config& cfg, server_generation& generation,
                                     const grant_policy* grants) {
  if (cfg.trace_dir.empty()) return nullptr;
  trace_config tc = trace_config_of(cfg);
  tc.grants = grants;
  auto r = recorder::open(std::move(tc), generation);
  if (!r) {
    log(log_level::warn, "trace: %s; running without a trace", r.err().message.c_str());
    return nullptr;
  }
  log(log_level::info, "trace: recording to %s", (*r)->path().c_str());
  return std::move(*r);
}

// The grants' policy from the configuration; desktop entries' names are
// read only when something is ever refused or hidden.
std::unique_ptr<grant_policy> make_policy(const config& cfg, const operator_grants& op) {
  const grants_mode mode = cfg.grants == "enforce" ? grants_mode::enforce : grants_mode::open;
  std::set<std::string> denied = op.denied;
  std::shared_ptr<const desktop_aliases> aliases;
  if (mode == grants_mode::enforce || !denied.empty() || op.allow_list) {
    aliases = read_desktop_aliases(launch_env::from_environment());
    log(log_level::info, "grants: %s%s%s%s", mode == grants_mode::enforce ? "enforced" : "open",
        denied.empty() ? "" : ", a deny list", op.allow_list ? ", an allow list" : "",
        op.approved.empty() ? "" : ", grants approved from the start");
  }
  auto p = std::make_unique<grant_policy>(
      mode, std::move(denied), cfg.grants_desktop != "deny", std::move(aliases),
      op.allow_list ? std::optional<std::set<std::string>>(op.allowed) : std::nullopt);
  p->set_granted(op.approved.apps, op.approved.system_key_combos);
  return p;
}

// The operator's lists; main() has read them once already and stopped on
// an error, so one here is only logged.
operator_grants operator_lists(const config& cfg) {
  auto g = read_operator_grants(cfg);
  if (!g) {
    log(log_level::error, "%s", g.err().message.c_str());
    return operator_grants{};
  }
  return *g;
}

bool is_valid_id(element id) { return id.is_string() || id.is_int64() || id.is_uint64(); }

}  // namespace

server::server(uv_loop_t* loop, config cfg, input_guard guard)
    : loop_(loop),
      cfg_(std::move(cfg)),
      splitter_(cfg_.max_frame_bytes, simdjson::SIMDJSON_PADDING),
      tools_list_json_(tools_list_json(cfg_.toolsets_on)),
      modern_tools_list_json_(modern_tools_list(tools_list_json_)),
      in_(
          loop, [this](const char* d, size_t n) { on_stdin(d, n); },
          [this](int status) { on_stdin_end(status); }),
      out_(
          loop, [this](int) { begin_stop(stop_reason::broken_pipe); },
          [this] { relieve_pressure(); }),
      completions_(loop, [this](std::vector<completion>& b) { on_completions(b); }),
      operator_(operator_lists(cfg_)),
      policy_(make_policy(cfg_, operator_)),
      trace_(open_trace(cfg_, generation_, policy_.get())),
      pool_(capture_config{cfg_.display, cfg_.save_dir, cfg_.capture_workers, &generation_,
                           cfg_.format, cfg_.max_result_bytes,
                           has(cfg_.toolsets_on, toolset::windows) ||
                               has(cfg_.toolsets_on, toolset::vision) || a11y_on(cfg_),
                           policy_.get()},
            completions_),
      actor_(input_config{cfg_.display, cfg_.idle_release_secs, cfg_.type_delay_ms,
                          {cfg_.pace_quiet_ms, cfg_.pace_text_ms, cfg_.pace_max_ms,
                           [this]() -> std::optional<std::chrono::steady_clock::time_point> {
                             const damage_monitor& d = pool_.damage();
                             return d.watching() ? d.last_change() : std::nullopt;
                           }},
                          trace_ ? std::function<void(const input_event&)>(
                                       [t = trace_.get()](const input_event& e) { t->input(e); })
                                 : nullptr,
                          input_marker_path(cfg_.lock_path),
                          trace_ ? std::function<void()>([t = trace_.get()] { t->before_input(); })
                                 : nullptr,
                          policy_.get()},
             (guard_devices_ = guard.take_devices(), std::move(guard)), generation_,
             completions_),
      desktop_(cfg_.display, generation_, completions_),
      a11y_(make_a11y(cfg_, completions_)),
      coords_(cfg_.display, generation_),
      grants_(operator_.approved),
      services_(start_room_services(cfg_.toolsets_on, cfg_, completions_, guard_devices_)),
      calls_(call_context{loop, cfg_, out_, coords_, grants_, *policy_, pool_, actor_, desktop_,
                          a11y_.get(),
                          service_pointers(services_),
                          [this] { return stopping_; },
                          [this] {
                            relieve_pressure();
                            maybe_finish_stop();
                          },
                          trace_.get()}),
      last_request_(std::chrono::steady_clock::now()) {
  if (trace_) trace_->start(pool_.damage());
}

server::~server() {
  set_log_sink({}, log_level::error);
  if (trace_) trace_->stop(stop_why_.empty() ? "stopped" : stop_why_);
  pool_.stop();
  actor_.stop();
  desktop_.stop();
  stop_a11y();
  stop_services();
}

void server::stop_services() {
  for (auto& [id, service] : services_) service->stop();
}

void server::stop_a11y() {
#if CU_HAVE_A11Y
  if (a11y_) a11y_->stop();
#endif
}

void server::end_a11y_soon() {
#if CU_HAVE_A11Y
  if (a11y_) a11y_->end_soon();
#endif
}

int server::start(int in_fd, int out_fd) {
  if (int err = out_.start(out_fd)) return err;
  if (int err = in_.start(in_fd)) return err;
  auto watch = [this](uv_signal_t* h, int signum) {
    uv_signal_init(loop_, h);
    h->data = this;
    uv_signal_start(
        h,
        [](uv_signal_t* s, int n) {
          auto* self = static_cast<server*>(s->data);
          // Only a second signal exits without releasing (the guard
          // still does): a first one after stdin's EOF, while the work
          // already accepted finishes, must stop that work properly.
          if (self->signalled_ && n != SIGHUP) {
            log(log_level::warn, "second signal %d while stopping; exiting now", n);
            _exit(0);
          }
          self->signalled_ = true;
          log(log_level::info, "signal %d: stopping", n);
          self->begin_stop(stop_reason::signal);
        },
        signum);
  };
  watch(&sigterm_, SIGTERM);
  watch(&sigint_, SIGINT);
  watch(&sighup_, SIGHUP);
  log(log_level::info, "serving on stdio; display %s, %d capture workers, toolsets %s",
      cfg_.display.c_str(), pool_.workers(), toolsets_text(cfg_.toolsets_on).c_str());
  return 0;
}

void server::on_stdin(const char* data, size_t n) {
  if (input_paused_) {
    held_input_.append(data, n);  // A file read that was already under way.
    return;
  }
  feed_input(data, n);
}

void server::feed_input(const char* data, size_t n) {
  size_t used = 0;
  if (!over_bounds()) {
    used = splitter_.feed(
        data, n,
        [this](std::string_view line, bool padded) {
          on_frame(line, padded);
          return !over_bounds();
        },
        [this] {
          out_.send(render_error("null", rpc_error::invalid_request,
                                 "Invalid Request: frame longer than " +
                                     std::to_string(cfg_.max_frame_bytes) + " bytes"));
        });
  }
  if (used == n || stopping_) return;
  held_input_.append(data + used, n - used);
  if (!input_paused_) {
    input_paused_ = true;
    in_.pause();
    log(log_level::debug, "backpressure: %zu bytes of answers unread, %zu requests in flight; "
        "not reading stdin", out_.waiting_bytes(), calls_.size());
  }
}

bool server::over_bounds() const {
  return out_.waiting_bytes() > kStdoutHighBytes || calls_.size() >= kMaxInflight ||
         calls_.parked_bytes() > kStdoutHighBytes;
}

void server::relieve_pressure() {
  calls_.pump_captures();
  if (input_paused_ && !stopping_ && out_.waiting_bytes() <= kStdoutLowBytes &&
      calls_.size() <= kMaxInflight * 3 / 4 && calls_.parked_bytes() <= kStdoutLowBytes) {
    input_paused_ = false;
    std::string held = std::move(held_input_);
    held_input_.clear();
    feed_input(held.data(), held.size());
    if (!input_paused_) {
      if (held_end_) {
        on_stdin_end(*held_end_);
      } else {
        in_.resume();
      }
    }
  }
  out_.after_drain();
}

void server::on_stdin_end(int status) {
  if (input_paused_) {
    held_end_ = status;  // After the held input is dispatched.
    return;
  }
  splitter_.finish([this](std::string_view line, bool padded) { on_frame(line, padded); });
  if (status != 0) log(log_level::warn, "stdin read failed: %s", uv_strerror(status));
  begin_stop(stop_reason::eof);
}

void server::on_frame(std::string_view line, bool padded) {
  if (stopping_) return;
  actor_.note_activity();
  for (auto& [id, service] : services_) service->note_activity();
  // The idle release also ends the session's grants (the actor releases
  // held input on its own timer).
  auto now = std::chrono::steady_clock::now();
  if (cfg_.idle_release_secs > 0 && !(grants_ == operator_.approved) &&
      now - last_request_ >= std::chrono::duration<double>(cfg_.idle_release_secs)) {
    log(log_level::info, "no request for %gs: clearing the session's grants",
        cfg_.idle_release_secs);
    grants_ = operator_.approved;
    policy_->set_granted(grants_.apps, grants_.system_key_combos);
  }
  last_request_ = now;
  // A line's tokens, not its bytes, are what makes the DOM parser's tape
  // large (see kMaxJsonTokens); a line no longer than the bound cannot pass it.
  if (line.size() > kMaxJsonTokens && json_tokens(line, kMaxJsonTokens) > kMaxJsonTokens) {
    out_.send(render_error("null", rpc_error::invalid_request,
                           "Invalid Request: a request line holds at most " +
                               std::to_string(kMaxJsonTokens) +
                               " JSON tokens (brackets, commas, colons and values); "
                               "send long data as one string"));
    return;
  }
  // A parser keeps buffers as large as the largest document it has seen. A
  // long line (a long write_clipboard, say) gets a parser of its own, freed
  // as soon as the line is done, so parser_ stays small. Nothing keeps an
  // element of the document past this function.
  simdjson::dom::parser long_line_parser;
  simdjson::dom::parser& parser = line.size() > kParserKeepBytes ? long_line_parser : parser_;
  element doc;
  // A padded line is parsed where it is; otherwise simdjson copies it.
  if (auto err = parser.parse(line.data(), line.size(), !padded).get(doc)) {
    out_.send(render_error("null", rpc_error::parse_error, describe_parse_error(line, err)));
    return;
  }
  if (!doc.is_array()) {
    on_message(doc);
    return;
  }
  // A JSON-RPC batch array: only 2025-03-26 has them.
  if (protocol_version_ != "2025-03-26") {
    out_.send(render_error("null", rpc_error::invalid_request,
                           "Invalid Request: batch arrays are only accepted under protocol "
                           "version 2025-03-26"));
    return;
  }
  simdjson::dom::array items = doc;
  if (items.size() == 0) {
    out_.send(
        render_error("null", rpc_error::invalid_request, "Invalid Request: empty batch array"));
    return;
  }
  if (items.size() > kMaxArrayRequests) {
    out_.send(render_error("null", rpc_error::invalid_request,
                           "Invalid Request: a batch array holds at most " +
                               std::to_string(kMaxArrayRequests) + " requests, got " +
                               std::to_string(items.size())));
    return;
  }
  out_.open_group();
  for (element item : items) {
    if (stopping_) break;
    on_message(item);
  }
  out_.close_group();
}

void server::on_message(element doc) {
  if (!doc.is_object()) {
    out_.respond(render_error("null", rpc_error::invalid_request,
                         doc.is_array() ? "Invalid Request: nested batch arrays are not allowed"
                                        : "Invalid Request: expected a JSON-RPC 2.0 object"));
    return;
  }
  object msg = doc;
  element id;
  bool has_id = msg.at_key("id").get(id) == simdjson::SUCCESS;
  std::string id_json;
  if (has_id) {
    if (!is_valid_id(id)) {
      out_.respond(render_error("null", rpc_error::invalid_request,
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
    out_.respond(render_error(has_id ? id_json : "null", rpc_error::invalid_request,
                         has_method ? "Invalid Request: \"jsonrpc\" must be \"2.0\""
                                    : "Invalid Request: \"method\" must be a string"));
    return;
  }
  params_t params;
  element p;
  if (msg.at_key("params").get(p) == simdjson::SUCCESS) {
    if (!p.is_object() && !p.is_array()) {
      if (has_id) {
        out_.respond(render_error(id_json, rpc_error::invalid_params,
                             "Invalid params: \"params\" must be an object"));
      }
      return;
    }
    if (p.is_object()) params = object(p);
  }
  if (has_id) {
    on_request(id_json, method, params);
  } else {
    on_notification(method, params);
  }
}

void server::on_request(std::string_view id_json, std::string_view method, params_t params) {
  // initialize is the legacy era's by definition, whatever its _meta says.
  era_check era;
  if (method != "initialize") era = check_era(id_json, params);
  if (!era.error.empty()) {
    out_.respond(std::move(era.error));
    return;
  }
  if (era.era == rpc_era::modern) return on_modern_request(id_json, method, params);
  if (method == "tools/call") {
    calls_.call(id_json, params);
  } else if (method == "server/discover") {
    // Only a request that names its version and capabilities reaches
    // discover: a legacy client's probe without them is malformed.
    if (era.declared) {
      out_.respond(render_result(id_json, discover_result()));
    } else {
      out_.respond(render_error(
          id_json, rpc_error::invalid_params,
          "Invalid params: server/discover needs \"io.modelcontextprotocol/protocolVersion\" and "
          "\"io.modelcontextprotocol/clientCapabilities\" in params._meta"));
    }
  } else if (method == "ping") {
    out_.respond(render_result(id_json, "{}"));
  } else if (method == "tools/list") {
    out_.respond(render_result(id_json, tools_list_json_));
  } else if (method == "initialize") {
    if (out_.in_group()) {
      out_.respond(render_error(id_json, rpc_error::invalid_request,
                           "Invalid Request: initialize cannot be part of a batch array"));
      return;
    }
    out_.respond(render_result(id_json, initialize_result(params)));
  } else if (method == "logging/setLevel") {
    out_.respond(set_logging_level(id_json, params));
  } else {
    out_.respond(render_error(id_json, rpc_error::method_not_found,
                         "Method not found: " + std::string(method)));
  }
}

void server::on_modern_request(std::string_view id_json, std::string_view method,
                                params_t params) {
  if (method == "tools/call") {
    calls_.call(id_json, params, rpc_era::modern);
  } else if (method == "tools/list") {
    out_.respond(render_result(id_json, modern_tools_list_json_));
  } else if (method == "server/discover") {
    out_.respond(render_result(id_json, discover_result()));
  } else if (method == "ping" || method == "logging/setLevel") {
    out_.respond(render_error(id_json, rpc_error::method_not_found,
                              "Method not found: " + std::string(method) +
                                  " is not part of protocol version 2026-07-28"));
  } else {
    out_.respond(render_error(id_json, rpc_error::method_not_found,
                              "Method not found: " + std::string(method)));
  }
}

void server::on_notification(std::string_view method, params_t params) {
  if (method == "notifications/cancelled") {
    // A cancellation without params or without a valid requestId names no
    // request: like every malformed notification, it gets no answer.
    element request_id;
    if (params && params->at_key("requestId").get(request_id) == simdjson::SUCCESS &&
        is_valid_id(request_id)) {
      calls_.cancel(simdjson::minify(request_id));
    }
  }
  // notifications/initialized and anything else: nothing to do.
}

std::string server::initialize_result(params_t params) {
  const char* version = kProtocolVersions[3];
  std::string_view requested;
  if (params && params->at_key("protocolVersion").get(requested) == simdjson::SUCCESS) {
    for (const char* v : kProtocolVersions) {
      if (requested == v) version = v;
    }
  }
  protocol_version_ = version;
  std::string out;
  json_writer w(out);
  w.begin_object().key("protocolVersion").string(version);
  w.key("capabilities").begin_object().key("tools").begin_object();
  w.key("listChanged").boolean(false).end_object();
  w.key("logging").begin_object().end_object().end_object();
  w.key("serverInfo").begin_object().key("name").string("computer-use");
  w.key("version").string(CU_VERSION).end_object();
  w.end_object();
  return out;
}

std::string server::discover_result() const {
  std::string out;
  json_writer w(out);
  w.begin_object();
  write_era_members(w, rpc_era::modern);
  w.key("supportedVersions").raw(supported_versions_json());
  // No listChanged: the list never changes, and subscriptions/listen is not served.
  w.key("capabilities").begin_object().key("tools").begin_object().end_object().end_object();
  write_cache_members(w);
  w.end_object();
  return out;
}

std::string server::set_logging_level(std::string_view id_json, params_t params) {
  // RFC 5424 levels, lowest first, and the least severe of ours each admits.
  static constexpr std::pair<std::string_view, int> kLevels[] = {
      {"debug", 0}, {"info", 1},     {"notice", 2}, {"warning", 2},
      {"error", 3}, {"critical", 4}, {"alert", 4},  {"emergency", 4}};
  std::string_view level;
  if (!params || params->at_key("level").get(level) != simdjson::SUCCESS) {
    return render_error(id_json, rpc_error::invalid_params,
                        "Invalid params: logging/setLevel needs a string \"level\"");
  }
  for (auto [name, ours] : kLevels) {
    if (name != level) continue;
    if (ours > int(log_level::error)) {
      set_log_sink({}, log_level::error);  // We log nothing that severe.
    } else {
      completion_queue* queue = &completions_;
      set_log_sink(
          [queue](log_level l, std::string_view message) {
            static constexpr std::string_view kNames[] = {"debug", "info", "warning", "error"};
            completion c;  // seq 0: a notification, written as it is.
            json_writer w(c.line);
            w.begin_object().key("jsonrpc").string("2.0");
            w.key("method").string("notifications/message").key("params").begin_object();
            w.key("level").string(kNames[int(l)]).key("logger").string("computer-use");
            w.key("data").string(message).end_object().end_object();
            c.line.push_back('\n');
            queue->push(std::move(c));
          },
          log_level(ours));
    }
    return render_result(id_json, "{}");
  }
  return render_error(id_json, rpc_error::invalid_params,
                      "Invalid params: unknown logging level \"" + std::string(level) +
                          "\" (debug, info, notice, warning, error, critical, alert or "
                          "emergency)");
}

void server::begin_stop(stop_reason why) {
  if (stop_why_.empty()) {
    stop_why_ = why == stop_reason::eof      ? "stdin closed"
                : why == stop_reason::signal ? "signal"
                                             : "stdout closed";
  }
  if (!stopping_) {
    stopping_ = true;
    in_.stop();
  }
  // The a11y thread's queued jobs would each wait for an application that
  // may not answer: they are answered now, and its running bus call is cut
  // short (a11y::end_soon), so the server exits within a second.
  end_a11y_soon();
  if (why == stop_reason::eof) {
    // Nobody can ask for a release any more: end holds now rather than at
    // their deadlines (they still answer, early).
    actor_.end_holds();
    for (auto& [id, service] : services_) service->end_holds();
    calls_.end_waits_early();
  } else {
    // Nobody will read the answers, or we were told to stop now: drop them.
    calls_.cancel_all();
  }
  maybe_finish_stop();
}

void server::maybe_finish_stop() {
  if (!stopping_ || finished_ || !calls_.empty()) return;
  finished_ = true;
  set_log_sink({}, log_level::error);
  // The last calls' records and frame are written before the record of
  // screen changes (the pool's) goes.
  if (trace_) trace_->stop(stop_why_);
  pool_.stop();
  actor_.stop();
  desktop_.stop();
  stop_a11y();
  stop_services();
  completions_.close();
  calls_.close();
  for (uv_signal_t* s : {&sigterm_, &sigint_, &sighup_}) {
    uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
  }
  out_.close([this] { uv_stop(loop_); });
}

void server::on_completions(std::vector<completion>& batch) {
  for (completion& c : batch) {
    if (c.seq != 0) {
      calls_.on_completion(c);
      continue;
    }
    // Whatever the actor held went with a lost server: say so at once.
    if (c.screen && coords_.on_screen_report(*c.screen)) actor_.display_lost();
    // A notification (notifications/message).
    if (!c.line.empty()) out_.send(std::move(c.line));
  }
}

}  // namespace cu
