// Tests for src/desktop/app_lookup.h, desktop_entry.h and spawn.h: reading
// desktop Exec values, finding what to start for an application name, and
// starting it detached.
#include "desktop/app_lookup.h"
#include "desktop/desktop_entry.h"
#include "desktop/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using strings = std::vector<std::string>;

strings parsed(std::string_view exec) {
  auto r = cu::parse_desktop_exec(exec);
  INFO("Exec=" << exec);
  REQUIRE(r.ok());
  return *r;
}

// The message of a failed parse, after checking that it failed with
// invalid_argument and fits on one line.
std::string parse_failure(std::string_view exec) {
  auto r = cu::parse_desktop_exec(exec);
  INFO("Exec=" << exec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == cu::errc::invalid_argument);
  CHECK(r.err().message.find('\n') == std::string::npos);
  return r.err().message;
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp") +
                          "/cu-test-launch-XXXXXX";
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void make_dir(const std::string& path) { REQUIRE(mkdir(path.c_str(), 0755) == 0); }

void write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
  {
    std::ofstream out(path);
    REQUIRE(out);
    out << text;
  }
  REQUIRE(chmod(path.c_str(), mode) == 0);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A PATH directory and two application directories (higher priority first),
// with an executable "tool", a non-executable "notes" and a directory "adir"
// on PATH.
class launch_fixture {
 public:
  launch_fixture() {
    make_dir(bin());
    make_dir(apps1());
    make_dir(apps2());
    write_file(tool(), "#!/bin/sh\nexit 0\n", 0755);
    write_file(bin() + "/notes", "not a program\n", 0644);
    make_dir(bin() + "/adir");
    env.path = bin();
    env.application_dirs = {apps1(), apps2()};
  }

  std::string bin() const { return root / "bin"; }
  std::string apps1() const { return root / "apps1"; }
  std::string apps2() const { return root / "apps2"; }
  std::string tool() const { return bin() + "/tool"; }

  temp_dir root;
  cu::launch_env env;
};

std::string entry(const std::string& body) { return "[Desktop Entry]\n" + body; }

// Sets or unsets environment variables for one test and puts them back.
class scoped_env {
 public:
  // In reverse, so a variable set twice ends up with its first saved value.
  ~scoped_env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }
  void set(const std::string& name, const char* value) {
    const char* old = getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) setenv(name.c_str(), value, 1);
    else unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Polls until check() holds or five seconds pass. The program runs on its
// own; there is no round trip to wait on.
template <class F>
bool eventually(F check) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!check()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Kills a spawned program when the test ends, however it ends.
struct killer {
  pid_t pid;
  ~killer() {
    if (pid > 0) kill(pid, SIGKILL);
  }
};

// The fields of /proc/<pid>/stat after the command name, which may hold
// spaces and parentheses, so they start after the last ')': the state, then
// the parent pid.
struct proc_stat {
  char state = '?';
  pid_t ppid = 0;
};

proc_stat stat_of(pid_t pid) {
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  proc_stat result;
  if (stat.rfind(')') == std::string::npos) return result;
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  fields >> result.state >> result.ppid;
  return result;
}

std::string status_field(pid_t pid, const std::string& name) {
  std::istringstream status(read_text("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      std::string value = line.substr(name.size() + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// parse_desktop_exec

TEST_CASE("a plain Exec value splits on spaces") {
  CHECK(parsed("xclock") == strings{"xclock"});
  CHECK(parsed("  xterm   -e\ttop ") == strings{"xterm", "-e", "top"});
}

TEST_CASE("double quotes keep spaces in an argument and take their four escapes") {
  CHECK(parsed(R"("/opt/My App/bin/run" --title "My App")") ==
        strings{"/opt/My App/bin/run", "--title", "My App"});
  CHECK(parsed(R"(say "a \"quoted\" word" "cost \$5" "tick \`")") ==
        strings{"say", "a \"quoted\" word", "cost $5", "tick `"});
  // The string escape \\ is undone before the quoting rules, so a literal
  // backslash inside quotes takes four in the file, as the spec says.
  CHECK(parsed(R"(foo "a\\\\b")") == strings{"foo", "a\\b"});
  CHECK(parsed(R"(sh -c "echo \\"hi\\"")") == strings{"sh", "-c", "echo \"hi\""});
  CHECK(parsed(R"(foo "")") == strings{"foo", ""});
}

TEST_CASE("the general string escapes are undone before splitting") {
  CHECK(parsed(R"(echo "a\sb" "c\td")") == strings{"echo", "a b", "c\td"});
  CHECK(parsed(R"(echo a\sb)") == strings{"echo", "a", "b"});
}

TEST_CASE("single quotes and a backslash outside quotes read as in a shell") {
  CHECK(parsed("sh -c 'echo \"$HOME\" %%'") == strings{"sh", "-c", "echo \"$HOME\" %"});
  CHECK(parsed(R"(foo a\ b)") == strings{"foo", "a b"});
}

TEST_CASE("field codes are dropped, and an argument of only field codes disappears") {
  CHECK(parsed("firefox %u") == strings{"firefox"});
  CHECK(parsed("app %U --new-window %F") == strings{"app", "--new-window"});
  CHECK(parsed("foo --file=%f") == strings{"foo", "--file="});
  CHECK(parsed("foo %i %c %k %d %D %n %N %v %m %f%u") == strings{"foo"});
  CHECK(parsed(R"(foo "%f")") == strings{"foo"});
}

TEST_CASE("a doubled percent sign is a literal one") {
  CHECK(parsed("printf 100%%") == strings{"printf", "100%"});
  CHECK(parsed("date +%%s %f") == strings{"date", "+%s"});
}

TEST_CASE("an unterminated quote is invalid") {
  CHECK(parse_failure(R"(foo "bar)") == "desktop Exec value has an unterminated \"");
  CHECK(parse_failure("foo 'bar") == "desktop Exec value has an unterminated '");
  CHECK(parse_failure(R"(foo "bar\")") == "desktop Exec value has an unterminated \"");
}

TEST_CASE("an Exec value with no program is invalid") {
  CHECK(parse_failure("") == "desktop Exec value names no program");
  CHECK(parse_failure("   ") == "desktop Exec value names no program");
  CHECK(parse_failure("%U") == "desktop Exec value names no program");
  CHECK(parse_failure(R"("" foo)") == "desktop Exec value names no program");
}

TEST_CASE("an unknown or truncated field code is invalid") {
  CHECK(parse_failure("foo %x") == "desktop Exec value uses an unknown field code (%x)");
  CHECK(parse_failure("foo %1") ==
        "desktop Exec value uses an unknown field code (a % not followed by a letter)");
  CHECK(parse_failure("foo %") == "desktop Exec value ends with a lone %");
}

// ---------------------------------------------------------------------------
// find_launchable

TEST_CASE("an executable on PATH is found, a non-executable file or directory is not") {
  launch_fixture f;
  auto found = cu::find_launchable("tool", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{f.tool()});
  CHECK(found->source == "PATH");
  CHECK_FALSE(cu::find_launchable("notes", f.env));
  CHECK_FALSE(cu::find_launchable("adir", f.env));
  CHECK_FALSE(cu::find_launchable("nothing-by-this-name", f.env));
}

TEST_CASE("the first PATH directory holding the program wins") {
  launch_fixture f;
  std::string other = f.root / "other";
  make_dir(other);
  write_file(other + "/tool", "#!/bin/sh\n", 0755);
  f.env.path = other + ":" + f.bin();
  auto found = cu::find_launchable("tool", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{other + "/tool"});
}

TEST_CASE("empty and relative PATH entries are skipped") {
  launch_fixture f;
  // The same directory, spelled relative to the working directory.
  std::string cwd = std::filesystem::current_path().string();
  std::string relative;
  for (char c : cwd) {
    if (c == '/') relative += "../";
  }
  relative += f.bin().substr(1);
  REQUIRE(cu::is_executable_file(relative + "/tool"));
  f.env.path = "::" + relative + ":";
  CHECK_FALSE(cu::find_launchable("tool", f.env));
  f.env.path = relative + "::" + f.bin();
  auto found = cu::find_launchable("tool", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{f.tool()});
}

TEST_CASE("names that are not plain are refused") {
  launch_fixture f;
  write_file(f.bin() + "/-tool", "#!/bin/sh\n", 0755);
  write_file(f.apps1() + "/-tool.desktop", entry("Type=Application\nExec=tool\n"));
  CHECK_FALSE(cu::find_launchable("", f.env));
  CHECK_FALSE(cu::find_launchable("-tool", f.env));
  CHECK_FALSE(cu::find_launchable(f.tool(), f.env));
  CHECK_FALSE(cu::find_launchable("../bin/tool", f.env));
  CHECK_FALSE(cu::find_launchable(std::string_view("tool\0x", 6), f.env));
}

TEST_CASE("a desktop entry is found by its file name, ignoring case") {
  launch_fixture f;
  write_file(f.apps1() + "/My App.desktop",
             entry("Type=Application\nName=Something Else\nExec=tool --flag %U\n"));
  auto found = cu::find_launchable("my app", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{f.tool(), "--flag"});
  CHECK(found->source == f.apps1() + "/My App.desktop");
}

TEST_CASE("a desktop entry is found by its unlocalized Name, ignoring case") {
  launch_fixture f;
  write_file(f.apps2() + "/org.example.Viewer.desktop",
             "# A comment.\n"
             "[Desktop Entry]\n"
             "Name[de]=Bildbetrachter\n"
             "Name = Picture Viewer\n"
             "Type=Application\n"
             "Exec=\"" + f.tool() + "\" %F\n"
             "\n"
             "[Desktop Action slideshow]\n"
             "Name=Slide Show\n"
             "Exec=tool --slideshow\n");
  auto found = cu::find_launchable("PICTURE VIEWER", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{f.tool()});
  CHECK(found->source == f.apps2() + "/org.example.Viewer.desktop");
  CHECK_FALSE(cu::find_launchable("Bildbetrachter", f.env));
  CHECK_FALSE(cu::find_launchable("Slide Show", f.env));
}

TEST_CASE("an executable on PATH wins over a desktop entry of the same name") {
  launch_fixture f;
  write_file(f.apps1() + "/tool.desktop", entry("Type=Application\nExec=tool --from-entry\n"));
  auto found = cu::find_launchable("tool", f.env);
  REQUIRE(found);
  CHECK(found->source == "PATH");
}

TEST_CASE("a file name match wins over a Name match") {
  launch_fixture f;
  write_file(f.apps1() + "/a.desktop", entry("Type=Application\nName=viewer\nExec=tool by-name\n"));
  write_file(f.apps2() + "/viewer.desktop", entry("Type=Application\nExec=tool by-file\n"));
  auto found = cu::find_launchable("viewer", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{f.tool(), "by-file"});
}

TEST_CASE("hidden entries, links and entries that cannot run are skipped") {
  launch_fixture f;
  write_file(f.apps1() + "/hidden.desktop",
             entry("Type=Application\nHidden=true\nExec=tool\n"));
  write_file(f.apps1() + "/link.desktop",
             entry("Type=Link\nURL=https://example.com\nExec=tool\n"));
  write_file(f.apps1() + "/tryexec.desktop",
             entry("Type=Application\nTryExec=/nonexistent/tool\nExec=tool\n"));
  write_file(f.apps1() + "/tryexec-name.desktop",
             entry("Type=Application\nTryExec=no-such-program-anywhere\nExec=tool\n"));
  write_file(f.apps1() + "/noprogram.desktop",
             entry("Type=Application\nExec=no-such-program-anywhere\n"));
  write_file(f.apps1() + "/notexecutable.desktop",
             entry("Type=Application\nExec=notes\n"));
  write_file(f.apps1() + "/relative.desktop", entry("Type=Application\nExec=./bin/tool\n"));
  write_file(f.apps1() + "/noexec.desktop", entry("Type=Application\n"));
  write_file(f.apps1() + "/badexec.desktop", entry("Type=Application\nExec=tool \"oops\n"));
  write_file(f.apps1() + "/notype.desktop", entry("Exec=tool\n"));
  write_file(f.apps1() + "/nogroup.desktop", "Type=Application\nExec=tool\n");
  for (const char* name : {"hidden", "link", "tryexec", "tryexec-name", "noprogram",
                           "notexecutable", "relative", "noexec", "badexec", "notype",
                           "nogroup"}) {
    INFO(name);
    CHECK_FALSE(cu::find_launchable(name, f.env));
  }
}

// The one rejection find_launchable reports for name, after checking that
// nothing was found.
cu::rejected_entry only_rejection(std::string_view name, const cu::launch_env& env) {
  std::vector<cu::rejected_entry> rejected;
  INFO(name);
  CHECK_FALSE(cu::find_launchable(name, env, &rejected));
  REQUIRE(rejected.size() == 1);
  return rejected[0];
}

TEST_CASE("a desktop entry that matches but cannot run is reported with its path and why") {
  launch_fixture f;
  const std::map<std::string, std::pair<std::string, std::string>> cases = {
      {"quote", {"Exec=tool \"oops\n", "desktop Exec value has an unterminated \""}},
      {"percent", {"Exec=tool 100%\n", "desktop Exec value ends with a lone %"}},
      {"field", {"Exec=tool %z\n", "desktop Exec value uses an unknown field code (%z)"}},
      {"relative",
       {"Exec=./bin/tool\n",
        "its Exec program \"./bin/tool\" is a relative path (only a bare name, looked up on "
        "PATH, or an absolute path is run)"}},
      {"missing", {"Exec=no-such-program\n",
                   "its Exec program \"no-such-program\" is not an executable on PATH"}},
      {"notes", {"Exec=" + f.bin() + "/notes\n",
                 "its Exec program \"" + f.bin() + "/notes\" is not an executable file"}},
      {"tryexec", {"TryExec=/nonexistent/tool\nExec=tool\n",
                   "its TryExec program \"/nonexistent/tool\" is not an executable file"}},
      {"tryexec-name", {"TryExec=no-such-program\nExec=tool\n",
                        "its TryExec program \"no-such-program\" is not an executable on PATH"}},
      {"hidden", {"Hidden=true\nExec=tool\n", "it says Hidden=true, which marks it deleted"}},
      {"noexec", {"Name=Nothing\n", "it has no Exec key"}},
  };
  for (const auto& [name, body_why] : cases) {
    write_file(f.apps1() + "/" + name + ".desktop", entry("Type=Application\n" + body_why.first));
  }
  write_file(f.apps1() + "/link.desktop", entry("Type=Link\nURL=https://example.com\n"));
  write_file(f.apps1() + "/notype.desktop", entry("Exec=tool\n"));
  for (const auto& [name, body_why] : cases) {
    auto r = only_rejection(name, f.env);
    CHECK(r.file == f.apps1() + "/" + name + ".desktop");
    CHECK(r.why == body_why.second);
  }
  CHECK(only_rejection("link", f.env).why == "its Type is \"Link\", not \"Application\"");
  CHECK(only_rejection("notype", f.env).why ==
        "it has no Type key in its [Desktop Entry] group (an application's is "
        "Type=Application)");
}

TEST_CASE("a FIFO or a directory as a desktop file is reported, and reading a FIFO never blocks") {
  launch_fixture f;
  // Nobody ever writes to the FIFO: a blocking open would wait for ever.
  REQUIRE(mkfifo((f.apps1() + "/fifo.desktop").c_str(), 0644) == 0);
  make_dir(f.apps1() + "/dir.desktop");
  auto fifo = only_rejection("fifo", f.env);
  CHECK(fifo.file == f.apps1() + "/fifo.desktop");
  CHECK(fifo.why == "it is a FIFO, not a regular file");
  CHECK(only_rejection("dir", f.env).why == "it is a directory, not a regular file");
  // The search by Name reads every file, the FIFO too, and goes on past it.
  write_file(f.apps2() + "/zz.desktop", entry("Type=Application\nName=Zed\nExec=tool zed\n"));
  auto zed = cu::find_launchable("zed", f.env);
  REQUIRE(zed);
  CHECK(zed->argv == strings{f.tool(), "zed"});
}

TEST_CASE("an entry matched by Name but unusable is reported, and a usable one after it wins") {
  launch_fixture f;
  write_file(f.apps1() + "/a.desktop", entry("Type=Application\nName=Viewer\nExec=tool \"x\n"));
  std::vector<cu::rejected_entry> rejected;
  CHECK_FALSE(cu::find_launchable("viewer", f.env, &rejected));
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].file == f.apps1() + "/a.desktop");

  write_file(f.apps2() + "/b.desktop", entry("Type=Application\nName=Viewer\nExec=tool b\n"));
  rejected.clear();
  auto found = cu::find_launchable("viewer", f.env, &rejected);
  REQUIRE(found);
  CHECK(found->source == f.apps2() + "/b.desktop");
  CHECK(rejected.size() == 1);
}

TEST_CASE("a TryExec that resolves lets the entry run") {
  launch_fixture f;
  write_file(f.apps1() + "/tried.desktop",
             entry("Type=Application\nTryExec=tool\nExec=" + f.tool() + " --tried\n"));
  auto found = cu::find_launchable("tried", f.env);
  REQUIRE(found);
  CHECK(found->argv == strings{f.tool(), "--tried"});
}

TEST_CASE("a desktop file in a higher-priority directory hides the same name further down") {
  launch_fixture f;
  write_file(f.apps1() + "/shadow.desktop", entry("Type=Application\nHidden=true\nExec=tool\n"));
  write_file(f.apps2() + "/shadow.desktop", entry("Type=Application\nExec=tool system\n"));
  write_file(f.apps1() + "/dup.desktop", entry("Type=Application\nExec=tool user\n"));
  write_file(f.apps2() + "/dup.desktop", entry("Type=Application\nExec=tool system\n"));
  CHECK_FALSE(cu::find_launchable("shadow", f.env));
  auto dup = cu::find_launchable("dup", f.env);
  REQUIRE(dup);
  CHECK(dup->argv == strings{f.tool(), "user"});
  CHECK(dup->source == f.apps1() + "/dup.desktop");

  std::reverse(f.env.application_dirs.begin(), f.env.application_dirs.end());
  auto shadow = cu::find_launchable("shadow", f.env);
  REQUIRE(shadow);
  CHECK(shadow->argv == strings{f.tool(), "system"});
}

TEST_CASE("missing application directories are no error") {
  launch_fixture f;
  f.env.application_dirs = {f.root / "nonexistent", f.apps1()};
  write_file(f.apps1() + "/x.desktop", entry("Type=Application\nExec=tool\n"));
  CHECK(cu::find_launchable("x", f.env));
}

// ---------------------------------------------------------------------------
// Terminal=, Path=, StartupWMClass=, NoDisplay= and prepare_launch

TEST_CASE("the launcher keys are read raw from the main group only") {
  temp_dir dir;
  write_file(dir / "e.desktop",
             "[Desktop Entry]\n"
             "Type=Application\n"
             "Exec=vim %F\n"
             "Terminal = true\n"
             "Path=/srv/my\\sdir\n"
             "StartupWMClass=MyApp\n"
             "NoDisplay=true\n"
             "Terminal=false\n"
             "[Desktop Action other]\n"
             "Path=/elsewhere\n");
  auto e = cu::read_desktop_entry(dir / "e.desktop");
  REQUIRE(e);
  CHECK(e->terminal == "true");  // The first occurrence counts.
  CHECK(e->path == "/srv/my\\sdir");
  CHECK(e->startup_wm_class == "MyApp");
  CHECK(e->no_display == "true");
  CHECK(cu::is_true(e->terminal));
  CHECK_FALSE(cu::is_true(std::optional<std::string>("True")));
  CHECK_FALSE(cu::is_true(std::nullopt));
}

TEST_CASE("an entry's Terminal, Path and StartupWMClass reach the launch spec, unescaped") {
  launch_fixture f;
  write_file(f.apps1() + "/editor.desktop",
             entry("Type=Application\nExec=tool %F\nTerminal=true\nPath=/srv/my\\sdir\n"
                   "StartupWMClass=My\\sEditor\n"));
  write_file(f.apps1() + "/plain.desktop", entry("Type=Application\nExec=tool\nTerminal=false\n"));
  auto editor = cu::find_launchable("editor", f.env);
  REQUIRE(editor);
  CHECK(editor->argv == strings{f.tool()});
  CHECK(editor->terminal);
  CHECK(editor->working_dir == "/srv/my dir");
  CHECK(editor->startup_wm_class == "My Editor");
  auto plain = cu::find_launchable("plain", f.env);
  REQUIRE(plain);
  CHECK_FALSE(plain->terminal);
  CHECK(plain->working_dir.empty());
  CHECK(plain->startup_wm_class.empty());
  auto on_path = cu::find_launchable("tool", f.env);
  REQUIRE(on_path);
  CHECK_FALSE(on_path->terminal);
  CHECK(on_path->working_dir.empty());
}

TEST_CASE("a NoDisplay entry is found by its file name but never by its Name") {
  launch_fixture f;
  // apps1 comes first, and "a-helper" sorts first: by Name it would win.
  write_file(f.apps1() + "/a-helper.desktop",
             entry("Type=Application\nName=Viewer\nNoDisplay=true\nExec=tool helper\n"));
  write_file(f.apps2() + "/z-viewer.desktop", entry("Type=Application\nName=Viewer\nExec=tool app\n"));
  auto by_name = cu::find_launchable("viewer", f.env);
  REQUIRE(by_name);
  CHECK(by_name->argv == strings{f.tool(), "app"});
  auto by_file = cu::find_launchable("a-helper", f.env);
  REQUIRE(by_file);
  CHECK(by_file->argv == strings{f.tool(), "helper"});

  write_file(f.apps1() + "/only-hidden.desktop",
             entry("Type=Application\nName=Lonely\nNoDisplay=true\nExec=tool\n"));
  CHECK_FALSE(cu::find_launchable("lonely", f.env));
  CHECK(cu::find_launchable("only-hidden", f.env));
}

TEST_CASE("x-terminal-emulator is the terminal of choice, then xterm, then rxvt's") {
  launch_fixture f;
  CHECK_FALSE(cu::find_terminal_emulator(f.env.path));
  write_file(f.bin() + "/rxvt", "#!/bin/sh\n", 0755);
  CHECK(cu::find_terminal_emulator(f.env.path) == f.bin() + "/rxvt");
  write_file(f.bin() + "/urxvt", "#!/bin/sh\n", 0755);
  CHECK(cu::find_terminal_emulator(f.env.path) == f.bin() + "/urxvt");
  write_file(f.bin() + "/xterm", "#!/bin/sh\n", 0755);
  CHECK(cu::find_terminal_emulator(f.env.path) == f.bin() + "/xterm");
  // Not executable: passed over.
  write_file(f.bin() + "/x-terminal-emulator", "#!/bin/sh\n", 0644);
  CHECK(cu::find_terminal_emulator(f.env.path) == f.bin() + "/xterm");
  REQUIRE(chmod((f.bin() + "/x-terminal-emulator").c_str(), 0755) == 0);
  CHECK(cu::find_terminal_emulator(f.env.path) == f.bin() + "/x-terminal-emulator");
}

TEST_CASE("a Terminal=true entry runs as the emulator's -e argument, in its Path directory") {
  launch_fixture f;
  write_file(f.bin() + "/xterm", "#!/bin/sh\n", 0755);
  make_dir(f.root / "work");
  write_file(f.apps1() + "/editor.desktop",
             entry("Type=Application\nExec=tool --edit \"a file\" %F\nTerminal=true\nPath=" +
                   (f.root / "work") + "\n"));
  auto spec = cu::find_launchable("editor", f.env);
  REQUIRE(spec);
  auto command = cu::prepare_launch(*spec, f.env);
  REQUIRE(command.ok());
  CHECK(command->argv == strings{f.bin() + "/xterm", "-e", f.tool(), "--edit", "a file"});
  CHECK(command->terminal == f.bin() + "/xterm");
  CHECK(command->working_dir == f.root / "work");
}

TEST_CASE("a program without Terminal runs bare, in the server's directory unless Path says") {
  launch_fixture f;
  write_file(f.bin() + "/xterm", "#!/bin/sh\n", 0755);
  auto spec = cu::find_launchable("tool", f.env);
  REQUIRE(spec);
  auto command = cu::prepare_launch(*spec, f.env);
  REQUIRE(command.ok());
  CHECK(command->argv == strings{f.tool()});
  CHECK(command->terminal.empty());
  CHECK(command->working_dir.empty());

  spec->working_dir = "/";
  command = cu::prepare_launch(*spec, f.env);
  REQUIRE(command.ok());
  CHECK(command->argv == strings{f.tool()});
  CHECK(command->working_dir == "/");
}

TEST_CASE("Terminal=true with no terminal emulator on PATH fails naming what to install") {
  launch_fixture f;
  write_file(f.apps1() + "/editor.desktop", entry("Type=Application\nExec=tool\nTerminal=true\n"));
  auto spec = cu::find_launchable("editor", f.env);
  REQUIRE(spec);
  auto command = cu::prepare_launch(*spec, f.env);
  REQUIRE_FALSE(command.ok());
  CHECK(command.err().code == cu::errc::not_available);
  CHECK(command.err().message ==
        f.apps1() + "/editor.desktop says Terminal=true, but no terminal emulator is on PATH "
                    "(tried x-terminal-emulator, xterm, urxvt, rxvt); install one, e.g. xterm "
                    "(apt-get install xterm); nothing was started");
}

TEST_CASE("a Path that is missing, relative, a file or not enterable fails before anything runs") {
  launch_fixture f;
  cu::launch_spec spec;
  spec.argv = {f.tool()};
  spec.source = "/apps/x.desktop";
  auto failure = [&](const std::string& dir) {
    spec.working_dir = dir;
    auto command = cu::prepare_launch(spec, f.env);
    INFO("Path=" << dir);
    REQUIRE_FALSE(command.ok());
    CHECK(command.err().code == cu::errc::io);
    return command.err().message;
  };
  CHECK(failure(f.root / "nonexistent") ==
        "/apps/x.desktop sets Path=" + (f.root / "nonexistent") +
            ", which cannot be the working directory (No such file or directory); nothing was "
            "started");
  CHECK(failure("relative/dir") ==
        "/apps/x.desktop sets Path=relative/dir, which cannot be the working directory (it is "
        "not an absolute path); nothing was started");
  CHECK(failure(f.tool()) ==
        "/apps/x.desktop sets Path=" + f.tool() +
            ", which cannot be the working directory (it is not a directory); nothing was "
            "started");
  if (geteuid() != 0) {  // root enters any directory.
    make_dir(f.root / "locked");
    REQUIRE(chmod((f.root / "locked").c_str(), 0600) == 0);
    CHECK(failure(f.root / "locked") ==
          "/apps/x.desktop sets Path=" + (f.root / "locked") +
              ", which cannot be the working directory (Permission denied); nothing was started");
  }
}

TEST_CASE("the environment gives PATH and the XDG application directories in order") {
  scoped_env env;
  env.set("PATH", "/p1:/p2");
  env.set("HOME", "/home/u");
  env.set("XDG_DATA_HOME", nullptr);
  env.set("XDG_DATA_DIRS", nullptr);
  auto defaults = cu::launch_env::from_environment();
  CHECK(defaults.path == "/p1:/p2");
  CHECK(defaults.application_dirs == strings{"/home/u/.local/share/applications",
                                             "/usr/local/share/applications",
                                             "/usr/share/applications"});

  env.set("PATH", nullptr);
  env.set("XDG_DATA_HOME", "/data/");
  env.set("XDG_DATA_DIRS", "/a:relative::/b:/a/");
  auto set = cu::launch_env::from_environment();
  CHECK(set.path == "/usr/local/bin:/usr/bin:/bin");
  CHECK(set.application_dirs ==
        strings{"/data/applications", "/a/applications", "/b/applications"});

  // A relative XDG_DATA_HOME is ignored, as the spec asks, and HOME is used.
  env.set("XDG_DATA_HOME", "data");
  env.set("XDG_DATA_DIRS", "");
  CHECK(cu::launch_env::from_environment().application_dirs ==
        strings{"/home/u/.local/share/applications", "/usr/local/share/applications",
                "/usr/share/applications"});
}

// ---------------------------------------------------------------------------
// spawn_detached

TEST_CASE("a detached program runs in its own session, not as our child, with only /dev/null") {
  temp_dir dir;
  std::string pid_file = dir / "pid";
  // A descriptor without close-on-exec, and a signal ignored and another
  // blocked, as the server might have: none of them may reach the program.
  write_file(dir / "leak", "x");
  // It is moved up to 20 because the program's report pipe goes to 3,
  // which would hide a leak there. F_DUPFD leaves close-on-exec clear.
  int opened = open((dir / "leak").c_str(), O_RDONLY);
  REQUIRE(opened >= 0);
  int leak = fcntl(opened, F_DUPFD, 20);
  close(opened);
  REQUIRE(leak >= 20);
  struct sigaction ignore{}, old_action{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGUSR1, &ignore, &old_action);
  sigset_t usr2, old_mask;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, &old_mask);

  // The shell is only the program under test here: it writes its own pid,
  // then becomes sleep without forking, so the pid stays the same.
  auto spawned = cu::spawn_detached(
      {"/bin/sh", "-c", "echo $$ > \"$1.tmp\" && mv \"$1.tmp\" \"$1\" && exec sleep 30", "sh",
       pid_file});

  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGUSR1, &old_action, nullptr);
  close(leak);
  REQUIRE(spawned.ok());
  pid_t pid = *spawned;
  killer k{pid};

  // The intermediate child has been reaped: we have no children left.
  CHECK(waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);

  REQUIRE(eventually([&] { return access(pid_file.c_str(), F_OK) == 0; }));
  CHECK(std::stoi(read_text(pid_file)) == pid);
  std::string proc = "/proc/" + std::to_string(pid);
  // sleep is settled once it sleeps: the kernel renames the process before
  // it closes the shell's close-on-exec descriptors, and the dynamic loader
  // then briefly opens libraries on descriptor 3.
  REQUIRE(eventually([&] {
    return read_text(proc + "/comm") == "sleep\n" && stat_of(pid).state == 'S';
  }));

  CHECK(getsid(pid) == pid);
  CHECK(stat_of(pid).ppid != getpid());

  std::vector<int> fds;
  for (const auto& e : std::filesystem::directory_iterator(proc + "/fd")) {
    fds.push_back(std::stoi(e.path().filename().string()));
  }
  std::sort(fds.begin(), fds.end());
  CHECK(fds == std::vector<int>{0, 1, 2});
  for (int fd = 0; fd <= 2; ++fd) {
    INFO("fd " << fd);
    CHECK(std::filesystem::read_symlink(proc + "/fd/" + std::to_string(fd)) == "/dev/null");
  }

  CHECK(status_field(pid, "SigBlk") == "0000000000000000");
  CHECK(status_field(pid, "SigIgn") == "0000000000000000");
}

