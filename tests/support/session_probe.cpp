#include "support/session_probe.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/harness.h"

namespace cu::test {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string make_temp_dir(const char* prefix) {
  std::string tmpl = "/tmp/";
  tmpl.append(prefix).append("-XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) fail("mkdtemp failed");
  return tmpl;
}

void remove_tree(const std::string& dir) {
  std::string cmd = "rm -rf '";
  cmd.append(dir).append("'");
  int ignored = system(cmd.c_str());
  (void)ignored;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_whole_file(const std::string& path, std::string_view data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), std::streamsize(data.size()));
  if (!f) fail("cannot write " + path);
}

// In a freshly forked child: sets DISPLAY and execs argv, searching PATH.
[[noreturn]] void exec_on_display(const std::vector<std::string>& argv, const std::string& display) {
  setenv("DISPLAY", display.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

std::optional<int> decode_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return std::nullopt;
}

// Appends whatever fd has to out; false at EOF or on an error other than
// "nothing more right now".
bool drain(int fd, std::string& out) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;
  }
}

void round_trip(xcb_connection_t* c) {
  free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr));
}

}  // namespace

run_result run_program(const std::vector<std::string>& argv, const std::string& display,
                       std::string_view stdin_data, int timeout_ms) {
  const std::string dir = make_temp_dir("cu-run");
  const std::string input = dir + "/stdin";
  write_whole_file(input, stdin_data);
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) fail("pipe failed");
  pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    int in = open(input.c_str(), O_RDONLY);
    dup2(in, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    exec_on_display(argv, display);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  run_result r;
  bool out_open = true, err_open = true, exited = false;
  const int64_t deadline = now_ms() + timeout_ms;
  while (!exited) {
    pollfd p[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    // A short timeout: the program may leave a daemon child holding the
    // pipes open, so its exit is checked for as well as EOF.
    poll(p, 2, 10);
    if (out_open) out_open = drain(out_pipe[0], r.out);
    if (err_open) err_open = drain(err_pipe[0], r.err);
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      exited = true;
      r.status = decode_status(st);
      // What it wrote before exiting is all in the pipes by now.
      if (out_open) drain(out_pipe[0], r.out);
      if (err_open) drain(err_pipe[0], r.err);
    } else if (now_ms() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      break;
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  remove_tree(dir);
  return r;
}

background_program::background_program(const std::vector<std::string>& argv,
                                       const std::string& display, std::string_view stdin_data) {
  dir_ = make_temp_dir("cu-bg");
  const std::string input = dir_ + "/stdin";
  const std::string log = dir_ + "/log";
  write_whole_file(input, stdin_data);
  pid_ = fork();
  if (pid_ < 0) fail("fork failed");
  if (pid_ == 0) {
    if (chdir(dir_.c_str()) != 0) _exit(126);
    int in = open(input.c_str(), O_RDONLY);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    exec_on_display(argv, display);
  }
}

background_program::~background_program() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  remove_tree(dir_);
}

bool background_program::running() { return child_running(pid_); }

std::string background_program::log() const { return read_whole_file(dir_ + "/log"); }

x_observer::x_observer(const std::string& display) {
  int screen_number = 0;
  conn_ = xcb_connect(display.c_str(), &screen_number);
  if (xcb_connection_has_error(conn_)) {
    xcb_disconnect(conn_);
    conn_ = nullptr;
    fail("x_observer cannot connect to " + display);
  }
  auto it = xcb_setup_roots_iterator(xcb_get_setup(conn_));
  for (int i = 0; i < screen_number; ++i) xcb_screen_next(&it);
  root_ = it.data->root;
}

x_observer::~x_observer() {
  if (conn_ != nullptr) xcb_disconnect(conn_);
}

void x_observer::sync() { round_trip(conn_); }

xcb_atom_t x_observer::atom(std::string_view name) {
  auto it = atoms_.find(name);
  if (it != atoms_.end()) return it->second;
  xcb_intern_atom_reply_t* r = xcb_intern_atom_reply(
      conn_, xcb_intern_atom(conn_, 0, uint16_t(name.size()), name.data()), nullptr);
  if (r == nullptr) fail("InternAtom failed");
  xcb_atom_t a = r->atom;
  free(r);
  atoms_.emplace(std::string(name), a);
  return a;
}

xcb_window_t x_observer::input_focus() {
  xcb_get_input_focus_reply_t* r = xcb_get_input_focus_reply(conn_, xcb_get_input_focus(conn_), nullptr);
  if (r == nullptr) fail("GetInputFocus failed");
  xcb_window_t w = r->focus;
  free(r);
  return w;
}

void x_observer::set_input_focus(xcb_window_t w) {
  xcb_set_input_focus(conn_, XCB_INPUT_FOCUS_POINTER_ROOT, w, XCB_CURRENT_TIME);
  sync();
}

xcb_window_t x_observer::selection_owner(std::string_view selection) {
  xcb_get_selection_owner_reply_t* r = xcb_get_selection_owner_reply(
      conn_, xcb_get_selection_owner(conn_, atom(selection)), nullptr);
  if (r == nullptr) fail("GetSelectionOwner failed");
  xcb_window_t w = r->owner;
  free(r);
  return w;
}

xcb_window_t x_observer::wait_selection_owner_other_than(std::string_view selection,
                                                         xcb_window_t not_this, int timeout_ms) {
  // The new owner is another process that takes its time: poll with a deadline.
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    xcb_window_t w = selection_owner(selection);
    if (w != XCB_NONE && w != not_this) return w;
    if (now_ms() > deadline) return XCB_NONE;
    usleep(5000);
  }
}

