// The gamepad toolset on a real kernel's uinput, run inside the guest that
// tests/vm/run-in-vm boots (this machine's kernel has no uinput): every
// tool's events read back from the controller's evdev node with libevdev,
// the hold's length from the kernel's own timestamps, SDL 2's view of the
// controller (tests/vm/sdl_probe), and nothing held at the end of every
// path: a hold's end, gamepad_reset, cancellation, the idle release, stdin's
// end, SIGTERM and SIGKILL (the input guard).
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/child_lines.h"
#include "support/harness.h"

namespace {

using cu::test::json_ptr;
using cu::test::server_process;

// No X display runs in the guest: the gamepad needs none.
const std::string kNoDisplay = ":77";

std::map<std::string, std::string> pad_env(std::map<std::string, std::string> more = {}) {
  more.emplace("CU_TOOLSETS", "gamepad");
  return more;
}

std::string structured(const cu::test::json_line& r, std::string_view key) {
  simdjson::dom::element v;
  if (r.root["result"]["structuredContent"][key].get(v) != simdjson::SUCCESS) return "";
  return std::string(simdjson::minify(v));
}

// The controller's evdev node, from gamepad_state.
std::string device_node(server_process& s) {
  json_ptr r = s.call_tool("gamepad_state");
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(cu::test::is_error(*r));
  std::string_view node;
  REQUIRE(r->root["result"]["structuredContent"]["state"]["device"].get(node) ==
          simdjson::SUCCESS);
  REQUIRE(node.starts_with("/dev/input/event"));
  return std::string(node);
}

// The controller as a program reads it: libevdev on its node, the kernel's
// timestamps on the monotonic clock.
class pad_reader {
 public:
  explicit pad_reader(const std::string& node) {
    fd_ = open(node.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(fd_ >= 0);
    int clock = CLOCK_MONOTONIC;
    ioctl(fd_, EVIOCSCLOCKID, &clock);
    REQUIRE(libevdev_new_from_fd(fd_, &dev_) == 0);
  }
  ~pad_reader() {
    libevdev_free(dev_);
    close(fd_);
  }
  pad_reader(const pad_reader&) = delete;
  pad_reader& operator=(const pad_reader&) = delete;

  libevdev* dev() const { return dev_; }
  bool gone() const { return gone_; }

  // The next event other than a report, or nothing after timeout_ms or
  // once the device is gone.
  std::optional<input_event> next(int timeout_ms) {
    int64_t deadline = cu::test::now_ms() + timeout_ms;
    for (;;) {
      input_event ev;
      int rc = libevdev_next_event(dev_, LIBEVDEV_READ_FLAG_NORMAL, &ev);
      if (rc == LIBEVDEV_READ_STATUS_SUCCESS) {
        if (ev.type == EV_SYN) continue;
        return ev;
      }
      if (rc == LIBEVDEV_READ_STATUS_SYNC) {
        // Events were dropped: replay the device's state as events.
        while (libevdev_next_event(dev_, LIBEVDEV_READ_FLAG_SYNC, &ev) ==
               LIBEVDEV_READ_STATUS_SYNC) {
        }
        continue;
      }
      if (rc == -ENODEV) {
        gone_ = true;
        return std::nullopt;
      }
      int64_t left = deadline - cu::test::now_ms();
      if (left <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      poll(&p, 1, int(left));
    }
  }

  // Events until one of (type, code) with value arrives; that one, or
  // nothing after timeout_ms.
  std::optional<input_event> until(uint16_t type, uint16_t code, int value,
                                   int timeout_ms = 10000) {
    int64_t deadline = cu::test::now_ms() + timeout_ms;
    for (;;) {
      int64_t left = deadline - cu::test::now_ms();
      if (left <= 0) return std::nullopt;
      auto ev = next(int(left));
      if (!ev) return std::nullopt;
      // The log shows each event as the device gave it.
      std::printf("    %s %d\n", libevdev_event_code_get_name(ev->type, ev->code), ev->value);
      seen_.push_back(*ev);
      if (ev->type == type && ev->code == code && ev->value == value) return ev;
    }
  }

  // Everything read so far, as "CODE=value" lines, for failure messages.
  std::string seen() const {
    std::string out;
    for (const input_event& e : seen_) {
      out.append(libevdev_event_code_get_name(e.type, e.code)).append("=");
      out.append(std::to_string(e.value)).append(" ");
    }
    return out;
  }

 private:
  int fd_ = -1;
  libevdev* dev_ = nullptr;
  bool gone_ = false;
  std::vector<input_event> seen_;
};

double ms_between(const input_event& a, const input_event& b) {
  return double(b.input_event_sec - a.input_event_sec) * 1000 +
         double(b.input_event_usec - a.input_event_usec) / 1000;
}

void call_ok(server_process& s, std::string_view tool, std::string_view args) {
  std::printf("  %.*s %.*s\n", int(tool.size()), tool.data(), int(args.size()), args.data());
  json_ptr r = s.call_tool(tool, args);
  REQUIRE(r);
  INFO(tool << " " << args << ": " << r->text);
  REQUIRE_FALSE(cu::test::is_error(*r));
}

// Inputs a reader must see at rest.
void check_neutral(libevdev* d) {
  for (int code : {BTN_A, BTN_B, BTN_X, BTN_Y, BTN_TL, BTN_TR, BTN_START, BTN_SELECT, BTN_MODE,
                   BTN_THUMBL, BTN_THUMBR}) {
    INFO(libevdev_event_code_get_name(EV_KEY, unsigned(code)));
    CHECK(libevdev_get_event_value(d, EV_KEY, unsigned(code)) == 0);
  }
  for (int code : {ABS_X, ABS_Y, ABS_RX, ABS_RY, ABS_Z, ABS_RZ, ABS_HAT0X, ABS_HAT0Y}) {
    INFO(libevdev_event_code_get_name(EV_ABS, unsigned(code)));
    CHECK(libevdev_get_event_value(d, EV_ABS, unsigned(code)) == 0);
  }
}

// Reads until the device is gone, for at most timeout_ms.
void read_until_gone(pad_reader& reader, int timeout_ms = 10000) {
  int64_t deadline = cu::test::now_ms() + timeout_ms;
  while (!reader.gone() && cu::test::now_ms() < deadline) reader.next(200);
  INFO("events: " << reader.seen());
  REQUIRE(reader.gone());
}

// Reads every event until none has come for quiet_ms.
void drain(pad_reader& reader, int quiet_ms = 300) {
  while (auto ev = reader.next(quiet_ms)) {
    std::printf("    %s %d\n", libevdev_event_code_get_name(ev->type, ev->code), ev->value);
  }
}

// A descriptor of the server's own uinput device, taken with pidfd_getfd:
// the controller lives while it is open, so the test can read the last
// events the server (or its guard) wrote before the controller goes, and
// then let it go itself. A device goes when its last descriptor closes.
class device_keeper {
 public:
  explicit device_keeper(pid_t server) {
    int pidfd = int(syscall(SYS_pidfd_open, server, 0));
    REQUIRE(pidfd >= 0);
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(server) + "/fd")) {
      std::error_code ec;
      if (std::filesystem::read_symlink(entry.path(), ec) != "/dev/uinput") continue;
      fd_ = int(syscall(SYS_pidfd_getfd, pidfd, std::stoi(entry.path().filename()), 0));
      break;
    }
    close(pidfd);
    REQUIRE(fd_ >= 0);
  }
  ~device_keeper() { let_go(); }
  device_keeper(const device_keeper&) = delete;
  device_keeper& operator=(const device_keeper&) = delete;
  void let_go() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace

TEST_CASE("the controller is a wired Xbox 360 pad with xpad's buttons and axes") {
  std::printf("%s\n", "the controller is a wired Xbox 360 pad with xpad's buttons and axes");
  server_process s(kNoDisplay, pad_env());
  pad_reader reader(device_node(s));
  libevdev* d = reader.dev();
  CHECK(std::string(libevdev_get_name(d)) == "Microsoft X-Box 360 pad");
  CHECK(libevdev_get_id_bustype(d) == BUS_USB);
  CHECK(libevdev_get_id_vendor(d) == 0x045e);
  CHECK(libevdev_get_id_product(d) == 0x028e);
  for (int code : {BTN_A, BTN_B, BTN_X, BTN_Y, BTN_TL, BTN_TR, BTN_START, BTN_SELECT, BTN_MODE,
                   BTN_THUMBL, BTN_THUMBR}) {
    CHECK(libevdev_has_event_code(d, EV_KEY, unsigned(code)));
  }
  for (int code : {ABS_X, ABS_Y, ABS_RX, ABS_RY}) {
    CHECK(libevdev_get_abs_minimum(d, unsigned(code)) == -32768);
    CHECK(libevdev_get_abs_maximum(d, unsigned(code)) == 32767);
  }
  for (int code : {ABS_Z, ABS_RZ}) {
    CHECK(libevdev_get_abs_minimum(d, unsigned(code)) == 0);
    CHECK(libevdev_get_abs_maximum(d, unsigned(code)) == 255);
  }
  CHECK(libevdev_get_abs_minimum(d, ABS_HAT0X) == -1);
  CHECK(libevdev_get_abs_maximum(d, ABS_HAT0Y) == 1);
  check_neutral(d);
}

TEST_CASE("every tool's events arrive on the evdev node with exact values") {
  std::printf("%s\n", "every tool's events arrive on the evdev node with exact values");
  server_process s(kNoDisplay, pad_env());
  pad_reader reader(device_node(s));

  // Buttons: press stays down until release; each name is its xpad code.
  const std::pair<const char*, int> buttons[] = {
      {"A", BTN_A},         {"B", BTN_B},          {"X", BTN_X},       {"Y", BTN_Y},
      {"LB", BTN_TL},       {"RB", BTN_TR},        {"Start", BTN_START}, {"Back", BTN_SELECT},
      {"Xbox", BTN_MODE},   {"L3", BTN_THUMBL},    {"R3", BTN_THUMBR}};
  for (auto [name, code] : buttons) {
    INFO(name);
    call_ok(s, "gamepad_button", std::string(R"({"button":")") + name + R"(","action":"press"})");
    REQUIRE(reader.until(EV_KEY, uint16_t(code), 1));
    call_ok(s, "gamepad_button", std::string(R"({"button":")") + name + R"(","action":"release"})");
    REQUIRE(reader.until(EV_KEY, uint16_t(code), 0));
  }

  // Triggers: the pressure as it is, and back.
  call_ok(s, "gamepad_trigger", R"({"trigger":"LT","pressure":128})");
  REQUIRE(reader.until(EV_ABS, ABS_Z, 128));
  call_ok(s, "gamepad_trigger", R"({"trigger":"RT","pressure":255})");
  REQUIRE(reader.until(EV_ABS, ABS_RZ, 255));
  call_ok(s, "gamepad_trigger", R"({"trigger":"LT","pressure":0})");
  REQUIRE(reader.until(EV_ABS, ABS_Z, 0));

  // Sticks: x as given; y up-positive in the tools, down-positive on the
  // kernel's axis (as xpad reports a real pad).
  call_ok(s, "gamepad_stick", R"({"stick":"left","x":32767,"y":0})");
  REQUIRE(reader.until(EV_ABS, ABS_X, 32767));
  call_ok(s, "gamepad_stick", R"({"stick":"left","x":0,"y":32767})");
  REQUIRE(reader.until(EV_ABS, ABS_Y, -32767));
  REQUIRE(libevdev_get_event_value(reader.dev(), EV_ABS, ABS_X) == 0);
  call_ok(s, "gamepad_stick", R"({"stick":"right","x":-32768,"y":-32768})");
  REQUIRE(reader.until(EV_ABS, ABS_RY, 32767));
  REQUIRE(libevdev_get_event_value(reader.dev(), EV_ABS, ABS_RX) == -32768);
  call_ok(s, "gamepad_stick", R"({"stick":"right","x":12345,"y":-20000})");
  REQUIRE(reader.until(EV_ABS, ABS_RY, 20000));
  REQUIRE(libevdev_get_event_value(reader.dev(), EV_ABS, ABS_RX) == 12345);

  // The D-pad is xpad's hat: up is -1 on HAT0Y; a direction lets go of its
  // opposite.
  call_ok(s, "gamepad_dpad", R"({"direction":"up","action":"press"})");
  REQUIRE(reader.until(EV_ABS, ABS_HAT0Y, -1));
  call_ok(s, "gamepad_dpad", R"({"direction":"down","action":"press"})");
  REQUIRE(reader.until(EV_ABS, ABS_HAT0Y, 1));
  call_ok(s, "gamepad_dpad", R"({"direction":"left","action":"press"})");
  REQUIRE(reader.until(EV_ABS, ABS_HAT0X, -1));
  call_ok(s, "gamepad_dpad", R"({"direction":"right"})");
  // A tap of right while left is held: right, then nothing when it ends.
  REQUIRE(reader.until(EV_ABS, ABS_HAT0X, 1));
  REQUIRE(reader.until(EV_ABS, ABS_HAT0X, 0));

  // gamepad_state says what is held; gamepad_reset lets go of all of it.
  json_ptr st = s.call_tool("gamepad_state");
  REQUIRE(st);
  INFO(st->text);
  CHECK(structured(*st, "state").find(R"("dpad":["down"])") != std::string::npos);
  CHECK(structured(*st, "state").find(R"("triggers":{"LT":0,"RT":255})") != std::string::npos);
  CHECK(structured(*st, "state").find(R"("right":{"x":12345,"y":-20000})") != std::string::npos);
  call_ok(s, "gamepad_button", R"({"button":"Y","action":"press"})");
  REQUIRE(reader.until(EV_KEY, BTN_Y, 1));
  call_ok(s, "gamepad_reset", "{}");
  REQUIRE(reader.until(EV_KEY, BTN_Y, 0));
  drain(reader);
  check_neutral(reader.dev());
  json_ptr after = s.call_tool("gamepad_state");
  REQUIRE(after);
  CHECK(cu::test::text_of(*after).find("Held now: nothing") != std::string::npos);
}

TEST_CASE("a hold lasts its milliseconds by the kernel's clock, and then lets go") {
  std::printf("%s\n", "a hold lasts its milliseconds by the kernel's clock, and then lets go");
  server_process s(kNoDisplay, pad_env());
  pad_reader reader(device_node(s));
  for (int hold : {50, 300}) {
    INFO("hold " << hold);
    int64_t asked = cu::test::now_ms();
    json_ptr r = s.call_tool("gamepad_button", R"({"button":"A","hold":)" + std::to_string(hold) + "}");
    int64_t answered = cu::test::now_ms();
    REQUIRE(r);
    INFO(r->text);
    REQUIRE_FALSE(cu::test::is_error(*r));
    auto down = reader.until(EV_KEY, BTN_A, 1);
    auto up = reader.until(EV_KEY, BTN_A, 0);
    REQUIRE(down);
    REQUIRE(up);
    double held = ms_between(*down, *up);
    std::printf("button A hold %d ms: down for %.1f ms, answered after %lld ms\n", hold, held,
                static_cast<long long>(answered - asked));
    CHECK(held >= hold - 1);
    CHECK(held <= hold + 250);
    // The answer comes when the hold has ended, and says how long it was.
    CHECK(answered - asked >= hold);
    CHECK(structured(*r, "held_ms") != "");
  }
  // A trigger and a stick held go back to rest; one set without hold stays.
  call_ok(s, "gamepad_trigger", R"({"trigger":"RT","pressure":200,"hold":100})");
  auto pressed = reader.until(EV_ABS, ABS_RZ, 200);
  auto released = reader.until(EV_ABS, ABS_RZ, 0);
  REQUIRE(pressed);
  REQUIRE(released);
  CHECK(ms_between(*pressed, *released) >= 99);
  call_ok(s, "gamepad_stick", R"({"stick":"left","x":-32768,"hold":100})");
  REQUIRE(reader.until(EV_ABS, ABS_X, -32768));
  REQUIRE(reader.until(EV_ABS, ABS_X, 0));
  check_neutral(reader.dev());
}

TEST_CASE("a batch jumps and moves: steps in order, with holds") {
  std::printf("%s\n", "a batch jumps and moves: steps in order, with holds");
  server_process s(kNoDisplay, pad_env());
  pad_reader reader(device_node(s));
  json_ptr r = s.call_tool(
      "computer_batch",
      R"({"actions":[{"name":"gamepad_button","arguments":{"button":"A"}},)"
      R"({"name":"gamepad_stick","arguments":{"stick":"left","x":32767,"y":0,"hold":300}},)"
      R"({"name":"gamepad_trigger","arguments":{"trigger":"RT","pressure":255}}]})");
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(cu::test::is_error(*r));
  auto jump = reader.until(EV_KEY, BTN_A, 1);
  auto landed = reader.until(EV_KEY, BTN_A, 0);
  auto run = reader.until(EV_ABS, ABS_X, 32767);
  auto stop = reader.until(EV_ABS, ABS_X, 0);
  auto fire = reader.until(EV_ABS, ABS_RZ, 255);
  INFO(reader.seen());
  REQUIRE(jump);
  REQUIRE(landed);
  REQUIRE(run);
  REQUIRE(stop);
  REQUIRE(fire);
  // Each step starts when the one before has ended.
  CHECK(ms_between(*jump, *landed) >= 99);
  CHECK(ms_between(*landed, *run) >= 0);
  CHECK(ms_between(*run, *stop) >= 299);
  CHECK(ms_between(*stop, *fire) >= 0);
}

TEST_CASE("SDL 2 opens the controller as an Xbox 360 game controller with its names") {
  std::printf("%s\n", "SDL 2 opens the controller as an Xbox 360 game controller with its names");
  const char* probe = std::getenv("CU_SDL_PROBE");
  REQUIRE(probe != nullptr);
  server_process s(kNoDisplay, pad_env());
  device_node(s);
  cu::test::child_lines sdl({probe}, kNoDisplay);
  REQUIRE(sdl.read_line() == "ready");
  auto added = sdl.read_line();
  REQUIRE(added);
  std::printf("  SDL: %s\n", added->c_str());
  INFO(*added);
  CHECK(added->starts_with("controller name="));
  CHECK(added->find("type=xbox360") != std::string::npos);
  // SDL's GUID: USB bus, then (2.26 on) a checksum of the name, the ids
  // and the version, as its controller database keys them.
  CHECK(added->find("guid=0300") != std::string::npos);
  CHECK(added->find("5e0400008e02000014010000 mapping=") != std::string::npos);
  // Each tool's input under SDL's own name for it.
  const std::pair<const char*, const char*> steps[] = {
      {"gamepad_button", R"({"button":"A","action":"press"})"},
      {"gamepad_button", R"({"button":"X","action":"press"})"},
      {"gamepad_button", R"({"button":"Y","action":"press"})"},
      {"gamepad_button", R"({"button":"LB","action":"press"})"},
      {"gamepad_button", R"({"button":"Back","action":"press"})"},
      {"gamepad_button", R"({"button":"Xbox","action":"press"})"},
      {"gamepad_button", R"({"button":"R3","action":"press"})"},
      {"gamepad_dpad", R"({"direction":"up","action":"press"})"},
      {"gamepad_trigger", R"({"trigger":"RT","pressure":255})"},
      {"gamepad_stick", R"({"stick":"left","x":32767,"y":0})"},
      {"gamepad_stick", R"({"stick":"right","x":0,"y":32767})"},
  };
  const char* expected[] = {"button a 1",        "button x 1",    "button y 1",
                            "button leftshoulder 1", "button back 1", "button guide 1",
                            "button rightstick 1",   "button dpup 1", "axis righttrigger 32767",
                            "axis leftx 32767",      "axis righty -32767"};
  for (size_t i = 0; i < std::size(steps); ++i) {
    INFO(steps[i].first << " " << steps[i].second << " -> " << expected[i]);
    call_ok(s, steps[i].first, steps[i].second);
    auto lines = sdl.read_until(expected[i]);
    REQUIRE(lines);
    std::printf("    SDL: %s\n", expected[i]);
  }
  call_ok(s, "gamepad_reset", "{}");
  std::vector<std::string> after;
  auto saw = [&](std::string_view line) {
    for (const std::string& l : after) {
      if (l == line) return true;
    }
    return false;
  };
  const char* ups[] = {"button a 0", "button guide 0", "button dpup 0", "axis righttrigger 0",
                       "axis leftx 0", "axis righty 0"};
  int64_t deadline = cu::test::now_ms() + 10000;
  auto all_seen = [&] {
    for (const char* up : ups) {
      if (!saw(up)) return false;
    }
    return true;
  };
  while (!all_seen() && cu::test::now_ms() < deadline) {
    auto line = sdl.read_line(int(deadline - cu::test::now_ms()));
    if (!line) break;
    std::printf("    SDL: %s\n", line->c_str());
    after.push_back(*line);
  }
  std::string lines;
  for (const std::string& l : after) lines.append(l).append("; ");
  INFO("SDL after reset: " << lines);
  for (const char* up : ups) {
    INFO(up);
    CHECK(saw(up));
  }
}

TEST_CASE("nothing stays held when a hold is cancelled, or idle too long") {
  std::printf("%s\n", "nothing stays held when a hold is cancelled, or idle too long");
  server_process s(kNoDisplay, pad_env({{"CU_IDLE_RELEASE_SECS", "1"}}));
  pad_reader reader(device_node(s));
  // A hold of 20 s, cancelled: the stick is centred at once and no answer
  // comes.
  s.send(R"({"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"gamepad_stick","arguments":{"stick":"left","x":30000,"hold":20000}}})");
  auto moved = reader.until(EV_ABS, ABS_X, 30000);
  REQUIRE(moved);
  s.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"held"}})");
  auto centred = reader.until(EV_ABS, ABS_X, 0, 5000);
  REQUIRE(centred);
  CHECK(ms_between(*moved, *centred) < 5000);
  CHECK_FALSE(s.read_response(R"("held")", 300));
  // A press with no request after it for CU_IDLE_RELEASE_SECS is let go.
  call_ok(s, "gamepad_button", R"({"button":"B","action":"press"})");
  auto down = reader.until(EV_KEY, BTN_B, 1);
  auto up = reader.until(EV_KEY, BTN_B, 0, 10000);
  REQUIRE(down);
  REQUIRE(up);
  CHECK(ms_between(*down, *up) >= 900);
  check_neutral(reader.dev());
}

