#include "util/launch.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include "util/ascii.h"

namespace cu {
namespace {

// ---------------------------------------------------------------------------
// Names and paths.

bool ends_with_desktop(std::string_view name) {
  constexpr std::string_view kSuffix = ".desktop";
  return name.size() > kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    parts.emplace_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The executable named name (no '/') in the first PATH directory holding
// one. Empty entries (which mean the working directory) and relative ones are
// skipped: what the server runs must not depend on where it was started.
std::optional<std::string> search_path(std::string_view name, const std::string& path) {
  for (std::string dir : split(path, ':')) {
    if (dir.empty() || dir[0] != '/') continue;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    std::string candidate = (dir == "/" ? "" : dir) + "/" + std::string(name);
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

// A desktop entry's program (Exec's first word or TryExec) as an absolute
// executable path: a bare name goes through PATH, an absolute path must be
// executable itself, and a relative path with a '/' is refused because it
// would depend on the server's working directory.
std::optional<std::string> resolve_program(const std::string& program, const std::string& path) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') == std::string::npos) return search_path(program, path);
  if (program[0] == '/' && is_executable_file(program)) return program;
  return std::nullopt;
}

// The file names in dir, sorted so that which entry wins does not depend on
// readdir order. A missing or unreadable directory has none.
std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (ends_with_desktop(name)) names.emplace_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// ---------------------------------------------------------------------------
// Desktop entries.

// Undoes the general escapes of a string value (\s \n \t \r \\). Anything
// else after a backslash is kept with its backslash, so that Exec's quoting
// rules, applied afterwards, still see \" \` and \$.
std::string unescape_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '\\' || i + 1 == v.size()) {
      out += v[i];
      continue;
    }
    switch (v[i + 1]) {
      case 's': out += ' '; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      default: out += '\\'; out += v[i + 1]; break;
    }
    ++i;
  }
  return out;
}

// The keys find_launchable needs from the [Desktop Entry] group, raw (still
// escaped); localized variants such as Name[de] are not these keys.
struct desktop_entry {
  std::optional<std::string> type, name, exec, try_exec, hidden;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Real desktop files are a few kilobytes; anything this big is not one, and
// reading it whole would only waste time.
constexpr off_t kMaxDesktopFileSize = 1 << 20;

std::optional<desktop_entry> read_desktop_entry(const std::string& file) {
  struct stat st;
  if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxDesktopFileSize) {
    return std::nullopt;
  }
  std::ifstream in(file);
  if (!in) return std::nullopt;
  desktop_entry entry;
  bool in_main_group = false;
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    if (l[0] == '[') {
      in_main_group = l == "[Desktop Entry]";
      continue;
    }
    if (!in_main_group) continue;
    size_t eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = trim(l.substr(0, eq));
    std::string value(trim(l.substr(eq + 1)));
    // The first occurrence counts; a well-formed file has only one.
    auto set = [&](std::optional<std::string>& slot) {
      if (!slot) slot = std::move(value);
    };
    if (key == "Type") set(entry.type);
    else if (key == "Name") set(entry.name);
    else if (key == "Exec") set(entry.exec);
    else if (key == "TryExec") set(entry.try_exec);
    else if (key == "Hidden") set(entry.hidden);
  }
  return entry;
}

// The argv for a usable entry, or nothing when the spec or our rules say it
// must not be run.
std::optional<std::vector<std::string>> entry_argv(const desktop_entry& entry,
                                                   const std::string& path) {
  if (entry.type != "Application" || !entry.exec) return std::nullopt;
  if (entry.hidden == "true") return std::nullopt;
  if (entry.try_exec && !resolve_program(unescape_value(*entry.try_exec), path)) {
    return std::nullopt;
  }
  auto argv = parse_desktop_exec(*entry.exec);
  if (!argv.ok()) return std::nullopt;
  auto program = resolve_program(argv->front(), path);
  if (!program) return std::nullopt;
  argv->front() = std::move(*program);
  return std::move(*argv);
}