TEST_CASE("a program that cannot be executed is an io error naming it") {
  auto missing = cu::spawn_detached({"/nonexistent/cu-test-program", "arg"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.err().code == cu::errc::io);
  CHECK(missing.err().message ==
        "cannot start /nonexistent/cu-test-program: No such file or directory");

  temp_dir dir;
  write_file(dir / "notes", "not a program\n", 0644);
  auto denied = cu::spawn_detached({dir / "notes"});
  REQUIRE_FALSE(denied.ok());
  CHECK(denied.err().code == cu::errc::io);
  CHECK(denied.err().message == "cannot start " + (dir / "notes") + ": Permission denied");

  // The failed program's intermediate child was reaped too.
  CHECK(waitpid(-1, nullptr, WNOHANG) == -1);
}

TEST_CASE("spawning refuses an empty argv or a relative program") {
  auto empty = cu::spawn_detached({});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.err().code == cu::errc::invalid_argument);
  auto relative = cu::spawn_detached({"sleep", "1"});
  REQUIRE_FALSE(relative.ok());
  CHECK(relative.err().code == cu::errc::invalid_argument);
  CHECK(relative.err().message == "spawn_detached needs an absolute path, not sleep");
  auto nul = cu::spawn_detached({"/bin/true", std::string("a\0b", 3)});
  REQUIRE_FALSE(nul.ok());
  CHECK(nul.err().code == cu::errc::invalid_argument);
}

