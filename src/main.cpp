// Owns: process start-up: arguments, configuration, the single-owner lock,
// and running the loop until the server stops.
// Thread affinity: the main thread, which becomes the loop thread.
#include <uv.h>

#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "build_config.h"
#include "input/guard.h"
#include "input/marker.h"
#include "protocol/server.h"
#include "toolsets/registry.h"
#include "util/config.h"
#include "util/lock.h"
#include "util/log.h"
#include "vision/ocr.h"

namespace {

void usage(FILE* f) {
  fputs(
      "usage: computer-use-mcp [--help] [--version] [--toolsets LIST] [--trace DIR]\n"
      "\n"
      "A stdio MCP server for the Anthropic computer-use tools on an X11 display.\n"
      "It speaks newline-delimited JSON-RPC on stdin and stdout; logs go to stderr.\n"
      "\n"
      "Options:\n"
      "  --toolsets LIST       the toolsets tools/list offers, comma-separated, or all;\n"
      "                        computer (the 24 tools) is always on; overrides CU_TOOLSETS.\n"
      "                        Toolsets: computer, windows, vision, a11y (with libatspi)\n"
      "  --trace DIR           record every tool call and the screen around it into\n"
      "                        DIR (the flight recorder); overrides CU_TRACE_DIR\n"
      "\n"
      "Environment:\n"
      "  DISPLAY               X display to drive (default :10)\n"
      "  CU_LOCK_PATH          single-owner lock (default: in $XDG_RUNTIME_DIR, one per\n"
      "                        display; /tmp/sidebutton-computer-use-<uid>/ without it)\n"
      "  CU_SAVE_DIR           where save_to_disk writes (default /tmp/sidebutton-computer-use/)\n"
      "  CU_IDLE_RELEASE_SECS  release held input after this idle time (default 300; 0 off)\n"
      "  CU_SCREENSHOT_DELAY   longest settle, in seconds, before a capture that follows\n"
      "                        input (default 2.0; 0 off)\n"
      "  CU_SETTLE_QUIET_MS    the settle ends once the screen was quiet this long\n"
      "                        (default 100)\n"
      "  CU_IMAGE_FORMAT       png, jpeg or auto (default: PNG while the result fits\n"
      "                        CU_MAX_RESULT_BYTES, else JPEG)\n"
      "  CU_MAX_RESULT_BYTES   size budget of an image result line (default 1000000)\n"
      "  CU_MAX_FRAME_BYTES    longest accepted request line (default 67108864)\n"
      "  CU_CAPTURE_WORKERS    capture threads (default: one per core, at least 2)\n"
      "  CU_TYPE_DELAY_MS      extra pause after each typed character (default 0: each\n"
      "                        one paced by an X round trip only)\n"
      "  CU_INPUT_GUARD        0 disables the process that releases input if we are killed\n"
      "  CU_LOG_LEVEL          debug, info, warn or error (default info)\n"
      "  CU_TOOLSETS           toolsets, as --toolsets (default computer)\n"
      "  CU_TRACE_DIR          record a trace into this directory, as --trace (default\n"
      "                        empty: off)\n"
      "  CU_TRACE_REDACT_TEXT  1: typed text and clipboard text are left out of traces\n"
      "  CU_TRACE_MAX_BYTES    a trace file's size bound before the next part starts\n"
      "                        (default 67108864)\n"
      "  CU_TRACE_KEEP         trace files kept per trace, the oldest deleted (default 8)\n"
      "  CU_GRANTS             open (default) or enforce: only applications granted by\n"
      "                        request_access get input and show in captures\n"
      "  CU_DENY_APPS          comma-separated applications kept from the agent, granted\n"
      "                        or not\n"
      "  CU_GRANTS_DESKTOP     allow (default) or deny: whether the desktop (the root,\n"
      "                        panels) counts as granted when enforcing\n",
      f);
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