// ---------------------------------------------------------------------------
// Spawning. Everything the children touch is prepared before the first fork:
// after fork in a multithreaded process, another thread may have held the
// malloc lock (or any other) at that instant, so the children call only
// async-signal-safe functions on memory that already exists.

// What the children tell the parent through the pipe. Each message is one
// write of two ints, well under PIPE_BUF, so messages from the two children
// never interleave even though either may write first.
enum message_kind : int {
  kProgramPid = 1,   // From the intermediate child: the program's pid.
  kForkFailed = 2,   // From the intermediate child: errno of its fork.
  kSetupFailed = 3,  // From the program before exec: errno of dup3.
  kExecFailed = 4,   // From the program: errno of execv.
};

struct spawn_plan {
  char* const* argv;
  int devnull;
  int pipe_read;
  int pipe_write;
  int fd_limit;  // One past the highest descriptor that may be open.
};

void send(int fd, int kind, int value) {
  int message[2] = {kind, value};
  ssize_t ignored = write(fd, message, sizeof message);
  (void)ignored;
}

// Closes every descriptor from first on. close_range does it in one call on
// Linux 5.9 and later; older kernels get the loop, bounded by the limit read
// before the fork.
void close_from(int first, int fd_limit) {
  if (close_range(unsigned(first), ~0U, 0) == 0) return;
  for (int fd = first; fd < fd_limit; ++fd) close(fd);
}

[[noreturn]] void run_program(const spawn_plan& plan) {
  // A new session, so the program has no controlling terminal and a signal
  // sent to the server's process group (a Ctrl-C in its terminal) spares it.
  setsid();
  dup2(plan.devnull, STDIN_FILENO);
  dup2(plan.devnull, STDOUT_FILENO);
  dup2(plan.devnull, STDERR_FILENO);
  // The pipe moves to 3 so that one close_range can take everything above
  // it. It stays close-on-exec: a successful execv closes it, and the parent
  // reads that as success.
  int report = plan.pipe_write;
  if (report != 3) {
    if (dup3(report, 3, O_CLOEXEC) < 0) {
      send(report, kSetupFailed, errno);
      _exit(127);
    }
    report = 3;
  }
  close_from(4, plan.fd_limit);
  // Handlers would be reset by execv anyway, but ignored signals survive it
  // (the server ignores SIGPIPE), and the mask we blocked before forking
  // would too.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  // sigaction refuses SIGKILL, SIGSTOP and glibc's internal signals, which
  // is fine: those cannot be ignored anyway.
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execv(plan.argv[0], plan.argv);
  send(report, kExecFailed, errno);
  _exit(127);
}

[[noreturn]] void run_intermediate(const spawn_plan& plan) {
  close(plan.pipe_read);
  pid_t pid = _Fork();
  if (pid == 0) run_program(plan);
  if (pid < 0) {
    send(plan.pipe_write, kForkFailed, errno);
    _exit(1);
  }
  send(plan.pipe_write, kProgramPid, int(pid));
  _exit(0);
}

// Moves fd above the standard descriptors, keeping it close-on-exec. Only a
// server started with a standard descriptor closed gets a low one, and the
// program's dup2 onto 0, 1 and 2 must not clobber the pipe or /dev/null.
int above_stdio(int fd, std::vector<int>& to_close) {
  if (fd > STDERR_FILENO) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  to_close.push_back(fd);
  return moved;
}

error spawn_error(const std::string& program, const std::string& what, int err) {
  return make_error(errc::io, "cannot start " + program + ": " + what + strerror(err));
}

}  // namespace

