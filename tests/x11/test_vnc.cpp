// The server beside a human watching and taking over through VNC
// (docs/watching.md): x11vnc serves the test's Xvfb, and a minimal RFB 3.8
// client written here (no authentication, KeyEvent and PointerEvent only)
// is the human, whose input reaches X through x11vnc's own XTest requests.
// The human holds a key or a button while the server (with CU_TRACE_DIR)
// clicks and types and exits; the test then checks that the human's input
// was not taken for the agent's: still held after the server is gone,
// absent from the trace, not released when a server starts, and neither
// pressed again nor released by the agent when it needs the same key or
// button.
// Skipped, saying so, when x11vnc is not installed. Waits are on the X
// server's keyboard and pointer state (polled: x11vnc acts on its own
// time), never sleeps.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <filesystem>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

bool have_x11vnc() { return ::system("command -v x11vnc >/dev/null 2>&1") == 0; }

// A port nobody listens on now (bound, then let go for x11vnc to take).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// x11vnc serving display on localhost:port, stopped with the test.
class vnc_server {
 public:
  vnc_server(const std::string& display, int port) {
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const std::string p = std::to_string(port);
      // -noshm: x11vnc removes its MIT-SHM segments (about 60 SysV
      // segments on this screen) only in the clean-up that SIGKILL skips,
      // so every killed x11vnc leaked them until the machine's 4096 were
      // gone, and from then on every x11vnc exited at its first shmget
      // (x11-vnc failed by the history of the machine, not by the server).
      // Without MIT-SHM it reads the screen with GetImage and creates none.
      ::execlp("x11vnc", "x11vnc", "-display", display.c_str(), "-localhost", "-forever",
               "-shared", "-nopw", "-quiet", "-rfbport", p.c_str(), "-norc", "-noxdamage",
               "-noshm",
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  // x11vnc's own SIGTERM handling can hang in its clean-up, so its process
  // group is killed. It runs with -noshm: killed, it would leave its 62
  // System V segments behind, and a few dozen runs use up the machine's
  // 4096 (then x11vnc, and any program after it, cannot make one).
  ~vnc_server() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  vnc_server(const vnc_server&) = delete;
  vnc_server& operator=(const vnc_server&) = delete;

  // The exit status once x11vnc has ended (it is reaped), nothing while it
  // runs: an x11vnc that failed to start never listens.
  std::optional<int> exited() {
    if (status_) return status_;
    int st = 0;
    if (pid_ > 0 && ::waitpid(pid_, &st, WNOHANG) == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      // Reaped: the process group may be gone, and its number reused.
      pid_ = -1;
    }
    return status_;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// The human: an RFB 3.8 client with no authentication that sends key and
// pointer events, as a VNC viewer does.
class rfb_client {
 public:
  rfb_client(vnc_server& vnc, int port) : vnc_(vnc) {
    // x11vnc listens a moment after it starts: try until it answers, and
    // fail at once, with its status, if it has exited instead.
    wait_until(
        [&] {
          const std::optional<int> status = vnc.exited();
          INFO("x11vnc exited with status " << status.value_or(-1) << " before it listened");
          REQUIRE_FALSE(status);
          fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
          sockaddr_in a{};
          a.sin_family = AF_INET;
          a.sin_port = htons(uint16_t(port));
          a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
          if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return true;
          ::close(fd_);
          fd_ = -1;
          return false;
        },
        "x11vnc listening");
    std::string version = read_n(12);
    REQUIRE(version.rfind("RFB 003.", 0) == 0);
    write_all("RFB 003.008\n");
    const uint8_t count = uint8_t(read_n(1)[0]);
    REQUIRE(count > 0);
    const std::string types = read_n(count);
    REQUIRE(types.find('\x01') != std::string::npos);  // None.
    write_all(std::string(1, '\x01'));
    const std::string result = read_n(4);
    REQUIRE(result == std::string(4, '\0'));
    write_all(std::string(1, '\x01'));  // ClientInit: shared.
    const std::string init = read_n(24);  // Size, pixel format, name length.
    const uint32_t name_len = uint32_t(uint8_t(init[20])) << 24 | uint32_t(uint8_t(init[21])) << 16 |
                              uint32_t(uint8_t(init[22])) << 8 | uint32_t(uint8_t(init[23]));
    read_n(name_len);
  }
  ~rfb_client() {
    if (fd_ >= 0) ::close(fd_);
  }
  rfb_client(const rfb_client&) = delete;
  rfb_client& operator=(const rfb_client&) = delete;

  void key(uint32_t keysym, bool down) {
    std::string m = {'\x04', char(down ? 1 : 0), 0, 0, char(keysym >> 24), char(keysym >> 16),
                     char(keysym >> 8), char(keysym)};
    write_all(m);
  }
  void pointer(uint8_t buttons, int x, int y) {
    std::string m = {'\x05', char(buttons), char(x >> 8), char(x), char(y >> 8), char(y)};
    write_all(m);
  }

 private:
  std::string read_n(size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_, out.data() + got, n - got);
      // A reset here is x11vnc exiting after it began to listen.
      INFO("read: " << (r < 0 ? std::strerror(errno) : "end of stream") << "; x11vnc "
                    << (vnc_.exited() ? "exited with status " + std::to_string(*vnc_.exited())
                                      : std::string("runs")));
      REQUIRE(r > 0);
      got += size_t(r);
    }
    return out;
  }
  void write_all(const std::string& s) {
    REQUIRE(::write(fd_, s.data(), s.size()) == ssize_t(s.size()));
  }
  vnc_server& vnc_;
  int fd_ = -1;
};

bool key_held(input_probe& probe, uint32_t keysym) {
  for (uint8_t kc : probe.keys_down()) {
    if (probe.keycode_has(kc, {keysym})) return true;
  }
  return false;
}

// A fresh directory for a trace, removed with the others when the test
// program ends (a failed case's trace is gone too: its records are in the
// failure's messages).
std::string make_dir() {
  struct made {
    std::vector<std::string> dirs;
    ~made() {
      std::error_code ignored;
      for (const std::string& d : dirs) std::filesystem::remove_all(d, ignored);
    }
  };
  static made all;
  char tmpl[] = "/tmp/cu-vnc-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  all.dirs.push_back(tmpl);
  return tmpl;
}

// The "input" arrays of every call record in the trace files of dir, as
// (type, keysym or button) words, in order.
std::vector<std::string> traced_input(const std::string& dir) {
  constexpr std::string_view kOpen = R"(<script type="application/json" class="cu">)";
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.rfind("trace-", 0) != 0) continue;
    std::ifstream f(dir + "/" + n);
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind(kOpen, 0) != 0 || !line.ends_with("</script>")) continue;
      json_ptr r = parse_json(line.substr(kOpen.size(), line.size() - kOpen.size() - 9));
      REQUIRE(r);
      simdjson::dom::array in;
      if (r->root["input"].get(in) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element ev : in) {
        std::string_view type, keysym;
        REQUIRE(ev["type"].get(type) == simdjson::SUCCESS);
        if (ev["keysym"].get(keysym) == simdjson::SUCCESS) {
          out.push_back(std::string(type) + " " + std::string(keysym));
        } else if (type == "move") {
          out.push_back("move");
        } else {
          out.push_back(std::string(type) + " " + std::to_string(num(ev, "button")));
        }
      }
    }
  }
  closedir(d);
  return out;
}

