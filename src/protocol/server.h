// Owns: the MCP session on the loop thread: JSON-RPC parsing and dispatch,
// the table of in-flight requests, the coordinate session, the capture pool
// and input actor it feeds, the completion queue it drains, and shutdown.
// Thread affinity: the loop thread. It is the only writer of stdout; workers
// reach it only through the completion queue.
#pragma once

#include <simdjson.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>
#include <functional>

#include "capture/geometry.h"
#include "capture/pool.h"
#include "input/actor.h"
#include "input/guard.h"
#include "protocol/completion_queue.h"
#include "protocol/frame_splitter.h"
#include "protocol/stdio.h"
#include "tools/batch.h"
#include "tools/grants.h"
#include "util/config.h"
#include "x11/desktop.h"
#include "x11/generation.h"

namespace cu {

struct tool_def;

// Backpressure. While more than kStdoutHighBytes of answers wait for the
// client to read them (counting those held for an unfinished batch array),
// or kMaxInflight requests are in flight, no further frame is dispatched
// and stdin is not read; both resume once the answers are down to
// kStdoutLowBytes and the requests to three quarters of the bound. A
// client that stops reading therefore costs a bounded amount of memory
// instead of one finished screenshot per request it sent.
inline constexpr size_t kStdoutHighBytes = size_t{16} << 20;
inline constexpr size_t kStdoutLowBytes = size_t{4} << 20;
inline constexpr size_t kMaxInflight = 4096;
// The most requests one JSON-RPC batch array may hold: its answers are all
// kept until the last is done, so its size bounds that memory.
inline constexpr size_t kMaxArrayRequests = 100;

// Protocol versions this server speaks, oldest first; the last is preferred.
extern const char* const kProtocolVersions[4];

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
  friend class server_tool_call;

  // Where a request's work (for a batch: its current step's) is right now,
  // so a cancellation knows whom to tell.
  enum class where { here, settle, pool, actor, desktop, timer };

  // A JSON-RPC batch array (2025-03-26): its responses are collected and
  // written as one array once the last of its requests has completed.
  struct rpc_group {
    std::vector<std::string> lines;
    size_t bytes = 0;    // The size of lines.
    size_t pending = 0;  // Requests accepted but not completed.
    bool open = true;    // Its elements are still being read.
    // Keeps line, counting it in the server's total as well.
    void add(std::string line, size_t& total) {
      bytes += line.size();
      total += line.size();
      lines.push_back(std::move(line));
    }
  };

  struct batch_run;

  struct inflight {
    std::string id_json;
    bool cancelled = false;
    where at = where::here;
    uv_timer_t* timer = nullptr;     // settle, wait or batch delay, by `at`.
    uv_timer_t* progress = nullptr;  // notifications/progress ticker.
    std::string progress_token;      // JSON; empty for none.
    double progress_total = 0;       // Seconds (wait, hold_key); 0: unknown.
    bool is_wait = false;            // The timer is a wait's (ends early at EOF).
    std::optional<tool_result> waiting;  // What the wait answers when its timer fires.
    std::chrono::steady_clock::time_point started;
    // A tools/call's tool name (at most 64 bytes) when debug lines are wanted
    // as it starts; its end is logged when set.
    std::string tool;
    std::unique_ptr<batch_run> batch;
    std::shared_ptr<rpc_group> group;
  };
  enum class stop_reason { eof, signal, broken_pipe };

  void on_stdin(const char* data, size_t n);
  void on_stdin_end(int status);
  // Backpressure (see the constants in server.cpp): frames are dispatched
  // only while the answers waiting for stdout and the requests in flight
  // are under their bounds; past them, stdin is paused and what was read
  // but not dispatched waits in held_input_.
  void feed_input(const char* data, size_t n);
  bool over_bounds() const;
  void relieve_pressure();
  // Captures go to the pool a few at a time, and not while stdout is
  // backed up, so finished images cannot pile up in memory.
  void to_pool(capture_job job);
  void pump_captures();
  void on_frame(std::string_view line);
  void on_message(simdjson::dom::element doc);
  // params: the request's params object; nothing when it is absent (or an
  // array, which no method here takes). Never a default-constructed
  // element: reading one is undefined behaviour inside simdjson.
  using params_t = std::optional<simdjson::dom::object>;
  void on_request(std::string_view id_json, std::string_view method, params_t params);
  void on_notification(std::string_view method, params_t params);
  void call_tool(std::string_view id_json, params_t params);
  void log_call_end(const inflight& f, std::string_view line) const;
  void on_completions(std::vector<completion>& batch);
  // The desktop thread's news of the screen: a lost server or a root size.
  void on_screen_report(const screen_report& r);
  // A capture made this session: it becomes the coordinate session if it
  // is of the screen as it is now.
  void adopt_session(const coord_session& s);
  // The coordinate session, if it is still of the screen as it is now.
  std::optional<coord_session> live_session() const;
  std::string set_logging_level(std::string_view id_json, params_t params);

