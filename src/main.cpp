// Owns: process start-up: arguments, configuration, the single-owner lock,
// and running the loop until the server stops.
// Thread affinity: the main thread, which becomes the loop thread.
#include <uv.h>

#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unistd.h>

#include "build_config.h"
#include "input/guard.h"
#include "input/marker.h"
#include "protocol/server.h"
#include "toolsets/registry.h"
#include "toolsets/operator_grants.h"
#include "util/config.h"
#include "util/environment.h"
#include "util/lock.h"
#include "util/log.h"
#include "util/str_cat.h"
#include "vision/ocr.h"

namespace {

// --help's two-column rows: the term from column 2, the text from column
// 23, wrapped before column 80 with continuation lines indented to it; a
// term that reaches the text's column puts the text on the lines below.
constexpr size_t kTextColumn = 23;
constexpr size_t kWidth = 79;

// A space that does not break a line: add_wrapped writes it as a space.
constexpr char kGlue = '\x01';

void add_wrapped(std::string& out, std::string_view text, size_t indent, size_t column) {
  size_t at = column;
  bool line_empty = true;
  while (!text.empty()) {
    size_t space = text.find(' ');
    std::string word(text.substr(0, space));
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (!line_empty && at + 1 + word.size() > kWidth) {
      out += '\n';
      out.append(indent, ' ');
      at = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++at;
    }
    for (char& c : word) c = c == kGlue ? ' ' : c;
    out += word;
    at += word.size();
    line_empty = false;
  }
  out += '\n';
}

// "(default 300)" kept on one line when a line can hold it.
std::string default_note(std::string_view value) {
  std::string note = cu::str_cat("(default ", value, ")");
  if (note.size() <= kWidth - kTextColumn) {
    for (char& c : note) c = c == ' ' ? kGlue : c;
  }
  return note;
}

void add_row(std::string& out, std::string_view term, std::string_view text) {
  out += "  ";
  out += term;
  size_t at = 2 + term.size();
  if (at + 1 > kTextColumn) {
    out += '\n';
    at = 0;
  }
  out.append(kTextColumn - at, ' ');
  add_wrapped(out, text, kTextColumn, kTextColumn);
}

void usage(FILE* f) {
  std::string out =
      "usage: computer-use-mcp [--help] [--version] [--toolsets LIST] [--trace DIR]\n"
      "\n"
      "A stdio MCP server for the Anthropic computer-use tools on an X11 display.\n"
      "It speaks newline-delimited JSON-RPC on stdin and stdout; logs go to stderr.\n"
      "\n"
      "Options:\n";
  add_row(out, "--toolsets LIST",
          "the toolsets tools/list offers (below), comma-separated, or all; computer is "
          "always on; overrides CU_TOOLSETS");
  add_row(out, "--trace DIR",
          "record every tool call and the screen around it into DIR (the flight recorder); "
          "overrides CU_TRACE_DIR");
  add_row(out, "--help, -h", "print this and exit");
  add_row(out, "--version", "print the version and exit");

  // The toolsets come from the registry and the environment from its table
  // (util/environment.h), so neither list can leave one out.
  out += "\nToolsets, in tools/list order:\n";
  for (const cu::toolset_def& t : cu::all_toolsets()) {
    std::string text(t.summary);
    if (std::string_view needs = cu::build_requirement(t.id); !needs.empty()) {
      text += cu::str_cat(" (built with ", needs,
                          cu::toolset_built(t.id) ? ")" : "; not in this build)");
    }
    if (t.id == cu::toolset::computer) text += " (always on)";
    add_row(out, t.name, text);
  }

  out += "\nEnvironment:\n";
  std::string session;
  for (const cu::env_var& v : cu::environment_variables()) {
    if (!v.setting) {
      session += cu::str_cat(session.empty() ? "" : ", ", v.name);
      continue;
    }
    add_row(out, v.name, cu::str_cat(v.meaning, " ", default_note(v.default_text)));
  }
  out += "\n  Also read from the session: ";
  add_wrapped(out, session + " (the man page says how).", 2, 30);
  fputs(out.c_str(), f);
}

}  // namespace