TEST_CASE("stdin's end and SIGTERM let go of everything before the controller goes") {
  std::printf("%s\n", "stdin's end and SIGTERM let go of everything before the controller goes");
  for (bool sigterm : {false, true}) {
    INFO((sigterm ? "SIGTERM" : "stdin EOF"));
    server_process s(kNoDisplay, pad_env());
    pad_reader reader(device_node(s));
    device_keeper keep(s.pid());
    call_ok(s, "gamepad_button", R"({"button":"A","action":"press"})");
    call_ok(s, "gamepad_trigger", R"({"trigger":"LT","pressure":200})");
    call_ok(s, "gamepad_stick", R"({"stick":"right","x":-32768,"y":32767})");
    // A hold in progress answers early, saying why.
    s.send(R"({"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"gamepad_dpad","arguments":{"direction":"left","hold":30000}}})");
    REQUIRE(reader.until(EV_ABS, ABS_HAT0X, -1));
    std::printf("  %s\n", sigterm ? "SIGTERM" : "stdin closed");
    if (sigterm) {
      s.signal(SIGTERM);
    } else {
      s.close_stdin();
    }
    if (!sigterm) {
      json_ptr early = s.read_response(R"("long")");
      REQUIRE(early);
      CHECK(cu::test::is_error(*early));
      CHECK(cu::test::text_of(*early).find("ended early") != std::string::npos);
    }
    REQUIRE(s.wait_exit());
    // The server is gone; what it wrote before is all there is.
    drain(reader);
    INFO("events: " << reader.seen());
    CHECK_FALSE(reader.gone());
    check_neutral(reader.dev());
    keep.let_go();
    read_until_gone(reader);
    std::printf("    (the device is gone)\n");
  }
}