constexpr uint32_t kXK_b = 0x62;

}  // namespace

TEST_CASE("a key a VNC user holds stays held through the agent's click and typing, and is not in the trace") {
  if (!have_x11vnc()) {
    WARN("SKIP: x11vnc is not installed (Debian package x11vnc)");
    return;
  }
  xvfb x;
  input_probe probe(x.display());
  const int port = free_port();
  vnc_server vnc(x.display(), port);
  rfb_client human(vnc, port);
  const std::string dir = make_dir();
  {
    server_process s(x.display(), {{"CU_TRACE_DIR", dir}});
    ok_call(s, "screenshot");
    // The human takes hold once the server runs; a key held at its start
    // has a case of its own.
    human.key(kXK_Shift_L, true);
    wait_until([&] { return key_held(probe, kXK_Shift_L); }, "the human's Shift down");
    probe.take();
    ok_call(s, "left_click", R"({"coordinate":[300,200]})");
    ok_call(s, "type", R"({"text":"ab"})");
    s.close_stdin();
    REQUIRE(s.wait_exit() == 0);
  }

  // (1) The server released only what it pressed.
  CHECK(key_held(probe, kXK_Shift_L));
  // (2) The typed keys arrived in order: a then b. X keeps one modifier
  // state for the seat, so the human's Shift is in their state (a program
  // reads "AB"): docs/watching.md says so.
  std::vector<input_event> ks = keys(probe.take());
  std::vector<uint32_t> pressed;
  for (const input_event& e : ks) {
    if (e.type != XCB_KEY_PRESS) continue;
    pressed.push_back(probe.keysym_of(e.detail));
    CHECK(e.state == kShiftMask);
  }
  INFO(describe(ks));
  CHECK(pressed == std::vector<uint32_t>{kXK_a, kXK_b});
  // (3) The trace holds the agent's input only: no Shift of the human's.
  std::vector<std::string> in = traced_input(dir);
  std::string all;
  for (const std::string& w : in) all += w + ", ";
  INFO(all);
  CHECK(in == std::vector<std::string>{"move", "press 1", "release 1", "key a", "key a",
                                       "key b", "key b"});
  // (4) Once the human lets go, nothing is held.
  human.key(kXK_Shift_L, false);
  wait_until([&] { return !key_held(probe, kXK_Shift_L); }, "the human's Shift up");
  check_nothing_pressed(probe);
}