std::vector<xcb_window_t> x_observer::top_levels() {
  std::vector<xcb_window_t> out;
  xcb_query_tree_reply_t* r = xcb_query_tree_reply(conn_, xcb_query_tree(conn_, root_), nullptr);
  if (r == nullptr) return out;
  const xcb_window_t* c = xcb_query_tree_children(r);
  out.assign(c, c + xcb_query_tree_children_length(r));
  free(r);
  return out;
}

xcb_window_t x_observer::top_level_of(xcb_window_t w) {
  for (;;) {
    xcb_query_tree_reply_t* r = xcb_query_tree_reply(conn_, xcb_query_tree(conn_, w), nullptr);
    if (r == nullptr) return XCB_NONE;
    xcb_window_t parent = r->parent;
    free(r);
    if (parent == root_ || parent == XCB_NONE) return w;
    w = parent;
  }
}

bool x_observer::viewable(xcb_window_t w) {
  xcb_get_window_attributes_reply_t* a =
      xcb_get_window_attributes_reply(conn_, xcb_get_window_attributes(conn_, w), nullptr);
  bool v = a != nullptr && a->map_state == XCB_MAP_STATE_VIEWABLE;
  free(a);
  return v;
}

std::optional<std::string> x_observer::property(xcb_window_t w, xcb_atom_t prop, xcb_atom_t type) {
  xcb_get_property_reply_t* r = xcb_get_property_reply(
      conn_, xcb_get_property(conn_, 0, w, prop, type, 0, 1u << 20), nullptr);
  if (r == nullptr) return std::nullopt;
  std::optional<std::string> out;
  if (r->format != 0 && r->type != XCB_NONE &&
      (type == XCB_GET_PROPERTY_TYPE_ANY || r->type == type)) {
    const char* v = static_cast<const char*>(xcb_get_property_value(r));
    out = std::string(v, size_t(xcb_get_property_value_length(r)));  // Bytes, any format.
  }
  free(r);
  return out;
}

std::optional<std::pair<std::string, std::string>> x_observer::wm_class(xcb_window_t w) {
  std::optional<std::string> v = property(w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING);
  if (!v) return std::nullopt;
  // Two NUL-terminated strings: instance, then class.
  size_t nul = v->find('\0');
  std::string instance = v->substr(0, nul);
  std::string cls;
  if (nul != std::string::npos) {
    cls = v->substr(nul + 1);
    size_t end = cls.find('\0');
    if (end != std::string::npos) cls.resize(end);
  }
  return std::pair{instance, cls};
}