TEST_CASE("a detached program runs in the working directory it is given") {
  temp_dir dir;
  make_dir(dir / "work dir");
  std::string out = dir / "cwd";
  auto spawned = cu::spawn_detached(
      {"/bin/sh", "-c", "pwd > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"", "sh", out},
      cu::spawn_options{dir / "work dir"});
  REQUIRE(spawned.ok());
  REQUIRE(eventually([&] { return access(out.c_str(), F_OK) == 0; }));
  CHECK(read_text(out) == dir / "work dir" + "\n");
}

TEST_CASE("a working directory that cannot be entered is an io error naming it, and nothing runs") {
  temp_dir dir;
  std::string marker = dir / "ran";
  auto spawned = cu::spawn_detached({"/bin/sh", "-c", "touch \"$1\"", "sh", marker},
                                    cu::spawn_options{dir / "missing"});
  REQUIRE_FALSE(spawned.ok());
  CHECK(spawned.err().code == cu::errc::io);
  CHECK(spawned.err().message ==
        "cannot start /bin/sh: cannot change to " + (dir / "missing") + ": No such file or directory");
  CHECK(access(marker.c_str(), F_OK) != 0);
  CHECK(waitpid(-1, nullptr, WNOHANG) == -1);
}

// ---------------------------------------------------------------------------
// spawn_watched

// Polls a watch until it reports an exit or five seconds pass.
std::optional<int> wait_exit_status(cu::launched_program& p) {
  std::optional<int> status;
  eventually([&] { return (status = p.exit_status()).has_value(); });
  return status;
}

TEST_CASE("a watched program's exit status is reported, and its watcher is reaped then") {
  auto spawned = cu::spawn_watched({"/bin/sh", "-c", "exit 3"});
  REQUIRE(spawned.ok());
  std::optional<int> status = wait_exit_status(*spawned);
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 3);
  CHECK(waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
  CHECK(spawned->exit_status() == status);  // It stays known.
  spawned->release();
  CHECK(spawned->exit_status() == status);
}

TEST_CASE("a watched program killed by a signal reports the signal") {
  auto spawned = cu::spawn_watched({"/bin/sh", "-c", "kill -TERM $$"});
  REQUIRE(spawned.ok());
  std::optional<int> status = wait_exit_status(*spawned);
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  CHECK(WTERMSIG(*status) == SIGTERM);
}

TEST_CASE("a watched program that runs on is its watcher's child, holding nothing of ours, until released") {
  temp_dir dir;
  write_file(dir / "leak", "x");
  int opened = open((dir / "leak").c_str(), O_RDONLY);
  REQUIRE(opened >= 0);
  int leak = fcntl(opened, F_DUPFD, 20);
  close(opened);
  auto spawned = cu::spawn_watched({"/bin/sleep", "30"});
  close(leak);
  REQUIRE(spawned.ok());
  pid_t pid = spawned->pid();
  killer k{pid};
  CHECK_FALSE(spawned->exit_status());

  // The watcher is our child and the program's parent; it keeps only its
  // pidfd and its end of the socket, none of the server's descriptors.
  pid_t watcher = stat_of(pid).ppid;
  REQUIRE(watcher != getpid());
  CHECK(stat_of(watcher).ppid == getpid());
  std::vector<std::string> targets;
  REQUIRE(eventually([&] {
    targets.clear();
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(watcher) +
                                                             "/fd")) {
      targets.push_back(std::filesystem::read_symlink(e.path()).string());
    }
    return targets.size() == 2;
  }));
  std::sort(targets.begin(), targets.end());
  // "anon_inode:[pidfd]", or "pidfd:[N]" from Linux 6.9 on.
  CHECK(targets[0].find("pidfd") != std::string::npos);
  CHECK(targets[1].rfind("socket:", 0) == 0);

  spawned->release();
  CHECK(waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
  // The program carries on, detached.
  CHECK(kill(pid, 0) == 0);
  CHECK(stat_of(pid).ppid != watcher);
  CHECK_FALSE(spawned->exit_status());
}