launch_env launch_env::from_environment() {
  launch_env env;
  const char* path = getenv("PATH");
  env.path = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";

  std::vector<std::string> data_dirs;
  const char* data_home = getenv("XDG_DATA_HOME");
  const char* home = getenv("HOME");
  if (data_home != nullptr && data_home[0] == '/') {
    data_dirs.emplace_back(data_home);
  } else if (home != nullptr && home[0] == '/') {
    data_dirs.push_back(std::string(home) + "/.local/share");
  }
  const char* dirs = getenv("XDG_DATA_DIRS");
  std::string dir_list = dirs != nullptr && dirs[0] != '\0' ? dirs : "/usr/local/share:/usr/share";
  for (std::string& dir : split(dir_list, ':')) {
    if (!dir.empty() && dir[0] == '/') data_dirs.push_back(std::move(dir));
  }

  for (std::string& dir : data_dirs) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    std::string apps = (dir == "/" ? "" : dir) + "/applications";
    if (std::find(env.application_dirs.begin(), env.application_dirs.end(), apps) ==
        env.application_dirs.end()) {
      env.application_dirs.push_back(std::move(apps));
    }
  }
  return env;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::optional<launch_spec> find_launchable(std::string_view app, const launch_env& env) {
  if (app.empty() || app[0] == '-' || app.find('/') != std::string_view::npos ||
      app.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }

  if (auto program = search_path(app, env.path)) {
    return launch_spec{{std::move(*program)}, "PATH"};
  }

  // Each desktop file ID once, from the highest-priority directory holding
  // it, in priority order.
  std::vector<std::string> files;
  std::unordered_set<std::string> seen;
  for (const std::string& dir : env.application_dirs) {
    for (std::string& name : list_dir(dir)) {
      if (seen.insert(name).second) files.push_back(dir + "/" + name);
    }
  }

  std::string wanted_file = std::string(app) + ".desktop";
  auto file_name = [](const std::string& file) {
    return std::string_view(file).substr(file.rfind('/') + 1);
  };
  for (const std::string& file : files) {
    if (!iequals(file_name(file), wanted_file)) continue;
    auto entry = read_desktop_entry(file);
    if (!entry) continue;
    if (auto argv = entry_argv(*entry, env.path)) return launch_spec{std::move(*argv), file};
  }
  for (const std::string& file : files) {
    auto entry = read_desktop_entry(file);
    if (!entry || !entry->name || !iequals(unescape_value(*entry->name), app)) continue;
    if (auto argv = entry_argv(*entry, env.path)) return launch_spec{std::move(*argv), file};
  }
  return std::nullopt;
}

result<std::vector<std::string>> parse_desktop_exec(std::string_view exec) {
  const std::string line = unescape_value(exec);
  std::vector<std::string> argv;
  std::string arg;
  bool in_arg = false;     // Something (a character, quotes, a field code) began an argument.
  bool had_field = false;  // The argument held a field code, now dropped.
  char quote = '\0';       // The open quote, if any.

  auto finish = [&] {
    // An argument made only of field codes stands for the files or URLs a
    // launcher would pass; with none to pass it is no argument at all. A
    // plain "" is still an empty argument.
    if (in_arg && (!arg.empty() || !had_field)) argv.push_back(std::move(arg));
    arg.clear();
    in_arg = had_field = false;
  };

  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    bool has_next = i + 1 < line.size();
    // Field codes mean the same inside quotes, where the spec forbids them
    // but files have them anyway; GLib expands them there too.
    if (c == '%') {
      if (!has_next) {
        return make_error(errc::invalid_argument, "desktop Exec value ends with a lone %");
      }
      char code = line[++i];
      in_arg = true;
      if (code == '%') {
        arg += '%';
      } else if (std::string_view("fFuUdDnNickvm").find(code) != std::string_view::npos) {
        had_field = true;
      } else {
        std::string shown = (code >= 'a' && code <= 'z') || (code >= 'A' && code <= 'Z')
                                ? std::string("%") + code
                                : std::string("a % not followed by a letter");
        return make_error(errc::invalid_argument,
                          "desktop Exec value uses an unknown field code (" + shown + ")");
      }
      continue;
    }
    if (quote == '\'') {
      // Single quotes, as in a shell: everything literal up to the next one.
      if (c == '\'') quote = '\0';
      else arg += c;
      continue;
    }
    if (quote == '"') {
      if (c == '"') {
        quote = '\0';
      } else if (c == '\\' && has_next &&
                 std::string_view("\"`$\\").find(line[i + 1]) != std::string_view::npos) {
        arg += line[++i];
      } else {
        arg += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      finish();
      continue;
    }
    in_arg = true;
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '\\' && has_next) {
      arg += line[++i];
    } else {
      arg += c;
    }
  }
  if (quote != '\0') {
    return make_error(errc::invalid_argument, quote == '"'
                                                  ? "desktop Exec value has an unterminated \""
                                                  : "desktop Exec value has an unterminated '");
  }
  finish();
  if (argv.empty() || argv[0].empty()) {
    return make_error(errc::invalid_argument, "desktop Exec value names no program");
  }
  return argv;
}

