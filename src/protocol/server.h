// Owns: the MCP session on the loop thread: reading stdin into frames,
// JSON-RPC parsing and dispatch (initialize, ping, tools/list, tools/call,
// logging/setLevel, cancellations; server/discover and the per-request _meta
// of MCP 2026-07-28, served beside the handshake), backpressure, the threads below it and
// the queue their completions come back through, and shutdown. Tool calls
// in flight are the call table's (call_table.h); the coordinate session is
// coordinates.h's; answers leave through replies.h.
// Thread affinity: the loop thread. It is the only writer of stdout; workers
// reach it only through the completion queue.
#pragma once

#include <simdjson.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capture/pool.h"
#include "core/completion_queue.h"
#include "core/generation.h"
#include "desktop/desktop.h"
#include "input/actor.h"
#include "input/guard.h"
#include "protocol/call_table.h"
#include "protocol/coordinates.h"
#include "protocol/frame_splitter.h"
#include "protocol/replies.h"
#include "protocol/stdio.h"
#include "core/grant_policy.h"
#include "toolsets/grants.h"
#include "toolsets/operator_grants.h"
#include "util/config.h"

namespace cu {

class a11y;

// Backpressure. While more than kStdoutHighBytes of answers wait for the
// client to read them (counting those held for an unfinished batch array),
// or kMaxInflight requests are in flight, or the calls waiting for a
// screenshot sent before them keep more than kStdoutHighBytes of arguments,
// no further frame is dispatched and stdin is not read; both resume once
// the answers and those arguments are down to kStdoutLowBytes and the
// requests to three quarters of the bound. A
// client that stops reading therefore costs a bounded amount of memory
// instead of one finished screenshot per request it sent. (The byte bounds
// are in replies.h.)
inline constexpr size_t kMaxInflight = 4096;
// The most requests one JSON-RPC batch array may hold: its answers are all
// kept until the last is done, so its size bounds that memory.
inline constexpr size_t kMaxArrayRequests = 100;

// Protocol versions initialize negotiates (the legacy era), oldest first;
// the last is preferred.
extern const char* const kProtocolVersions[4];
// The protocol version of the modern era, named in each request's _meta
// instead of negotiated (docs/protocol.md, "Eras and state").
inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";

class server {
 public:
  // guard: the input guard started before any thread (possibly inactive).
  server(uv_loop_t* loop, config cfg, input_guard guard);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Starts reading requests from in_fd and writing answers to out_fd (stdin
  // and stdout; the fuzz target passes a file and /dev/null), and the signal
  // watchers. Returns 0 or a libuv error.
  int start(int in_fd = STDIN_FILENO, int out_fd = STDOUT_FILENO);

 private:
  enum class stop_reason { eof, signal, broken_pipe };

  void on_stdin(const char* data, size_t n);
  void on_stdin_end(int status);
  // Backpressure (see kMaxInflight): frames are dispatched only while the
  // answers waiting for stdout and the requests in flight are under their
  // bounds; past them, stdin is paused and what was read but not
  // dispatched waits in held_input_.
  void feed_input(const char* data, size_t n);
  bool over_bounds() const;
  void relieve_pressure();
  // padded: SIMDJSON_PADDING readable bytes follow the line (frame_splitter).
  void on_frame(std::string_view line, bool padded);
  void on_message(simdjson::dom::element doc);
  // params: the request's params object; nothing when it is absent (or an
  // array, which no method here takes). Never a default-constructed
  // element: reading one is undefined behaviour inside simdjson.
  using params_t = std::optional<simdjson::dom::object>;
  void on_request(std::string_view id_json, std::string_view method, params_t params);
  // A request whose _meta names protocol version 2026-07-28 (checked).
  void on_modern_request(std::string_view id_json, std::string_view method, params_t params);
  void on_notification(std::string_view method, params_t params);
  void on_completions(std::vector<completion>& batch);
  std::string set_logging_level(std::string_view id_json, params_t params);
  std::string initialize_result(params_t params);
  std::string discover_result() const;

  void begin_stop(stop_reason why);
  void stop_a11y();
  void stop_services();
  void end_a11y_soon();
  void maybe_finish_stop();

  uv_loop_t* loop_;
  config cfg_;
  frame_splitter splitter_;
  simdjson::dom::parser parser_;
  std::string tools_list_json_;
  std::string modern_tools_list_json_;  // The same list in the 2026-07-28 shape.

  stdin_reader in_;
  replies out_;
  completion_queue completions_;
  server_generation generation_;  // Shared with the threads below.
  // The operator's allow and deny lists and grants approved from the start
  // (CU_ALLOW_APPS, CU_DENY_APPS, CU_GRANTS_FILE).
  operator_grants operator_;
  // What the agent may touch (CU_GRANTS, CU_DENY_APPS; docs/grants.md),
  // read by the threads below, its grants set here on the loop thread.
  std::unique_ptr<grant_policy> policy_;
  // The flight recorder (CU_TRACE_DIR or --trace), or null; stopped before
  // the capture pool whose record of screen changes it reads.
  std::unique_ptr<recorder> trace_;
  capture_pool pool_;
  // The input guard's channel for devices, taken before the guard goes to
  // the actor, for the rooms' services (the gamepad's controller).
  guard_devices guard_devices_;
  input_actor actor_;
  desktop desktop_;
  // The a11y thread, when built with libatspi and the a11y toolset is on.
  std::unique_ptr<a11y> a11y_;
  coordinates coords_;
  session_grants grants_;
  // What the rooms of the toolsets that are on run (the gamepad's thread).
  std::vector<std::pair<toolset, std::unique_ptr<room_service>>> services_;
  call_table calls_;
  uv_signal_t sigterm_, sigint_, sighup_;

  std::string held_input_;         // Read from stdin, not yet dispatched.
  bool input_paused_ = false;
  std::optional<int> held_end_;    // stdin ended while input was held.
  std::chrono::steady_clock::time_point last_request_;
  std::string protocol_version_;   // Negotiated by initialize; empty before.

  bool stopping_ = false;
  std::string stop_why_;  // What the trace's end record says.
  bool signalled_ = false;  // A SIGTERM or SIGINT arrived.
  bool finished_ = false;
};

}  // namespace cu