  uint64_t accept(std::string_view id_json, std::string progress_token);
  // Ends request seq: writes line (unless it was cancelled; empty: nothing).
  void complete(uint64_t seq, std::string line);
  // A piece of work for seq came back: r, or nothing when it was cancelled.
  // Ends a plain request; hands a batch's step result to the batch.
  void deliver(uint64_t seq, std::optional<tool_result> r);
  void submit_capture(uint64_t seq, capture_job job);
  void cancel(std::string_view id_json);
  void end_waits_early();

  // Timers owned by the loop; stop_timer closes and frees one.
  uv_timer_t* start_timer(uint64_t ms, uint64_t repeat_ms, std::function<void()> fire);
  static void stop_timer(uv_timer_t*& t);
  void send_progress(uint64_t seq);

  // computer_batch (server_calls.cpp).
  void start_batch(uint64_t seq, batch_plan plan);
  void run_batch_steps(uint64_t seq);
  // Starts the next step; its result when it finished at once.
  std::optional<tool_result> start_step(uint64_t seq);
  // Records a finished step; true when the next step may start right away.
  bool step_done(uint64_t seq, tool_result r);
  // After a step (and its capture): stop, pause or go on; true: go on now.
  bool after_step(uint64_t seq);
  void on_batch_result(uint64_t seq, std::optional<tool_result> r);
  void end_batch(uint64_t seq);

  // A response: into the current JSON-RPC batch array, or to stdout.
  void respond(std::string line);
  void flush_group(rpc_group& g);
  void send(std::string line);
  void begin_stop(stop_reason why);
  void maybe_finish_stop();

  std::string initialize_result(params_t params);

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
  server_generation generation_;  // Shared with the threads below.
  capture_pool pool_;
  input_actor actor_;
  desktop desktop_;
  uv_signal_t sigterm_, sigint_, sighup_;

  uint64_t next_seq_ = 0;
  std::unordered_map<uint64_t, inflight> inflight_;
  std::string held_input_;         // Read from stdin, not yet dispatched.
  bool input_paused_ = false;
  std::optional<int> held_end_;    // stdin ended while input was held.
  size_t group_bytes_ = 0;         // Answers held in open batch arrays.
  bool trim_after_drain_ = false;  // Give memory back once stdout drains.
  std::deque<capture_job> capture_backlog_;
  size_t captures_in_pool_ = 0;
  bool captures_held_ = false;     // The backlog waits for stdout to drain.
  std::optional<coord_session> session_;
  // The root window's size as the desktop thread last reported it (or a
  // capture saw it first), and a session captured at a size the report of
  // which has not arrived yet.
  std::optional<size2> root_size_;
  std::optional<coord_session> early_session_;
  std::optional<rect> area_;  // switch_display's choice; nothing: the whole screen.
  session_grants grants_;
  std::chrono::steady_clock::time_point last_request_;
  std::optional<std::chrono::steady_clock::time_point> last_input_;
  std::string protocol_version_;           // Negotiated by initialize; empty before.
  std::shared_ptr<rpc_group> group_;       // The array being read, if any.

  bool stopping_ = false;
  bool signalled_ = false;  // A SIGTERM or SIGINT arrived.
  bool finished_ = false;
};

// A computer_batch in progress; it lives in its request's inflight entry.
struct server::batch_run {
  batch_plan plan;
  simdjson::dom::parser parser;  // The steps' arguments, one at a time.
  std::vector<step_outcome> done;
  size_t next = 0;         // The step to start next.
  bool capturing = false;  // The work out is the capture after done.back().
  bool leased = false;     // An input step went to the actor.
};

}  // namespace cu
