// bench_gamepad [--server PATH] [--samples N] [--warmup N] [--csv FILE] [--raw FILE]
// [--no-python]: the gamepad toolset's latency from a tool call to the
// evdev event, beside the kernel's floor, in one run. It needs /dev/uinput,
// so it runs as root inside the guest tests/vm/run-in-vm boots
// (tools/bench/bench-gamepad does that). The rows, N samples each (default
// 200) after a few untimed ones:
//
//   server, gamepad_button A   the real binary (CU_TOOLSETS=gamepad) on
//                              pipes: tools/call press, release, press, ...,
//                              timed from writing the request line to
//                              reading the EV_KEY event from the
//                              controller's evdev node (libevdev), and to
//                              reading the response line;
//   server, gamepad_stick      the same with the left stick's x going
//                              between two values, to the ABS_X event;
//   uinput floor               this program's own uinput device
//                              (libevdev_uinput_create_from_device): one
//                              libevdev_uinput_write_event and a report per
//                              sample, timed to the event read back, for
//                              EV_KEY and for EV_ABS;
//   python-evdev UInput        /usr/bin/python3 with python3-evdev as a
//                              child: a line on its stdin makes it write the
//                              key and a report, timed from writing the line
//                              to the event read back; skipped, with the
//                              reason, when the module is not there.
//
// The rows take turns sample by sample (one of each, then the next), so
// that the machine's load hits them alike. Prints a markdown table on
// stdout (median and p90 in microseconds, each median over its floor's,
// the server's peak RSS from VmHWM); --csv FILE writes the same rows as
// CSV too, --raw FILE every timed sample (row, event or response, us).
// Progress and skips go to stderr.
#include <fcntl.h>
#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

// A call, a report or a read that takes longer than this means something
// is broken, not slow, even under emulation.
constexpr int kTimeoutMs = 10000;

[[noreturn]] void die(const std::string& why) {
  fprintf(stderr, "bench_gamepad: %s\n", why.c_str());
  exit(1);
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Writes all of text to fd, or dies.
void write_all(int fd, std::string_view text, const char* to) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die(std::string("writing to ") + to + ": " + strerror(errno));
    text.remove_prefix(size_t(n));
  }
}

