// Nothing stays pressed: held keys and buttons are released when the server
// ends (stdin EOF, SIGTERM, even SIGKILL through its guard process), when it
// has been idle too long, and a button a predecessor killed with its guard
// stranded is cleared when the next server starts; a button someone else
// holds when it starts is not its to clear.
#include <catch2/catch.hpp>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>
#include <xcb/xtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"

using namespace cu::test;

namespace {

bool nothing_pressed(input_probe& probe) {
  return probe.keys_down().empty() && probe.buttons_mask() == 0;
}

// Polls (with a deadline) for everything to be up; the SIGKILL guard and the
// idle timer release asynchronously, so there is no reply to sync on.
bool wait_nothing_pressed(input_probe& probe, int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    if (nothing_pressed(probe)) return true;
    if (now_ms() > deadline) return false;
    usleep(5000);
  }
}

bool wait_shift_down(input_probe& probe, int timeout_ms = 2000) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    for (uint8_t code : probe.keys_down()) {
      if (probe.keycode_has(code, {kXK_Shift_L, kXK_Shift_R})) return true;
    }
    if (now_ms() > deadline) return false;
    usleep(5000);
  }
}

// The parent pid and state letter of a process, from /proc/<pid>/stat.
bool proc_stat(pid_t pid, pid_t& ppid, char& state) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  long parent = 0;
  rest >> state >> parent;
  ppid = pid_t(parent);
  return bool(rest);
}

// The processes other than the server itself that carry its private
// CU_LOCK_PATH (lock_path when given) in their environment: the input guard
// and anything else it started. The guard is detached (not a child of the
// server), so it is found by what it inherited rather than by its parent.
std::vector<pid_t> started_by(const server_process& s, const std::string& lock_path = {}) {
  const std::string marker = "CU_LOCK_PATH=" + (lock_path.empty() ? s.lock_path() : lock_path);
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid_t(pid) == s.pid()) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::string var;
    while (std::getline(f, var, '\0')) {
      if (var == marker) {
        out.push_back(pid_t(pid));
        break;
      }
    }
  }
  closedir(d);
  return out;
}

// A process is gone when it no longer exists or is a zombie nobody reaped.
bool gone(pid_t pid) {
  pid_t ppid;
  char state;
  return !proc_stat(pid, ppid, state) || state == 'Z' || state == 'X';
}

// A directory of the test's, removed with everything in it at the end: a
// lock path two servers in turn share, as one display's servers do.
class scratch_dir {
 public:
  scratch_dir() {
    char tmpl[] = "/tmp/cu-release-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path_ = tmpl;
  }
  ~scratch_dir() {
    const std::string cmd = "rm -rf '" + path_ + "'";
    if (::system(cmd.c_str()) != 0) WARN("could not remove " + path_);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The pid the pressed-input marker beside lock_path names, 0 when there is
// none (src/input/marker.h).
pid_t marker_pid(const std::string& lock_path) {
  std::ifstream f(lock_path + ".input");
  long pid = 0;
  if (!(f >> pid)) return 0;
  return pid_t(pid);
}

bool wait_gone(const std::vector<pid_t>& pids, int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    bool all = true;
    for (pid_t p : pids) all = all && gone(p);
    if (all) return true;
    if (now_ms() > deadline) return false;
    usleep(10000);
  }
}

void start_session(server_process& s, input_probe& probe) {
  auto shot = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*shot));
  probe.take();
}

// Starts a 30 s hold of shift and returns once shift is down.
void hold_shift(server_process& s, input_probe& probe) {
  s.send(R"({"jsonrpc":"2.0","id":"hold","method":"tools/call","params":{"name":"hold_key","arguments":{"text":"shift","duration":30}}})");
  CHECK(s.request("ping")->root["result"].is_object());
  REQUIRE(wait_shift_down(probe));
}

void hold_button(server_process& s, input_probe& probe) {
  auto r = s.call_tool("left_mouse_down", R"({"coordinate":[500,400]})");
  REQUIRE_FALSE(is_error(*r));
  REQUIRE(probe.buttons_mask() == kButton1Mask);
}

enum class what { key, button };

