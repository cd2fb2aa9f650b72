// Owns: the MCP session on the loop thread: JSON-RPC parsing and dispatch,
// the table of in-flight requests, the coordinate session, the capture pool
// and input actor it feeds, the completion queue it drains, and shutdown.
// Thread affinity: the loop thread. It is the only writer of stdout; workers
// reach it only through the completion queue.
#pragma once

#include <simdjson.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "capture/geometry.h"
#include "capture/pool.h"
#include "input/actor.h"
#include "input/guard.h"
#include "protocol/completion_queue.h"
#include "protocol/frame_splitter.h"
#include "protocol/stdio.h"
#include "tools/grants.h"
#include "util/config.h"
#include "x11/desktop.h"

namespace cu {

struct tool_def;

// Protocol versions this server speaks, oldest first; the last is preferred.
extern const char* const kProtocolVersions[4];

class server {
 public:
  // guard: the input guard started before any thread (possibly inactive).
  server(uv_loop_t* loop, config cfg, input_guard guard);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Starts stdio and the signal watchers. Returns 0 or a libuv error.
  int start();

 private:
  friend class loop_tool_call;

  struct inflight {
    std::string id_json;
    bool cancelled = false;
    uv_timer_t* settle = nullptr;  // Pending CU_SCREENSHOT_DELAY wait, if any.
    bool on_actor = false;         // Handed to the input actor.
    bool on_desktop = false;       // Handed to the desktop thread.
  };
  enum class stop_reason { eof, signal, broken_pipe };

  void on_stdin(const char* data, size_t n);
  void on_stdin_end(int status);
  void on_frame(std::string_view line);
  void on_request(std::string_view id_json, std::string_view method,
                  simdjson::dom::element params, bool has_params);
  void on_notification(std::string_view method, simdjson::dom::element params);
  void call_tool(std::string_view id_json, simdjson::dom::element params, bool has_params);
  void on_completions(std::vector<completion>& batch);

  uint64_t accept(std::string_view id_json);
  void complete(uint64_t seq, std::string line);
  void submit_capture(uint64_t seq, capture_job job);
  void cancel(std::string_view id_json);

  void send(std::string line);
  void begin_stop(stop_reason why);
  void maybe_finish_stop();

  std::string initialize_result(simdjson::dom::element params, bool has_params) const;

  uv_loop_t* loop_;
  config cfg_;
  frame_splitter splitter_;
  simdjson::dom::parser parser_;
  simdjson::dom::parser empty_parser_;
  simdjson::dom::object empty_args_;
  std::string tools_list_json_;

  stdin_reader in_;
  stdout_writer out_;
  completion_queue completions_;
  capture_pool pool_;
  input_actor actor_;
  desktop desktop_;
  uv_signal_t sigterm_, sigint_, sighup_;

  uint64_t next_seq_ = 0;
  std::unordered_map<uint64_t, inflight> inflight_;
  std::optional<coord_session> session_;
  std::optional<rect> area_;  // switch_display's choice; nothing: the whole screen.
  session_grants grants_;
  std::chrono::steady_clock::time_point last_request_;
  std::optional<std::chrono::steady_clock::time_point> last_input_;

  bool stopping_ = false;
  bool finished_ = false;
};

}  // namespace cu