// A child on pipes: its stdin to write lines to, its stdout read line by
// line without blocking, its stderr to a file shown when it fails.
class child {
 public:
  child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
        const std::string& stderr_path)
      : stderr_path_(stderr_path) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) die("pipe failed");
    std::vector<char*> args, envp;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) die("fork failed");
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) dup2(err, 2);
      execve(args[0], args.data(), envp.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
    fcntl(out_, F_SETFL, O_NONBLOCK);
  }
  ~child() {
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  pid_t pid() const { return pid_; }
  int out_fd() const { return out_; }
  void send(std::string_view line) { write_all(in_, line, "a child's stdin"); }

  // Reads what is there; false at EOF.
  bool fill() {
    char buf[65536];
    for (;;) {
      ssize_t n = read(out_, buf, sizeof buf);
      if (n > 0) {
        buffer_.append(buf, size_t(n));
        continue;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      return true;  // EAGAIN: nothing more for now.
    }
  }
  // A whole line read so far (without its newline), if any.
  std::optional<std::string> take_line() {
    size_t nl = buffer_.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    return line;
  }
  // The next line, waiting up to timeout_ms.
  std::string read_line(int timeout_ms = kTimeoutMs) {
    int64_t deadline = now_ns() + int64_t(timeout_ms) * 1000000;
    for (;;) {
      if (auto line = take_line()) return *line;
      bool open = fill();
      if (auto line = take_line()) return *line;
      if (!open) die("the child ended; its stderr:\n" + stderr_text());
      int left = int((deadline - now_ns()) / 1000000);
      if (left <= 0) die("no line from the child; its stderr:\n" + stderr_text());
      pollfd p{out_, POLLIN, 0};
      poll(&p, 1, left);
    }
  }
  std::string stderr_text() const {
    std::ifstream f(stderr_path_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // Closes its stdin and waits for it to end.
  void finish() {
    close(in_);
    in_ = -1;
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string stderr_path_;
  std::string buffer_;
};

// An evdev node read with libevdev, its timestamps on the monotonic clock.
class node_reader {
 public:
  explicit node_reader(const std::string& node) {
    fd_ = open(node.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) die("cannot open " + node + ": " + strerror(errno));
    int clock = CLOCK_MONOTONIC;
    ioctl(fd_, EVIOCSCLOCKID, &clock);
    if (libevdev_new_from_fd(fd_, &dev_) != 0) die("libevdev cannot read " + node);
  }
  ~node_reader() {
    libevdev_free(dev_);
    close(fd_);
  }
  node_reader(const node_reader&) = delete;
  node_reader& operator=(const node_reader&) = delete;

  int fd() const { return fd_; }

  // Reads the events there are; true once (type, code, value) was among
  // them.
  bool saw(uint16_t type, uint16_t code, int value) {
    bool found = false;
    input_event ev;
    for (;;) {
      int rc = libevdev_next_event(dev_, LIBEVDEV_READ_FLAG_NORMAL, &ev);
      if (rc == LIBEVDEV_READ_STATUS_SYNC) {
        // Events were dropped: the device's state comes as events instead.
        while (libevdev_next_event(dev_, LIBEVDEV_READ_FLAG_SYNC, &ev) ==
               LIBEVDEV_READ_STATUS_SYNC) {
          found = found || (ev.type == type && ev.code == code && ev.value == value);
        }
        continue;
      }
      if (rc != LIBEVDEV_READ_STATUS_SUCCESS) break;
      found = found || (ev.type == type && ev.code == code && ev.value == value);
    }
    return found;
  }

  // Waits until (type, code, value) is read; the time it was, in ns.
  int64_t wait_for(uint16_t type, uint16_t code, int value) {
    int64_t deadline = now_ns() + int64_t(kTimeoutMs) * 1000000;
    for (;;) {
      if (saw(type, code, value)) return now_ns();
      int left = int((deadline - now_ns()) / 1000000);
      if (left <= 0) {
        die(std::string("no ") + libevdev_event_code_get_name(type, code) + "=" +
            std::to_string(value) + " on the node");
      }
      pollfd p{fd_, POLLIN, 0};
      poll(&p, 1, left);
    }
  }

 private:
  int fd_ = -1;
  libevdev* dev_ = nullptr;
};

// The server on pipes, initialized, with its controller's node.
class server {
 public:
  server(const std::string& binary, const std::string& tmp)
      : proc_({binary}, environment(tmp), tmp + "/server.stderr") {
    send_request("initialize",
                 R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                 R"("clientInfo":{"name":"bench_gamepad","version":"1"}})");
    await_response();
    proc_.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    send_request("tools/call", R"({"name":"gamepad_state","arguments":{}})");
    std::string answer = await_response();
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    std::string_view node;
    if (parser.parse(answer).get(root) != simdjson::SUCCESS ||
        root["result"]["structuredContent"]["state"]["device"].get(node) != simdjson::SUCCESS) {
      die("gamepad_state named no device: " + answer.substr(0, 400));
    }
    node_ = std::string(node);
  }

  const std::string& node() const { return node_; }
  pid_t pid() const { return proc_.pid(); }
  int out_fd() const { return proc_.out_fd(); }

  // Writes a request line; its id.
  int64_t send_request(std::string_view method, std::string_view params) {
    int64_t id = next_id_++;
    std::string line = "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
                       ",\"method\":\"" + std::string(method) + "\",\"params\":" +
                       std::string(params) + "}\n";
    proc_.send(line);
    return id;
  }

  // Reads what is there; the response to id, once read (other lines, such
  // as notifications, are passed over). A failed call ends the bench.
  std::optional<std::string> response_to(int64_t id) {
    if (!proc_.fill()) die("the server ended; its stderr:\n" + proc_.stderr_text());
    while (auto line = proc_.take_line()) {
      simdjson::dom::element root;
      int64_t got = 0;
      if (parser_.parse(*line).get(root) != simdjson::SUCCESS) die("not JSON: " + *line);
      if (root["id"].get(got) != simdjson::SUCCESS || got != id) continue;
      bool is_error = false;
      if (root["error"].error() == simdjson::SUCCESS ||
          (root["result"]["isError"].get(is_error) == simdjson::SUCCESS && is_error)) {
        die("the call failed: " + line->substr(0, 400));
      }
      return *line;
    }
    return std::nullopt;
  }

  // The response to the last request.
  std::string await_response() {
    int64_t deadline = now_ns() + int64_t(kTimeoutMs) * 1000000;
    for (;;) {
      if (auto r = response_to(next_id_ - 1)) return *r;
      int left = int((deadline - now_ns()) / 1000000);
      if (left <= 0) die("no response; the server's stderr:\n" + proc_.stderr_text());
      pollfd p{proc_.out_fd(), POLLIN, 0};
      poll(&p, 1, left);
    }
  }

  // The server's peak resident set, in KiB.
  long vm_hwm_kib() const {
    std::ifstream status("/proc/" + std::to_string(proc_.pid()) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.starts_with("VmHWM:")) return atol(line.c_str() + 6);
    }
    return 0;
  }

  void finish() { proc_.finish(); }

 private:
  static std::vector<std::string> environment(const std::string& tmp) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view kv = *e;
      if (kv.starts_with("CU_TOOLSETS=") || kv.starts_with("CU_LOCK_PATH=") ||
          kv.starts_with("CU_SAVE_DIR=") || kv.starts_with("DISPLAY=")) {
        continue;
      }
      env.emplace_back(kv);
    }
    // No X display is needed for the controller; the server is told of one
    // that is not there, as tests/vm/test_gamepad.cpp does.
    env.emplace_back("DISPLAY=:77");
    env.emplace_back("CU_TOOLSETS=gamepad");
    env.emplace_back("CU_LOCK_PATH=" + tmp + "/lock");
    env.emplace_back("CU_SAVE_DIR=" + tmp);
    return env;
  }

  child proc_;
  std::string node_;
  int64_t next_id_ = 1;
  simdjson::dom::parser parser_;
};

struct sample {
  double event_us = 0;
  double response_us = NAN;  // The server's rows only.
};

struct row {
  std::string name;
  std::string floor;  // The name of the floor row it is compared with; empty for a floor.
  std::vector<sample> samples;
};

// One server call: the request written, then the event and the response
// line read in whichever order they come.
sample time_call(server& s, node_reader& pad, std::string_view params, uint16_t type,
                 uint16_t code, int value) {
  int64_t t0 = now_ns();
  int64_t id = s.send_request("tools/call", params);
  std::optional<int64_t> event_at, response_at;
  int64_t deadline = t0 + int64_t(kTimeoutMs) * 1000000;
  while (!event_at || !response_at) {
    pollfd p[2] = {{pad.fd(), POLLIN, 0}, {s.out_fd(), POLLIN, 0}};
    int left = int((deadline - now_ns()) / 1000000);
    if (left <= 0) die("call " + std::string(params) + " timed out");
    poll(p, 2, left);
    if (!event_at && pad.saw(type, code, value)) event_at = now_ns();
    if (!response_at && s.response_to(id)) response_at = now_ns();
  }
  return {double(*event_at - t0) / 1000, double(*response_at - t0) / 1000};
}

// This program's own uinput device: the floor, with the controller's key
// and stick axis.
class own_device {
 public:
  own_device() {
    libevdev* d = libevdev_new();
    libevdev_set_name(d, "bench_gamepad floor");
    libevdev_set_id_bustype(d, BUS_VIRTUAL);
    libevdev_enable_event_type(d, EV_KEY);
    libevdev_enable_event_code(d, EV_KEY, BTN_A, nullptr);
    // The stick's range, fuzz and flat are xpad's, as the server's are.
    input_absinfo abs{};
    abs.minimum = -32768;
    abs.maximum = 32767;
    abs.fuzz = 16;
    abs.flat = 128;
    libevdev_enable_event_type(d, EV_ABS);
    libevdev_enable_event_code(d, EV_ABS, ABS_X, &abs);
    int rc = libevdev_uinput_create_from_device(d, LIBEVDEV_UINPUT_OPEN_MANAGED, &ui_);
    libevdev_free(d);
    if (rc != 0) die(std::string("cannot make a uinput device: ") + strerror(-rc));
    const char* node = libevdev_uinput_get_devnode(ui_);
    if (node == nullptr) die("the uinput device has no node");
    node_ = node;
  }
  ~own_device() { libevdev_uinput_destroy(ui_); }
  own_device(const own_device&) = delete;
  own_device& operator=(const own_device&) = delete;

  const std::string& node() const { return node_; }
  void write(uint16_t type, uint16_t code, int value) {
    libevdev_uinput_write_event(ui_, type, code, value);
    libevdev_uinput_write_event(ui_, EV_SYN, SYN_REPORT, 0);
  }

 private:
  libevdev_uinput* ui_ = nullptr;
  std::string node_;
};

// The python-evdev child: it makes its UInput device, prints "node PATH"
// (or "skip REASON" without the module), then writes BTN_A with the value
// of each line it reads, and a report.
constexpr const char* kPythonHelper = R"PY(
import sys
try:
    import evdev
    from evdev import ecodes
except ImportError as e:
    print("skip python3-evdev is not installed (" + str(e) + ")", flush=True)
    sys.exit(0)
ui = evdev.UInput({ecodes.EV_KEY: [ecodes.BTN_A]}, name="bench_gamepad python-evdev")
print("node " + ui.device.path, flush=True)
for line in sys.stdin:
    ui.write(ecodes.EV_KEY, ecodes.BTN_A, int(line))
    ui.syn()
ui.close()
)PY";

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return NAN;
  // The nearest rank, as tools/bench/lib/bench.py's percentile.
  size_t i = size_t(std::ceil(p * double(v.size()))) - (p > 0 ? 1 : 0);
  return v[std::min(i, v.size() - 1)];
}