std::string x_observer::title(xcb_window_t w) {
  if (auto v = property(w, atom("_NET_WM_NAME"), atom("UTF8_STRING"))) return *v;
  if (auto v = property(w, XCB_ATOM_WM_NAME, XCB_GET_PROPERTY_TYPE_ANY)) return *v;
  return {};
}

std::vector<uint32_t> x_observer::cardinals(xcb_window_t w, std::string_view prop) {
  auto* r = xcb_get_property_reply(
      conn_, xcb_get_property(conn_, 0, w, atom(prop), XCB_GET_PROPERTY_TYPE_ANY, 0, 256), nullptr);
  std::vector<uint32_t> out;
  if (r != nullptr && r->format == 32) {
    auto* v = static_cast<const uint32_t*>(xcb_get_property_value(r));
    out.assign(v, v + xcb_get_property_value_length(r) / 4);
  }
  free(r);
  return out;
}

xcb_window_t x_observer::client_named(const std::string& title_wanted) {
  for (xcb_window_t top : top_levels()) {
    std::vector<xcb_window_t> candidates = {top};
    auto* t = xcb_query_tree_reply(conn_, xcb_query_tree(conn_, top), nullptr);
    if (t != nullptr) {
      xcb_window_t* k = xcb_query_tree_children(t);
      candidates.insert(candidates.end(), k, k + xcb_query_tree_children_length(t));
      free(t);
    }
    for (xcb_window_t w : candidates) {
      if (title(w) == title_wanted && viewable(w)) return w;
    }
  }
  return XCB_NONE;
}

xcb_window_t x_observer::window_property(xcb_window_t w, std::string_view name) {
  std::optional<std::string> v = property(w, atom(name), XCB_ATOM_WINDOW);
  if (!v || v->size() < 4) return XCB_NONE;
  xcb_window_t out;
  memcpy(&out, v->data(), 4);
  return out;
}

std::optional<uint32_t> x_observer::net_wm_pid(xcb_window_t w) {
  std::optional<std::string> v = property(w, atom("_NET_WM_PID"), XCB_ATOM_CARDINAL);
  if (!v || v->size() < 4) return std::nullopt;
  uint32_t pid;
  memcpy(&pid, v->data(), 4);
  return pid;
}

std::vector<xcb_window_t> x_observer::windows_with_class(std::string_view cls) {
  std::vector<xcb_window_t> out;
  for (xcb_window_t w : top_levels()) {
    auto c = wm_class(w);
    if (c && c->second == cls) out.push_back(w);
  }
  return out;
}

silent_clipboard_owner::silent_clipboard_owner(const std::string& display) {
  int screen_number = 0;
  conn_ = xcb_connect(display.c_str(), &screen_number);
  if (xcb_connection_has_error(conn_)) {
    xcb_disconnect(conn_);
    conn_ = nullptr;
    fail("silent_clipboard_owner cannot connect to " + display);
  }
  auto it = xcb_setup_roots_iterator(xcb_get_setup(conn_));
  for (int i = 0; i < screen_number; ++i) xcb_screen_next(&it);
  window_ = xcb_generate_id(conn_);
  xcb_create_window(conn_, XCB_COPY_FROM_PARENT, window_, it.data->root, 0, 0, 1, 1, 0,
                    XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, 0, nullptr);
  static constexpr char kClipboard[] = "CLIPBOARD";
  xcb_intern_atom_reply_t* a = xcb_intern_atom_reply(
      conn_, xcb_intern_atom(conn_, 0, sizeof kClipboard - 1, kClipboard), nullptr);
  if (a == nullptr) fail("InternAtom failed");
  const xcb_atom_t clipboard = a->atom;
  free(a);
  xcb_set_selection_owner(conn_, window_, clipboard, XCB_CURRENT_TIME);
  xcb_get_selection_owner_reply_t* o =
      xcb_get_selection_owner_reply(conn_, xcb_get_selection_owner(conn_, clipboard), nullptr);
  const bool owned = o != nullptr && o->owner == window_;
  free(o);
  if (!owned) fail("silent_clipboard_owner did not get CLIPBOARD");
  // From here on nothing reads this connection's events: SelectionRequest
  // events queue up unanswered.
}