TEST_CASE("cursor_position answers where a VNC user left the pointer, not where the agent put it") {
  if (!have_x11vnc()) {
    WARN("SKIP: x11vnc is not installed (Debian package x11vnc)");
    return;
  }
  xvfb x;
  input_probe probe(x.display());
  const int port = free_port();
  vnc_server vnc(x.display(), port);
  rfb_client human(vnc, port);
  server_process s(x.display());
  ok_call(s, "screenshot");
  ok_call(s, "mouse_move", R"({"coordinate":[100,100]})");
  human.pointer(0, 1406, 844);
  wait_until([&] { return probe.pointer() == std::pair{1406, 844}; }, "the human's move");
  auto pos = s.call_tool("cursor_position");
  REQUIRE_FALSE(is_error(*pos));
  // Root (1406, 844) in the 1366x768 image of a 1920x1080 screen.
  CHECK(int_array(text_of(*pos)) == std::vector<int64_t>{1000, 600});
  check_nothing_pressed(probe);
}

TEST_CASE("a VNC user's held key outlives the idle release of the agent's button and the server's exit") {
  if (!have_x11vnc()) {
    WARN("SKIP: x11vnc is not installed (Debian package x11vnc)");
    return;
  }
  xvfb x;
  input_probe probe(x.display());
  const int port = free_port();
  vnc_server vnc(x.display(), port);
  rfb_client human(vnc, port);
  server_process s(x.display(), {{"CU_IDLE_RELEASE_SECS", "1"}});
  ok_call(s, "screenshot");
  human.key(kXK_Control_L, true);
  wait_until([&] { return key_held(probe, kXK_Control_L); }, "the human's Control down");
  // The agent holds a key of its own, which the idle release lets go.
  s.send(R"({"jsonrpc":"2.0","id":"hold","method":"tools/call","params":{"name":"left_mouse_down","arguments":{}}})");
  wait_until([&] { return probe.buttons_mask() == kButton1Mask; }, "the agent's button down");
  wait_until([&] { return probe.buttons_mask() == 0; }, "the idle release", 5000);
  CHECK(key_held(probe, kXK_Control_L));
  s.close_stdin();
  REQUIRE(s.wait_exit() == 0);
  CHECK(key_held(probe, kXK_Control_L));
  human.key(kXK_Control_L, false);
  wait_until([&] { return !key_held(probe, kXK_Control_L); }, "the human's Control up");
  check_nothing_pressed(probe);
}