int main(int argc, char** argv) {
  const char* toolsets_arg = nullptr;
  const char* trace_arg = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace_arg = argv[++i];
      continue;
    }
    if (strncmp(argv[i], "--trace=", 8) == 0) {
      trace_arg = argv[i] + 8;
      continue;
    }
    if (strcmp(argv[i], "--toolsets") == 0 && i + 1 < argc) {
      toolsets_arg = argv[++i];
      continue;
    }
    if (strncmp(argv[i], "--toolsets=", 11) == 0) {
      toolsets_arg = argv[i] + 11;
      continue;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("computer-use-mcp %s\n", CU_VERSION);
      return 0;
    }
    fprintf(stderr, "computer-use-mcp: unknown argument \"%s\"\n", argv[i]);
    usage(stderr);
    return 2;
  }

  // Started in a terminal by mistake: say what this is, in one line, and
  // carry on (a person may type requests).
  if (isatty(STDIN_FILENO)) {
    fputs("computer-use-mcp: this is an MCP server for a host to spawn, speaking JSON-RPC "
          "on stdin/stdout; to try it by hand, pipe requests in: printf '%s\\n' "
          "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2025-06-18\"}}' | computer-use-mcp (see --help)\n",
          stderr);
  }

  // Screenshots allocate megabytes per call (a PNG's base64, its result
  // line). glibc would map each such block fresh and unmap it when freed,
  // so every call paid for faulting in new pages: 1.2 ms of a whole-screen
  // PNG's 9 ms on the test machine. Kept in the heap, the same pages serve
  // the next call. Above 8 MiB free at a heap's top, it goes back: the
  // worker threads' heaps are trimmed only on free (malloc_trim leaves their
  // tops alone), and after a client's backlog drains they must shrink again.
  mallopt(M_MMAP_THRESHOLD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);

  cu::config cfg = cu::config_from_env();
  if (toolsets_arg != nullptr) cfg.toolsets = toolsets_arg;
  if (trace_arg != nullptr) cfg.trace_dir = trace_arg;
  auto toolsets = cu::parse_toolsets(cfg.toolsets);
  if (!toolsets) {
    fprintf(stderr, "computer-use-mcp: %s %s\n", toolsets_arg ? "--toolsets:" : "CU_TOOLSETS:",
            toolsets.err().message.c_str());
    return 2;
  }
  cfg.toolsets_on = *toolsets;
  // A mistyped security setting must not leave the desktop open.
  if (cfg.grants != "open" && cfg.grants != "enforce") {
    fprintf(stderr, "computer-use-mcp: CU_GRANTS=\"%s\": expected open or enforce\n",
            cfg.grants.c_str());
    return 2;
  }
  if (cfg.grants_desktop != "allow" && cfg.grants_desktop != "deny") {
    fprintf(stderr, "computer-use-mcp: CU_GRANTS_DESKTOP=\"%s\": expected allow or deny\n",
            cfg.grants_desktop.c_str());
    return 2;
  }
  // The operator's lists and policy file: an error stops the server.
  if (auto op = cu::read_operator_grants(cfg); !op) {
    fprintf(stderr, "computer-use-mcp: %s\n", op.err().message.c_str());
    return 2;
  }
  // Programs open_application starts inherit the environment: they must
  // find the display we drive even when DISPLAY was unset (default :10).
  setenv("DISPLAY", cfg.display.c_str(), 1);
  // find_text's OCR on one thread, which must be arranged before any
  // thread starts (vision/ocr.h says why).
  if (cu::has(cfg.toolsets_on, cu::toolset::vision)) cu::limit_ocr_threads();
  // A vanished reader must surface as a write error, not kill the process
  // with keys still held.
  signal(SIGPIPE, SIG_IGN);

  if (cfg.lock_path.empty()) {
    auto path = cu::default_lock_path(cfg.display);
    if (!path) {
      cu::log(cu::log_level::error, "%s", path.err().message.c_str());
      return 1;
    }
    cfg.lock_path = std::move(*path);
  }
  // The guard forks, so it starts before any thread exists, and before the
  // lock is taken, whose descriptor it must not inherit; it is told where
  // the pressed-input marker beside the lock is (input/marker.h).
  cu::input_guard guard;
  if (cfg.input_guard) {
    guard = cu::input_guard::start(cfg.display, cu::input_marker_path(cfg.lock_path));
  }

  auto lock = cu::acquire_instance_lock(cfg.lock_path);
  if (!lock) {
    cu::log(cu::log_level::error, "%s", lock.err().message.c_str());
    return 1;
  }

  uv_loop_t* loop = uv_default_loop();
  {
    cu::server s(loop, cfg, std::move(guard));
    if (int err = s.start()) {
      cu::log(cu::log_level::error, "cannot set up stdio: %s", uv_strerror(err));
      return 1;
    }
    uv_run(loop, UV_RUN_DEFAULT);
  }
  cu::log(cu::log_level::info, "stopped");
  return 0;
}