std::vector<double> events(const row& r) {
  std::vector<double> v;
  for (const sample& s : r.samples) v.push_back(s.event_us);
  return v;
}
std::vector<double> responses(const row& r) {
  std::vector<double> v;
  for (const sample& s : r.samples) {
    if (!std::isnan(s.response_us)) v.push_back(s.response_us);
  }
  return v;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.starts_with("model name")) return line.substr(line.find(':') + 2);
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary;
  std::string csv;
  std::string raw;
  int n = 200;
  int warmup = 10;
  bool python = true;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    bool more = i + 1 < argc;
    if (a == "--server" && more) {
      binary = argv[++i];
    } else if (a == "--samples" && more) {
      n = atoi(argv[++i]);
    } else if (a == "--warmup" && more) {
      warmup = atoi(argv[++i]);
    } else if (a == "--csv" && more) {
      csv = argv[++i];
    } else if (a == "--raw" && more) {
      raw = argv[++i];
    } else if (a == "--no-python") {
      python = false;
    } else {
      fprintf(stderr,
              "usage: bench_gamepad [--server PATH] [--samples N] [--warmup N] [--csv FILE] [--raw FILE] "
              "[--no-python]\n");
      return 2;
    }
  }
  if (n < 2 || warmup < 0) die("--samples takes 2 or more, --warmup 0 or more");
  if (binary.empty()) {
    // Beside the build's tools/bench/, as meson lays it out.
    std::string self = argv[0];
    std::string dir = self.find('/') == std::string::npos ? "." : self.substr(0, self.rfind('/'));
    binary = dir + "/../../computer-use-mcp";
  }
  if (access(binary.c_str(), X_OK) != 0) die(binary + " is not there (--server PATH)");
  if (access("/dev/uinput", W_OK) != 0) {
    die("/dev/uinput is not writable here: run inside tests/vm/run-in-vm, as root");
  }
  char tmpl[] = "/tmp/bench_gamepad.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) die("mkdtemp failed");
  const std::string tmp = tmpl;
  signal(SIGPIPE, SIG_IGN);

  const std::string kKeyFloor = "uinput floor, EV_KEY (libevdev_uinput_write_event)";
  const std::string kAbsFloor = "uinput floor, EV_ABS (libevdev_uinput_write_event)";

  // Every device is made first, then the rows take turns sample by sample,
  // so that what else the machine does at a moment hits all of them alike.
  own_device own;
  node_reader own_reader(own.node());
  server s(binary, tmp);
  fprintf(stderr, "bench_gamepad: server pid %d, controller %s\n", int(s.pid()), s.node().c_str());
  node_reader pad(s.node());
  std::string python_note;
  std::unique_ptr<child> py;
  std::unique_ptr<node_reader> py_reader;
  if (!python) {
    python_note = "python-evdev: left out (--no-python)";
  } else if (access("/usr/bin/python3", X_OK) != 0) {
    python_note = "python-evdev: skipped, /usr/bin/python3 is not installed";
  } else {
    py = std::make_unique<child>(std::vector<std::string>{"/usr/bin/python3", "-c", kPythonHelper},
                                 std::vector<std::string>{"PATH=/usr/bin:/bin"},
                                 tmp + "/python.stderr");
    std::string first = py->read_line();
    if (first.starts_with("skip ")) {
      python_note = "python-evdev: skipped, " + first.substr(5);
      py.reset();
    } else if (!first.starts_with("node ")) {
      die("the python-evdev helper said: " + first + "\n" + py->stderr_text());
    } else {
      py_reader = std::make_unique<node_reader>(first.substr(5));
    }
  }

  row key{kKeyFloor, "", {}}, abs{kAbsFloor, "", {}};
  row button{"server, gamepad_button A press/release", kKeyFloor, {}};
  row stick{"server, gamepad_stick left x", kAbsFloor, {}};
  row pyrow{"python-evdev UInput.write + syn (a line to the child, then its write)", kKeyFloor,
            {}};
  for (int i = 0; i < warmup + n; ++i) {
    const bool timed = i >= warmup;
    // Down, up, down, ...; the stick right, left, right, ...
    const int down = i % 2 == 0 ? 1 : 0;
    const int x = i % 2 == 0 ? 16384 : -16384;

    int64_t t0 = now_ns();
    own.write(EV_KEY, BTN_A, down);
    int64_t t1 = own_reader.wait_for(EV_KEY, BTN_A, down);
    if (timed) key.samples.push_back({double(t1 - t0) / 1000, NAN});

    t0 = now_ns();
    own.write(EV_ABS, ABS_X, x);
    t1 = own_reader.wait_for(EV_ABS, ABS_X, x);
    if (timed) abs.samples.push_back({double(t1 - t0) / 1000, NAN});

    sample t = time_call(
        s, pad,
        down ? R"({"name":"gamepad_button","arguments":{"button":"A","action":"press"}})"
             : R"({"name":"gamepad_button","arguments":{"button":"A","action":"release"}})",
        EV_KEY, BTN_A, down);
    if (timed) button.samples.push_back(t);

    t = time_call(s, pad,
                  R"({"name":"gamepad_stick","arguments":{"stick":"left","x":)" +
                      std::to_string(x) + "}}",
                  EV_ABS, ABS_X, x);
    if (timed) stick.samples.push_back(t);

    if (py) {
      t0 = now_ns();
      py->send(down ? "1\n" : "0\n");
      t1 = py_reader->wait_for(EV_KEY, BTN_A, down);
      if (timed) pyrow.samples.push_back({double(t1 - t0) / 1000, NAN});
    }
  }
  const long server_hwm = s.vm_hwm_kib();
  s.finish();
  if (py) py->finish();

  std::vector<row> rows;
  rows.push_back(std::move(key));
  rows.push_back(std::move(abs));
  rows.push_back(std::move(button));
  rows.push_back(std::move(stick));
  if (py) rows.push_back(std::move(pyrow));
  if (!python_note.empty()) fprintf(stderr, "bench_gamepad: %s\n", python_note.c_str());

  auto floor_of = [&](const row& r) -> const row* {
    for (const row& f : rows) {
      if (f.name == r.floor) return &f;
    }
    return nullptr;
  };
  auto fmt = [](double v, const char* f) {
    if (std::isnan(v)) return std::string("");
    char buf[64];
    snprintf(buf, sizeof buf, f, v);
    return std::string(buf);
  };

  printf("| row | to the event: median us | p90 us | median / floor | to the response: median us "
         "| p90 us | peak RSS KiB |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|\n");
  std::string csv_text =
      "row,samples,event_median_us,event_p90_us,event_median_over_floor,response_median_us,"
      "response_p90_us,peak_rss_kib\n";
  for (const row& r : rows) {
    auto ev = events(r);
    auto resp = responses(r);
    double med = percentile(ev, 0.5), p90 = percentile(ev, 0.9);
    const row* f = floor_of(r);
    double ratio = f != nullptr ? med / percentile(events(*f), 0.5) : 1.0;
    double rmed = percentile(resp, 0.5), rp90 = percentile(resp, 0.9);
    bool is_server = r.name.starts_with("server");
    printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(), fmt(med, "%.0f").c_str(),
           fmt(p90, "%.0f").c_str(), fmt(ratio, "%.1fx").c_str(), fmt(rmed, "%.0f").c_str(),
           fmt(rp90, "%.0f").c_str(), is_server ? std::to_string(server_hwm).c_str() : "");
    csv_text += "\"" + r.name + "\"," + std::to_string(r.samples.size()) + "," +
                fmt(med, "%.1f") + "," + fmt(p90, "%.1f") + "," + fmt(ratio, "%.3f") + "," +
                fmt(rmed, "%.1f") + "," + fmt(rp90, "%.1f") + "," +
                (is_server ? std::to_string(server_hwm) : "") + "\n";
  }
  utsname u{};
  uname(&u);
  printf("\n%d samples per row after %d untimed; the server's peak RSS is its VmHWM at the end. "
         "%s. Linux %s, %s, %ld CPUs.\n",
         n, warmup, python_note.empty() ? "python3-evdev present" : python_note.c_str(),
         u.release, cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  if (!csv.empty()) {
    std::ofstream out(csv);
    out << csv_text;
    if (!out) die("cannot write " + csv);
  }
  if (!raw.empty()) {
    // Every timed sample, for the plot (tools/bench/bench-gamepad --plot).
    std::ofstream out(raw);
    out << "row,to,us\n";
    for (const row& r : rows) {
      for (const sample& x : r.samples) {
        out << "\"" << r.name << "\",event," << x.event_us << "\n";
        if (!std::isnan(x.response_us)) out << "\"" << r.name << "\",response," << x.response_us << "\n";
      }
    }
    if (!out) die("cannot write " + raw);
  }
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return 0;
}
