// open_application launching desktop entries against a real Xvfb: each
// test writes its entries to a private XDG_DATA_HOME (and points
// XDG_DATA_DIRS at an empty directory, so the system's entries play no part)
// and checks what ran: a Terminal=true entry inside an xterm, a Path= entry
// in its directory, a StartupWMClass= entry whose launcher exits at once,
// an entry whose program exits before any window (answered at once), and
// the entries that must not start anything.
#include <catch2/catch.hpp>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

std::optional<std::string> string_field(const json_line& j, const char* key) {
  std::string_view v;
  if (j.root[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return std::string(v);
}

std::optional<bool> bool_field(const json_line& j, const char* key) {
  bool v;
  if (j.root[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

std::optional<int64_t> int_field(const json_line& j, const char* key) {
  int64_t v;
  if (j.root[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

xcb_window_t window_field(const json_line& j) {
  std::optional<std::string> w = string_field(j, "window");
  if (!w || w->rfind("0x", 0) != 0) return XCB_NONE;
  return xcb_window_t(strtoul(w->c_str(), nullptr, 16));
}

std::string app_args(std::string_view app) {
  std::string s = "{\"app\":";
  s.append(json_string(app)).append("}");
  return s;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
}

// /proc/<pid>/comm without its newline ("" once the process is gone).
std::string comm_of(pid_t pid) {
  std::string name = read_text("/proc/" + std::to_string(pid) + "/comm");
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

// The parent pid from /proc/<pid>/stat (fields after the last ')').
pid_t parent_of(pid_t pid) {
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 1));
  char state = 0;
  pid_t ppid = 0;
  fields >> state >> ppid;
  return ppid;
}

// A private XDG_DATA_HOME with an applications directory, an empty
// directory for XDG_DATA_DIRS and room for working directories; removed
// with everything in it at the end of the scope.
struct xdg_home {
  xdg_home() {
    char tmpl[] = "/tmp/cu-launch-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    root = tmpl;
    for (const char* dir : {"/data", "/data/applications", "/empty"}) {
      REQUIRE(mkdir((root + dir).c_str(), 0755) == 0);
    }
  }
  ~xdg_home() {
    std::string cmd = "rm -rf '";
    cmd.append(root).append("'");
    int ignored = system(cmd.c_str());
    (void)ignored;
  }
  xdg_home(const xdg_home&) = delete;
  xdg_home& operator=(const xdg_home&) = delete;

  // Writes applications/<id>.desktop: the [Desktop Entry] group with body.
  void entry(const std::string& id, const std::string& body) {
    std::ofstream out(root + "/data/applications/" + id + ".desktop");
    out << "[Desktop Entry]\nType=Application\n" << body;
    REQUIRE(out.good());
  }

  std::map<std::string, std::string> env() const {
    return {{"XDG_DATA_HOME", root + "/data"}, {"XDG_DATA_DIRS", root + "/empty"}};
  }

  std::string root;
};

}  // namespace

TEST_CASE("a Terminal=true entry runs its program inside an xterm whose window is focused") {
  xvfb x;
  launched_reaper terminals("xterm", x.display());
  launched_reaper programs("cat", x.display());
  x_observer obs(x.display());
  xdg_home home;
  // cat waits on the terminal for ever; without a terminal it would read
  // /dev/null and exit at once.
  home.entry("cu-term-test", "Name=CU Term Test\nExec=cat\nTerminal=true\n");
  server_process s(x.display(), home.env());

  auto r = s.call_tool("open_application", app_args("cu-term-test"));
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  json_ptr body = parse_json(text_of(*r));
  CHECK(bool_field(*body, "launched") == true);
  CHECK(bool_field(*body, "focused") == true);
  CHECK_FALSE(string_field(*body, "note"));
  const std::optional<int64_t> pid = int_field(*body, "pid");
  REQUIRE(pid);
  const xcb_window_t w = window_field(*body);
  REQUIRE(w != XCB_NONE);
  // The window is the terminal's: it carries the launched pid, X names it
  // an xterm (x-terminal-emulator is Debian's lxterm or uxterm script,
  // which exec xterm, class UXTerm), and that pid is xterm's.
  CHECK(obs.net_wm_pid(w) == uint32_t(*pid));
  auto cls = obs.wm_class(w);
  REQUIRE(cls);
  CHECK(cls->first == "xterm");
  CHECK((cls->second == "XTerm" || cls->second == "UXTerm"));
  CHECK(comm_of(pid_t(*pid)) == "xterm");
  CHECK(obs.input_focus() == w);
  CHECK(obs.viewable(w));

  // The program runs as the terminal's child. xterm forks it on its own
  // schedule, so poll for it with a deadline.
  std::vector<pid_t> cats;
  const int64_t deadline = now_ms() + 20000;
  for (;;) {
    cats = processes_on_display("cat", x.display());
    if (std::any_of(cats.begin(), cats.end(), [&](pid_t c) { return parent_of(c) == *pid; })) {
      break;
    }
    REQUIRE(now_ms() < deadline);
    usleep(10000);
  }
  CHECK(processes_on_display("xterm", x.display()).size() == 1);
}

TEST_CASE("a Path= entry runs its program in that directory") {
  xvfb x;
  launched_reaper clocks("xclock", x.display());
  x_observer obs(x.display());
  xdg_home home;
  const std::string work = home.root + "/work dir";
  REQUIRE(mkdir(work.c_str(), 0755) == 0);
  // Path= is a plain string value: the space needs no quoting. In Exec the
  // shell script is one double-quoted argument, which needs no escapes
  // here since it has no " ` $ or backslash. The shell writes where it runs
  // and then becomes xclock, keeping its pid.
  home.entry("cu-path-test", "Exec=sh -c \"pwd > cwd.txt; exec xclock -name cu-path-clock\"\n"
                             "Path=" + work + "\n");
  server_process s(x.display(), home.env());

  auto r = s.call_tool("open_application", app_args("cu-path-test"));
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  json_ptr body = parse_json(text_of(*r));
  CHECK(bool_field(*body, "launched") == true);
  CHECK(bool_field(*body, "focused") == true);
  const xcb_window_t w = window_field(*body);
  REQUIRE(w != XCB_NONE);
  auto cls = obs.wm_class(w);
  REQUIRE(cls);
  CHECK(cls->first == "cu-path-clock");
  // Found by the pid it carries, or by its name; either way it is the
  // launched shell's, which became xclock.
  if (auto window_pid = obs.net_wm_pid(w)) CHECK(int64_t(*window_pid) == int_field(*body, "pid"));
  // pwd ran before the exec, so before the window existed.
  CHECK(read_text(work + "/cwd.txt") == real_path(work) + "\n");
}

TEST_CASE("a StartupWMClass= entry whose launcher exits at once finds the window of that class") {
  xvfb x;
  launched_reaper clocks("xclock", x.display());
  x_observer obs(x.display());
  xdg_home home;
  // The launcher backgrounds the real program and exits 0 at once, so the
  // launched pid never owns a window; xclock -name sets the WM_CLASS
  // instance ("cu-class-clock", class "XClock"). The class is given in
  // another case to show the match ignores case.
  home.entry("cu-class-test", "Exec=sh -c \"xclock -name cu-class-clock & exit 0\"\n"
                              "StartupWMClass=CU-Class-Clock\n");
  server_process s(x.display(), home.env());

  auto r = s.call_tool("open_application", app_args("cu-class-test"));
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  json_ptr body = parse_json(text_of(*r));
  CHECK(bool_field(*body, "launched") == true);
  CHECK(bool_field(*body, "focused") == true);
  const xcb_window_t w = window_field(*body);
  REQUIRE(w != XCB_NONE);
  auto cls = obs.wm_class(w);
  REQUIRE(cls);
  CHECK(cls->first == "cu-class-clock");
  CHECK(obs.input_focus() == w);
  const std::vector<pid_t> clocks_now = processes_on_display("xclock", x.display());
  REQUIRE(clocks_now.size() == 1);
  // The window is xclock's, not the launcher's. (libXt sets _NET_WM_PID
  // when it realizes the shell, which may come after the window is found
  // by its WM_CLASS.)
  CHECK(int_field(*body, "pid") != int64_t(clocks_now[0]));
  if (auto window_pid = obs.net_wm_pid(w)) CHECK(*window_pid == uint32_t(clocks_now[0]));
}

TEST_CASE("a program that exits before showing a window is answered at once with its exit status") {
  xvfb x;
  x_observer obs(x.display());
  xdg_home home;
  home.entry("cu-exit-test", "Exec=sh -c \"exit 7\"\n");
  server_process s(x.display(), home.env());

  const int64_t started = now_ms();
  auto r = s.call_tool("open_application", app_args("cu-exit-test"));
  const int64_t took = now_ms() - started;
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  json_ptr body = parse_json(text_of(*r));
  CHECK(bool_field(*body, "launched") == true);
  CHECK(bool_field(*body, "focused") == false);
  CHECK(window_field(*body) == XCB_NONE);
  const std::string note = string_field(*body, "note").value_or("");
  CHECK(contains(note, "exited with status 7 before any window of it appeared"));
  CHECK(contains(note, "Terminal=true"));
  // The old answer came after the whole 10 s launch patience.
  CHECK(took < 3000);
}

TEST_CASE("no terminal emulator on PATH, or an unusable Path=, is an error and starts nothing") {
  xvfb x;
  xdg_home home;
  // A PATH holding only the programs the entries name: no terminal.
  const std::string bin = home.root + "/bin";
  REQUIRE(mkdir(bin.c_str(), 0755) == 0);
  REQUIRE(symlink("/bin/sh", (bin + "/sh").c_str()) == 0);
  REQUIRE(symlink("/bin/cat", (bin + "/cat").c_str()) == 0);
  const std::string marker = home.root + "/ran";
  home.entry("cu-noterm-test", "Exec=sh -c \"touch " + marker + "; exec cat\"\nTerminal=true\n");
  home.entry("cu-nopath-test",
             "Exec=sh -c \"touch " + marker + "\"\nPath=" + home.root + "/missing\n");
  std::map<std::string, std::string> env = home.env();
  env["PATH"] = bin;
  server_process s(x.display(), env);

  auto noterm = s.call_tool("open_application", app_args("cu-noterm-test"));
  INFO(noterm->text);
  REQUIRE(is_error(*noterm));
  CHECK(contains(text_of(*noterm), "Terminal=true, but no terminal emulator is on PATH"));
  CHECK(contains(text_of(*noterm), "install one, e.g. xterm"));

  auto nopath = s.call_tool("open_application", app_args("cu-nopath-test"));
  INFO(nopath->text);
  REQUIRE(is_error(*nopath));
  CHECK(contains(text_of(*nopath), "sets Path=" + home.root + "/missing"));
  CHECK(contains(text_of(*nopath), "No such file or directory"));

  // Neither started anything: the checks come before any spawn.
  struct stat st;
  CHECK(stat(marker.c_str(), &st) != 0);
  CHECK(processes_on_display("cat", x.display()).empty());
}

TEST_CASE("a desktop entry that exists but is rejected is named with why, and nothing starts") {
  xvfb x;
  xdg_home home;
  const std::string bin = home.root + "/bin";
  REQUIRE(mkdir(bin.c_str(), 0755) == 0);
  REQUIRE(symlink("/bin/sh", (bin + "/sh").c_str()) == 0);
  const std::string marker = home.root + "/ran";
  const std::string touch = "sh -c \"touch " + marker + "\"";
  // Each would start the program that leaves the marker, were it usable.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cu-quote-test", "Exec=sh -c \"touch " + marker + "\n"},
      {"cu-percent-test", "Exec=" + touch + " %\n"},
      {"cu-field-test", "Exec=" + touch + " %z\n"},
      {"cu-relative-test", "Exec=./bin/" + touch + "\n"},
      {"cu-tryexec-test", "TryExec=/nonexistent/program\nExec=" + touch + "\n"},
  };
  const std::map<std::string, std::string> why = {
      {"cu-quote-test", "desktop Exec value has an unterminated \""},
      {"cu-percent-test", "desktop Exec value ends with a lone %"},
      {"cu-field-test", "desktop Exec value uses an unknown field code (%z)"},
      {"cu-relative-test", "its Exec program \"./bin/sh\" is a relative path"},
      {"cu-tryexec-test", "its TryExec program \"/nonexistent/program\" is not an executable file"},
      {"cu-fifo-test", "it is a FIFO, not a regular file"},
  };
  for (const auto& [id, body] : cases) home.entry(id, body);
  // Nobody writes to it: reading it without O_NONBLOCK would stall the
  // desktop thread, and the call would never be answered.
  const std::string fifo = home.root + "/data/applications/cu-fifo-test.desktop";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  std::map<std::string, std::string> env = home.env();
  env["PATH"] = bin;
  server_process s(x.display(), env);

  for (const auto& [id, reason] : why) {
    auto r = s.call_tool("open_application", app_args(id));
    INFO(id << ": " << r->text);
    REQUIRE(is_error(*r));
    const std::string text = text_of(*r);
    CHECK(contains(text, "no window matches \"" + id + "\""));
    CHECK(contains(text, "nothing was started"));
    CHECK(contains(text, home.root + "/data/applications/" + id + ".desktop (" + reason));
  }
  // A name nothing matches is still answered as before.
  auto none = s.call_tool("open_application", app_args("cu-no-such-entry"));
  CHECK_FALSE(is_error(*none));
  CHECK(contains(text_of(*none), "no executable or desktop entry of that name was found"));

  struct stat st;
  CHECK(stat(marker.c_str(), &st) != 0);
}