TEST_CASE("a server killed with SIGKILL leaves nothing held: the input guard lets go") {
  std::printf("%s\n", "a server killed with SIGKILL leaves nothing held: the input guard lets go");
  server_process s(kNoDisplay, pad_env());
  s.expect_exit_status(std::nullopt);
  pad_reader reader(device_node(s));
  device_keeper keep(s.pid());
  call_ok(s, "gamepad_button", R"({"button":"RB","action":"press"})");
  call_ok(s, "gamepad_trigger", R"({"trigger":"RT","pressure":99})");
  call_ok(s, "gamepad_stick", R"({"stick":"left","x":1000,"y":-1000})");
  call_ok(s, "gamepad_dpad", R"({"direction":"down","action":"press"})");
  REQUIRE(reader.until(EV_ABS, ABS_HAT0Y, 1));
  std::printf("  SIGKILL\n");
  s.signal(SIGKILL);
  REQUIRE(s.wait_exit());
  // The guard lets go of each input, then of its copy of the device.
  REQUIRE(reader.until(EV_ABS, ABS_HAT0Y, 0));
  drain(reader);
  INFO("events: " << reader.seen());
  check_neutral(reader.dev());
  keep.let_go();
  read_until_gone(reader);
  std::printf("    (the device is gone)\n");
}