void check_ended_by(int signo, what held) {
  xvfb x;
  // The probe's connection stays open throughout: Xvfb resets its input
  // state only when its last client leaves, which would hide a leak.
  input_probe probe(x.display());
  server_process s(x.display());
  start_session(s, probe);
  if (held == what::key) {
    hold_shift(s, probe);
  } else {
    hold_button(s, probe);
  }
  const std::vector<pid_t> guards = started_by(s);
  CHECK(marker_pid(s.lock_path()) == s.pid());
  const int64_t start = now_ms();
  if (signo == 0) {
    s.close_stdin();
  } else {
    s.signal(signo);
  }
  auto status = s.wait_exit(10000);
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(now_ms() - start < 10000);
  // A clean exit releases before the process ends, and says so by
  // removing its marker: the next server has nothing to clear.
  CHECK(probe.keys_down().empty());
  CHECK(probe.buttons_mask() == 0);
  CHECK(marker_pid(s.lock_path()) == 0);
  // Nothing the server started outlives it for long.
  CHECK(wait_gone(guards, 5000));
}

void check_killed(what held) {
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display());
  s.expect_exit_status(std::nullopt);
  start_session(s, probe);
  if (held == what::key) {
    hold_shift(s, probe);
  } else {
    hold_button(s, probe);
  }
  const std::vector<pid_t> guards = started_by(s);
  CHECK_FALSE(guards.empty());
  s.signal(SIGKILL);
  auto status = s.wait_exit(10000);
  REQUIRE(status);
  CHECK(*status == 128 + SIGKILL);
  CHECK(wait_nothing_pressed(probe, 3000));
  CHECK(probe.keys_down().empty());
  CHECK(probe.buttons_mask() == 0);
  // The guard does its job, removes the marker (the next server has
  // nothing to clear) and leaves.
  INFO(guards.size() << " processes started by the server before the kill");
  CHECK(wait_gone(guards, 5000));
  CHECK(marker_pid(s.lock_path()) == 0);
}

}  // namespace

TEST_CASE("stdin EOF during a hold_key releases the key and exits 0") {
  check_ended_by(0, what::key);
}

TEST_CASE("SIGTERM during a hold_key releases the key and exits 0") {
  check_ended_by(SIGTERM, what::key);
}

TEST_CASE("SIGINT during a hold_key releases the key and exits 0") {
  check_ended_by(SIGINT, what::key);
}

TEST_CASE("SIGKILL during a hold_key: the guard releases the key and leaves") {
  check_killed(what::key);
}

TEST_CASE("stdin EOF ends a hold_key early with an answer that says so") {
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display());
  start_session(s, probe);
  hold_shift(s, probe);
  const int64_t start = now_ms();
  s.close_stdin();
  auto r = s.read_response("\"hold\"", 5000);
  REQUIRE(r);
  CHECK(now_ms() - start < 5000);
  CHECK(is_error(*r));
  CHECK(text_of(*r).find("ended early") != std::string::npos);
  CHECK(s.wait_exit(10000) == 0);
  CHECK(probe.keys_down().empty());
}

TEST_CASE("without the guard, SIGKILL during a hold_key leaves the key down on Xvfb") {
  // Why the guard exists: the X server keeps what a killed XTest client
  // pressed. This pins the behaviour the guard compensates for.
  xvfb x;
  input_probe probe(x.display());
  scratch_dir dir;
  const std::string lock = dir.path() + "/lock";
  {
    server_process s(x.display(), {{"CU_INPUT_GUARD", "0"}, {"CU_LOCK_PATH", lock}});
    s.expect_exit_status(std::nullopt);
    start_session(s, probe);
    hold_shift(s, probe);
    s.signal(SIGKILL);
    REQUIRE(s.wait_exit(10000));
  }
  probe.sync();
  bool shift_down = false;
  for (uint8_t code : probe.keys_down()) {
    shift_down = shift_down || probe.keycode_has(code, {kXK_Shift_L, kXK_Shift_R});
  }
  CHECK(shift_down);
  // A new server on the same lock finds the marker of its predecessor and
  // clears what it stranded.
  CHECK(marker_pid(lock) != 0);
  server_process next(x.display(), {{"CU_LOCK_PATH", lock}});
  start_session(next, probe);
  CHECK_FALSE(is_error(*next.call_tool("cursor_position")));
  CHECK(probe.keys_down().empty());
}

TEST_CASE("stdin EOF during left_mouse_down releases the button and exits 0") {
  check_ended_by(0, what::button);
}