silent_clipboard_owner::~silent_clipboard_owner() {
  if (conn_ != nullptr) xcb_disconnect(conn_);
}

xterm_window::xterm_window(const std::string& display, const std::string& title, int x, int y) {
  // xterm exports its VT100 window as WINDOWID; the shell hands it over
  // through a file that appears atomically once the shell runs, then waits
  // on the tty (and ends when xterm goes).
  const std::string script =
      "printf %s \"$WINDOWID\" > READY.tmp && mv READY.tmp READY; exec cat > /dev/null";
  std::string geometry = "80x10+";
  geometry.append(std::to_string(x)).append("+").append(std::to_string(y));
  std::vector<std::string> argv = {"xterm"};
  if (!title.empty()) {
    argv.push_back("-T");
    argv.push_back(title);
  }
  for (const char* a : {"-geometry"}) argv.push_back(a);
  argv.push_back(geometry);
  for (const char* a : {"-e", "sh", "-c"}) argv.push_back(a);
  argv.push_back(script);
  program_.emplace(argv, display);
  // Waiting on another process is unavoidable here: poll with a deadline.
  const int64_t deadline = now_ms() + 30000;
  const std::string ready = program_->dir() + "/READY";
  for (;;) {
    struct stat st;
    if (stat(ready.c_str(), &st) == 0) break;
    if (!program_->running()) fail("xterm exited before its shell ran: " + program_->log());
    if (now_ms() > deadline) fail("xterm did not start: " + program_->log());
    usleep(10000);
  }
  const xcb_window_t vt100 = xcb_window_t(strtoul(read_whole_file(ready).c_str(), nullptr, 10));
  if (vt100 == 0) fail("xterm gave no WINDOWID");
  x_observer obs(display);
  top_level_ = obs.top_level_of(vt100);
  if (top_level_ == XCB_NONE) fail("xterm's window has no top level");
  while (!obs.viewable(top_level_) || !obs.viewable(vt100)) {
    if (now_ms() > deadline) fail("xterm's window never became viewable");
    usleep(10000);
  }
}

xterm_window::~xterm_window() = default;

std::vector<pid_t> processes_on_display(std::string_view comm, const std::string& display) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  std::string exact = "DISPLAY=";
  exact.append(display);
  const std::string screen = exact + ".";  // ":1.0" names screen 0 of ":1".
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    const std::string base = std::string("/proc/") + e->d_name;
    std::string name = read_whole_file(base + "/comm");
    while (!name.empty() && name.back() == '\n') name.pop_back();
    if (name != comm) continue;
    std::ifstream f(base + "/environ", std::ios::binary);
    std::string var;
    while (std::getline(f, var, '\0')) {
      if (var == exact || var.rfind(screen, 0) == 0) {
        if (!process_gone(pid_t(pid))) out.push_back(pid_t(pid));
        break;
      }
    }
  }
  closedir(d);
  return out;
}

bool process_gone(pid_t pid) {
  std::string path = "/proc/";
  path.append(std::to_string(pid)).append("/stat");
  std::ifstream f(path);
  std::string line;
  if (!std::getline(f, line)) return true;
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return true;
  const char state = line[close + 2];
  return state == 'Z' || state == 'X';
}

bool kill_and_wait_gone(const std::vector<pid_t>& pids, int timeout_ms) {
  for (pid_t p : pids) {
    if (p > 0) kill(p, SIGKILL);
  }
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    bool all = true;
    for (pid_t p : pids) all = all && process_gone(p);
    if (all) return true;
    if (now_ms() > deadline) return false;
    usleep(10000);
  }
}

std::string first_difference(std::string_view got, std::string_view want) {
  if (got == want) return {};
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  auto excerpt = [](std::string_view s, size_t at) {
    size_t from = at < 20 ? 0 : at - 20;
    return std::string(s.substr(from, 60));
  };
  std::string out = "got ";
  out.append(std::to_string(got.size())).append(" bytes, want ");
  out.append(std::to_string(want.size())).append("; first difference at byte ");
  out.append(std::to_string(i)).append(": got \"").append(excerpt(got, i));
  out.append("\" want \"").append(excerpt(want, i)).append("\"");
  return out;
}

}  // namespace cu::test