TEST_CASE("without a usable uinput node the tools are listed and say why") {
  std::printf("%s\n", "without a usable uinput node the tools are listed and say why");
  // No such node: the module is not loaded.
  {
    server_process s(kNoDisplay, pad_env({{"CU_UINPUT", "/dev/no-uinput-here"}}));
    json_ptr list = s.request("tools/list");
    REQUIRE(list);
    for (const char* name : {"gamepad_button", "gamepad_trigger", "gamepad_stick", "gamepad_dpad",
                             "gamepad_reset", "gamepad_state"}) {
      std::string quoted = "\"";
      quoted.append(name).append("\"");
      CHECK(list->text.find(quoted) != std::string::npos);
    }
    json_ptr r = s.call_tool("gamepad_button", R"({"button":"A"})");
    REQUIRE(r);
    CHECK(cu::test::is_error(*r));
    CHECK(cu::test::text_of(*r).find("no /dev/no-uinput-here (load the uinput module") !=
          std::string::npos);
  }
  // A node this user may not open: the input group or a udev rule.
  if (geteuid() == 0) {
    // As nobody, with a lock and a save folder nobody may write.
    server_process s(kNoDisplay,
                     pad_env({{"CU_LOCK_PATH", "/tmp/cu-gamepad-nobody.lock"},
                              {"CU_SAVE_DIR", "/tmp/cu-gamepad-nobody/"}}),
                     {}, {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
    json_ptr r = s.call_tool("gamepad_state");
    INFO(s.stderr_text());
    REQUIRE(r);
    CHECK(cu::test::is_error(*r));
    CHECK(cu::test::text_of(*r).find("permission denied opening /dev/uinput") !=
          std::string::npos);
  }
}