result<pid_t> spawn_detached(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) {
    return make_error(errc::invalid_argument, "spawn_detached needs a program to run");
  }
  const std::string& program = argv[0];
  if (program[0] != '/') {
    return make_error(errc::invalid_argument,
                      "spawn_detached needs an absolute path, not " + program);
  }
  for (const std::string& a : argv) {
    if (a.find('\0') != std::string::npos) {
      return make_error(errc::invalid_argument, "an argument for " + program + " contains NUL");
    }
  }

  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  struct rlimit files;
  int fd_limit = 65536;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    fd_limit = int(std::min<rlim_t>(files.rlim_cur, 1 << 20));
  }

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return spawn_error(program, "cannot open /dev/null: ", errno);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    int err = errno;
    close(devnull);
    return spawn_error(program, "cannot create a pipe: ", err);
  }
  std::vector<int> low;
  spawn_plan plan{cargv.data(), above_stdio(devnull, low), above_stdio(pipe_fds[0], low),
                  above_stdio(pipe_fds[1], low), fd_limit};
  for (int fd : low) close(fd);
  auto close_all = [&] {
    for (int fd : {plan.devnull, plan.pipe_read, plan.pipe_write}) {
      if (fd >= 0) close(fd);
    }
  };
  if (plan.devnull < 0 || plan.pipe_read < 0 || plan.pipe_write < 0) {
    int err = errno;
    close_all();
    return spawn_error(program, "cannot move descriptors: ", err);
  }

  // Every signal stays blocked from just before the fork until the program
  // resets its dispositions, so none of the server's handlers ever runs in a
  // child (libuv's would write to the server's own signal pipe). _Fork rather
  // than fork: no atfork handlers run, neither in the parent (where glibc's
  // would take every malloc arena lock) nor in a child, where they would not
  // be async-signal-safe.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t child = _Fork();
  if (child == 0) run_intermediate(plan);
  int fork_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close(plan.pipe_write);
  plan.pipe_write = -1;
  close(plan.devnull);
  plan.devnull = -1;
  if (child < 0) {
    close_all();
    return spawn_error(program, "fork failed: ", fork_err);
  }

  // Read until end of file, which comes once the intermediate child has
  // exited and the program has exec'd (close-on-exec) or died.
  int messages[8];
  char* buffer = reinterpret_cast<char*>(messages);
  size_t got = 0;
  while (got < sizeof messages) {
    ssize_t n = read(plan.pipe_read, buffer + got, sizeof messages - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  close_all();
  int status;
  // ECHILD means someone set SIGCHLD to SIG_IGN and the kernel reaped it.
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  pid_t pid = -1;
  for (size_t i = 0; i + 1 < got / sizeof(int); i += 2) {
    int kind = messages[i], value = messages[i + 1];
    switch (kind) {
      case kProgramPid: pid = value; break;
      case kForkFailed: return spawn_error(program, "fork failed: ", value);
      case kSetupFailed: return spawn_error(program, "cannot set up descriptors: ", value);
      case kExecFailed: return spawn_error(program, "", value);
      default: break;
    }
  }
  if (pid <= 0) return make_error(errc::io, "cannot start " + program + ": the launcher died");
  return pid;
}

}  // namespace cu