TEST_CASE("a Shift a VNC user holds before the server starts stays held after it starts and clicks") {
  // At start-up the server releases what is down only when a previous
  // server died leaving its marker (src/input/marker.h): x11vnc's input is
  // XTest input too, and the person's Shift is not a predecessor's.
  if (!have_x11vnc()) {
    WARN("SKIP: x11vnc is not installed (Debian package x11vnc)");
    return;
  }
  xvfb x;
  input_probe probe(x.display());
  const int port = free_port();
  vnc_server vnc(x.display(), port);
  rfb_client human(vnc, port);
  human.key(kXK_Shift_L, true);
  wait_until([&] { return key_held(probe, kXK_Shift_L); }, "the human's Shift down");
  {
    server_process s(x.display());
    ok_call(s, "screenshot");
    ok_call(s, "left_click", R"({"coordinate":[300,200]})");
    CHECK(key_held(probe, kXK_Shift_L));
    s.close_stdin();
    REQUIRE(s.wait_exit() == 0);
  }
  CHECK(key_held(probe, kXK_Shift_L));
  human.key(kXK_Shift_L, false);
  wait_until([&] { return !key_held(probe, kXK_Shift_L); }, "the human's Shift up");
  check_nothing_pressed(probe);
}

TEST_CASE("the agent typing a capital while a VNC user holds Shift leaves the Shift held") {
  // The agent needs Shift for "A" and finds it down: it neither presses nor
  // releases it, and the person's Shift makes the capital.
  if (!have_x11vnc()) {
    WARN("SKIP: x11vnc is not installed (Debian package x11vnc)");
    return;
  }
  xvfb x;
  input_probe probe(x.display());
  const int port = free_port();
  vnc_server vnc(x.display(), port);
  rfb_client human(vnc, port);
  server_process s(x.display());
  ok_call(s, "screenshot");
  human.key(kXK_Shift_L, true);
  wait_until([&] { return key_held(probe, kXK_Shift_L); }, "the human's Shift down");
  probe.take();
  ok_call(s, "type", R"({"text":"A"})");
  CHECK(key_held(probe, kXK_Shift_L));
  // The key a, pressed and released with Shift in its state, and no Shift
  // of the agent's.
  std::vector<input_event> ks = keys(probe.take());
  INFO(describe(ks));
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].type == XCB_KEY_PRESS);
  CHECK(ks[1].type == XCB_KEY_RELEASE);
  for (const input_event& e : ks) {
    CHECK(probe.keysym_of(e.detail) == kXK_a);
    CHECK(e.state == kShiftMask);
  }
  // The same with a chord of the agent's: key shift+b.
  ok_call(s, "key", R"({"text":"shift+b"})");
  CHECK(key_held(probe, kXK_Shift_L));
  ks = keys(probe.take());
  INFO(describe(ks));
  REQUIRE(ks.size() == 2);
  CHECK(probe.keysym_of(ks[0].detail) == kXK_b);
  s.close_stdin();
  REQUIRE(s.wait_exit() == 0);
  CHECK(key_held(probe, kXK_Shift_L));
  human.key(kXK_Shift_L, false);
  wait_until([&] { return !key_held(probe, kXK_Shift_L); }, "the human's Shift up");
  check_nothing_pressed(probe);
}

TEST_CASE("an agent's click neither presses nor releases the button a VNC user holds") {
  // XTest keeps one down state per button, whoever pressed it: the agent
  // finds the button down and leaves it to the person, so the click is the
  // person's drag moved to the agent's point (docs/watching.md).
  if (!have_x11vnc()) {
    WARN("SKIP: x11vnc is not installed (Debian package x11vnc)");
    return;
  }
  xvfb x;
  input_probe probe(x.display());
  const int port = free_port();
  vnc_server vnc(x.display(), port);
  rfb_client human(vnc, port);
  server_process s(x.display());
  ok_call(s, "screenshot");
  human.pointer(1, 500, 500);
  wait_until([&] { return probe.buttons_mask() == kButton1Mask; }, "the human's button down");
  probe.take();
  ok_call(s, "left_click", R"({"coordinate":[100,100]})");
  CHECK(probe.buttons_mask() == kButton1Mask);
  std::vector<input_event> bs = buttons(probe.take());
  INFO(describe(bs));
  CHECK(bs.empty());
  s.close_stdin();
  REQUIRE(s.wait_exit() == 0);
  CHECK(probe.buttons_mask() == kButton1Mask);
  human.pointer(0, 500, 500);
  wait_until([&] { return probe.buttons_mask() == 0; }, "the human's button up");
  check_nothing_pressed(probe);
}
