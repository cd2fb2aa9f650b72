// The libFuzzer target: one input is one whole session of the real server.
// The bytes become its stdin (a memfd, read with uv_fs_read like any file),
// its stdout is /dev/null, and the loop runs until the server stops itself:
// stdin's end, then every request in flight answered. The X display is a
// malformed name, so every X connection fails at once and nothing reaches a
// display; all the rest (framing, JSON-RPC, dispatch, each tool's argument
// checks, computer_batch plans, cancellation, progress, timers, the worker
// threads' hand-offs and completions) runs as in production.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "input/guard.h"
#include "protocol/server.h"
#include "toolsets/registry.h"
#include "util/config.h"
#include "util/log.h"

namespace cu_fuzz {
class grammar;
grammar& the_grammar();
}  // namespace cu_fuzz

namespace {

std::string g_dir;  // The private directory of this process.
cu::config g_cfg;

// The server watches SIGINT, SIGTERM and SIGHUP (and exits at once on a
// second one), and libuv leaves SIG_DFL behind when the watchers close.
// Signals are not part of an input: libFuzzer keeps its own handlers
// (SIGINT prints the final stats), put back right after start() and again
// after the run.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_saved[3];
bool g_signals_saved = false;

std::string make_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0) {
    perror(path.c_str());
    abort();
  }
  return path;
}

void remove_tree(const std::string& path) {
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string p = path + "/" + name;
      struct stat st;
      if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        remove_tree(p);
      } else {
        unlink(p.c_str());
      }
    }
    closedir(d);
  }
  rmdir(path.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/cu-fuzz-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    perror("mkdtemp");
    abort();
  }
  g_dir = tmpl;
  atexit([] { remove_tree(g_dir); });

  // Belt and braces: open_application never gets as far as launching
  // without an X connection, but should it ever, there is nothing to find.
  setenv("PATH", make_dir(g_dir + "/bin").c_str(), 1);
  setenv("XDG_DATA_DIRS", make_dir(g_dir + "/data").c_str(), 1);
  setenv("XDG_DATA_HOME", make_dir(g_dir + "/data-home").c_str(), 1);
  setenv("HOME", make_dir(g_dir + "/home").c_str(), 1);
  setenv("DISPLAY", "fuzz", 1);
  // No accessibility bus: the a11y toolset's jobs are refused at once, and
  // nothing is launched (libdbus would autolaunch a session bus).
  for (const char* bus : {"DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "XDG_RUNTIME_DIR"}) {
    unsetenv(bus);
  }
  setenv("XAUTHORITY", (g_dir + "/no-xauthority").c_str(), 1);

  g_cfg.display = "fuzz";  // No colon: xcb refuses the name before any socket.
  g_cfg.lock_path = g_dir + "/lock";
  g_cfg.save_dir = make_dir(g_dir + "/save") + "/";
  g_cfg.idle_release_secs = 0;
  g_cfg.screenshot_delay_secs = 0;
  // Inputs are at most 64 KiB (-max_len): a smaller frame limit lets the
  // fuzzer reach the oversize-frame path too.
  g_cfg.max_frame_bytes = 48 * 1024;
  g_cfg.capture_workers = 2;
  g_cfg.type_delay_ms = 0;
  g_cfg.input_guard = false;
  // The gamepad toolset's calls find no uinput node and answer why; a
  // machine that has one never gets a controller made by the fuzzer.
  g_cfg.uinput_path = g_dir + "/no-uinput";
  g_cfg.level = cu::log_level::error;
  g_cfg.toolsets_on = cu::every_toolset();  // Every tool is fuzzed.
  cu::set_log_level(g_cfg.level);

  cu_fuzz::the_grammar();  // Reads the schemas now, not inside the first mutation.
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!g_signals_saved) {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], nullptr, &g_saved[i]);
    g_signals_saved = true;
  }
  int in = memfd_create("cu-fuzz-stdin", MFD_CLOEXEC);
  if (in < 0) {
    perror("memfd_create");
    abort();
  }
  for (size_t done = 0; done < size;) {
    ssize_t n = write(in, data + done, size - done);
    if (n <= 0) {
      perror("write");
      abort();
    }
    done += size_t(n);
  }
  lseek(in, 0, SEEK_SET);
  // CU_FUZZ_ECHO=1 (reproducing a crash): what the server answered goes to
  // stderr after the run.
  static const bool echo = getenv("CU_FUZZ_ECHO") != nullptr && *getenv("CU_FUZZ_ECHO") == '1';
  int out = echo ? memfd_create("cu-fuzz-stdout", MFD_CLOEXEC)
                 : open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    perror("stdout");
    abort();
  }

  // Half the inputs (by their length, so a crash reproduces) run with
  // grants enforced, a deny list and an allow list: request_access's
  // denials, the system key combo refusals and the grants' other checks are
  // fuzzed too.
  cu::config cfg = g_cfg;
  if (size % 2 == 1) {
    cfg.grants = "enforce";
    cfg.deny_apps = "keepassxc, Mail";
    cfg.allow_apps = "xterm,firefox,granted";
  }
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) abort();
  {
    cu::server s(&loop, cfg, cu::input_guard{});
    if (int err = s.start(in, out)) {
      fprintf(stderr, "fuzz: server start failed: %s\n", uv_strerror(err));
      abort();
    }
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_saved[i], nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    // The server stopped the loop from its last close callback; let the
    // handles it closed finish closing while it still exists.
    uv_run(&loop, UV_RUN_NOWAIT);
  }
  if (int err = uv_loop_close(&loop)) {
    fprintf(stderr, "fuzz: the loop still has handles after the server stopped (%s):\n",
            uv_strerror(err));
    uv_print_all_handles(&loop, stderr);
    abort();
  }
  if (echo) {
    lseek(out, 0, SEEK_SET);
    char buf[65536];
    for (ssize_t n; (n = read(out, buf, sizeof buf)) > 0;) fwrite(buf, 1, size_t(n), stderr);
  }
  if (close(in) != 0 || close(out) != 0) {
    fprintf(stderr, "fuzz: the server closed a descriptor it does not own\n");
    abort();
  }
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_saved[i], nullptr);
  return 0;
}