TEST_CASE("SIGTERM during left_mouse_down releases the button and exits 0") {
  check_ended_by(SIGTERM, what::button);
}

TEST_CASE("SIGKILL during left_mouse_down: the guard releases the button and leaves") {
  check_killed(what::button);
}

TEST_CASE("with CU_IDLE_RELEASE_SECS=1 a held button is released after a second without requests") {
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display(), {{"CU_IDLE_RELEASE_SECS", "1"}});
  start_session(s, probe);
  hold_button(s, probe);
  const int64_t start = now_ms();
  REQUIRE(wait_nothing_pressed(probe, 5000));
  const int64_t elapsed = now_ms() - start;
  CHECK(elapsed >= 500);
  CHECK(elapsed <= 3500);
  auto events = probe.take();
  INFO(describe(events));
  REQUIRE_FALSE(events.empty());
  CHECK(events.back().type == XCB_BUTTON_RELEASE);
  CHECK(events.back().detail == 1);
  // The server knows it let go.
  auto up = s.call_tool("left_mouse_up");
  CHECK_FALSE(is_error(*up));
  CHECK(text_of(*up).find("not held") != std::string::npos);
}

TEST_CASE("with CU_IDLE_RELEASE_SECS=1 requests keep a held button down") {
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display(), {{"CU_IDLE_RELEASE_SECS", "1"}});
  start_session(s, probe);
  hold_button(s, probe);
  // Requests every 300 ms for 2.4 s: never a full second of idleness.
  for (int i = 0; i < 8; ++i) {
    usleep(300000);
    CHECK(s.request("ping")->root["result"].is_object());
    CHECK(probe.buttons_mask() == kButton1Mask);
  }
  auto up = s.call_tool("left_mouse_up");
  CHECK_FALSE(is_error(*up));
  CHECK(text_of(*up).find("left button up at") == 0);
  CHECK(probe.buttons_mask() == 0);
}

TEST_CASE("a button stranded by a previous server that died with its guard is released when the server starts") {
  xvfb x;
  input_probe probe(x.display());
  scratch_dir dir;
  const std::string lock = dir.path() + "/lock";
  {
    server_process s(x.display(), {{"CU_LOCK_PATH", lock}});
    s.expect_exit_status(std::nullopt);
    start_session(s, probe);
    hold_button(s, probe);
    // The guard first, so nobody is left to release: as when a container
    // or a cgroup is killed whole.
    const std::vector<pid_t> guards = started_by(s, lock);
    REQUIRE_FALSE(guards.empty());
    for (pid_t g : guards) ::kill(g, SIGKILL);
    REQUIRE(wait_gone(guards, 5000));
    s.signal(SIGKILL);
    REQUIRE(s.wait_exit(10000));
    CHECK(marker_pid(lock) == s.pid());
  }
  probe.sync();
  REQUIRE(probe.buttons_mask() == kButton1Mask);
  server_process next(x.display(), {{"CU_LOCK_PATH", lock}});
  start_session(next, probe);
  // cursor_position is answered only after the start-up clearing.
  auto pos = next.call_tool("cursor_position");
  CHECK_FALSE(is_error(*pos));
  CHECK(probe.buttons_mask() == 0);
  CHECK(probe.keys_down().empty());
  // Cleared once: the dead server's marker is gone.
  CHECK(marker_pid(lock) == 0);
}

TEST_CASE("a button another XTest client holds when the server starts stays held") {
  // Without a dead server's marker what is down is someone else's: a
  // person's through x11vnc, whose input is XTest input too.
  xvfb x;
  input_probe probe(x.display());
  xcb_test_fake_input(probe.connection(), XCB_BUTTON_PRESS, 1, XCB_CURRENT_TIME, XCB_NONE, 0, 0, 0);
  probe.sync();
  REQUIRE(probe.buttons_mask() == kButton1Mask);
  server_process s(x.display());
  start_session(s, probe);
  auto pos = s.call_tool("cursor_position");
  CHECK_FALSE(is_error(*pos));
  CHECK(probe.buttons_mask() == kButton1Mask);
  CHECK(marker_pid(s.lock_path()) == 0);
  xcb_test_fake_input(probe.connection(), XCB_BUTTON_RELEASE, 1, XCB_CURRENT_TIME, XCB_NONE, 0, 0, 0);
  probe.sync();
  CHECK(probe.buttons_mask() == 0);
}