TEST_CASE("a watched program that cannot be executed is an io error, and its watcher is reaped") {
  auto missing = cu::spawn_watched({"/nonexistent/cu-test-program"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.err().message ==
        "cannot start /nonexistent/cu-test-program: No such file or directory");
  CHECK(waitpid(-1, nullptr, WNOHANG) == -1);
}

TEST_CASE("launch_names: a program's names, through links, a script's interpreter, env -S, the terminal and StartupWMClass") {
  using cu::launch_command, cu::launch_name, cu::launch_spec;
  temp_dir d;
  write_file(d / "mail", "#!/bin/sh\nexit 0\n", 0755);
  REQUIRE(symlink((d / "mail").c_str(), (d / "inbox").c_str()) == 0);
  write_file(d / "notes", "#!/usr/bin/python3 -u\n", 0755);
  write_file(d / "memo", "#!/usr/bin/env -S PYTHONUNBUFFERED=1 python3 -u\n", 0755);
  write_file(d / "plain", "\x7f" "ELF not a script", 0755);
  auto names = [](const launch_spec& spec, const launch_command& command) {
    std::vector<std::string> out;
    for (const launch_name& n : cu::launch_names(spec, command)) out.push_back(n.name + "=" + n.what);
    return out;
  };
  launch_spec link;
  link.argv = {d / "inbox"};
  CHECK(names(link, launch_command{link.argv, "", ""}) ==
        strings{"inbox=its executable", "mail=the file its executable links to",
                "sh=its interpreter"});
  launch_spec script;
  script.argv = {d / "notes", "x"};
  CHECK(names(script, launch_command{script.argv, "", ""}) ==
        strings{"notes=its executable", "python3=its interpreter"});
  launch_spec env_s;
  env_s.argv = {d / "memo"};
  CHECK(names(env_s, launch_command{env_s.argv, "", ""}) ==
        strings{"memo=its executable", "env=its interpreter", "python3=its interpreter"});
  launch_spec in_terminal;
  in_terminal.argv = {d / "plain"};
  in_terminal.terminal = true;
  in_terminal.startup_wm_class = "Plainly";
  launch_command command{{"/usr/bin/xterm", "-e", d / "plain"}, "", "/usr/bin/xterm"};
  const strings got = names(in_terminal, command);
  CHECK(got.front() == "plain=its executable");
  CHECK(std::find(got.begin(), got.end(), "xterm=its terminal") != got.end());
  CHECK(got.back() == "Plainly=its desktop entry's StartupWMClass");
}
