#include "desktop/app_lookup.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <unordered_set>

#include "desktop/desktop_entry.h"
#include "util/ascii.h"
#include "util/str_cat.h"

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
// would depend on the server's working directory. The error says why:
// "its KEY program "x" is not an executable on PATH".
result<std::string> resolve_program(const std::string& program, const std::string& path,
                                    std::string_view key) {
  auto refuse = [&](std::string_view why) {
    return make_error(errc::not_found, str_cat("its ", key, " program \"", program, "\" ", why));
  };
  if (program.empty()) return refuse("is empty");
  if (program.find('/') == std::string::npos) {
    if (auto found = search_path(program, path)) return *found;
    return refuse("is not an executable on PATH");
  }
  if (program[0] != '/') {
    return refuse("is a relative path (only a bare name, looked up on PATH, or an absolute "
                  "path is run)");
  }
  if (!is_executable_file(program)) return refuse("is not an executable file");
  return program;
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

// What a usable entry starts, or why the spec or our rules say it must not
// be run. Terminal= and Path= are only recorded here; prepare_launch acts on
// them.
result<launch_spec> entry_spec(const desktop_entry& entry, const std::string& file,
                               const std::string& path) {
  if (!entry.type) {
    return make_error(errc::not_found,
                      "it has no Type key in its [Desktop Entry] group (an application's is "
                      "Type=Application)");
  }
  if (entry.type != "Application") {
    return make_error(errc::not_found,
                      str_cat("its Type is \"", *entry.type, "\", not \"Application\""));
  }
  if (!entry.exec) return make_error(errc::not_found, "it has no Exec key");
  if (is_true(entry.hidden)) {
    return make_error(errc::not_found, "it says Hidden=true, which marks it deleted");
  }
  if (entry.try_exec) {
    auto tried = resolve_program(unescape_value(*entry.try_exec), path, "TryExec");
    if (!tried) return tried.take_error();
  }
  auto argv = parse_desktop_exec(*entry.exec);
  if (!argv) return argv.take_error();
  auto program = resolve_program(argv->front(), path, "Exec");
  if (!program) return program.take_error();
  argv->front() = std::move(*program);
  launch_spec spec;
  spec.argv = std::move(*argv);
  spec.source = file;
  spec.terminal = is_true(entry.terminal);
  if (entry.path) spec.working_dir = unescape_value(*entry.path);
  if (entry.startup_wm_class) spec.startup_wm_class = unescape_value(*entry.startup_wm_class);
  return spec;
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

std::optional<launch_spec> find_launchable(std::string_view app, const launch_env& env,
                                           std::vector<rejected_entry>* rejected) {
  if (app.empty() || app[0] == '-' || app.find('/') != std::string_view::npos ||
      app.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }

  if (auto program = search_path(app, env.path)) {
    launch_spec spec;
    spec.argv = {std::move(*program)};
    spec.source = "PATH";
    return spec;
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

  auto reject = [&](const std::string& file, std::string why) {
    if (rejected != nullptr) rejected->push_back({file, std::move(why)});
  };
  std::string wanted_file = std::string(app) + ".desktop";
  auto file_name = [](const std::string& file) {
    return std::string_view(file).substr(file.rfind('/') + 1);
  };
  for (const std::string& file : files) {
    if (!iequals(file_name(file), wanted_file)) continue;
    auto entry = read_desktop_entry(file);
    if (!entry) {
      reject(file, entry.err().message);
      continue;
    }
    auto spec = entry_spec(*entry, file, env.path);
    if (spec) return std::move(*spec);
    reject(file, spec.err().message);
  }
  // A NoDisplay entry is a helper (a handler for a MIME type, a settings
  // panel) that menus do not show; its Name is not what anyone calls an
  // application by, so only its file name finds it. A file that cannot be
  // read has no Name to match, and one already tried by its file name is
  // not tried (or reported) twice.
  for (const std::string& file : files) {
    if (iequals(file_name(file), wanted_file)) continue;
    auto entry = read_desktop_entry(file);
    if (!entry || !entry->name || is_true(entry->no_display) ||
        !iequals(unescape_value(*entry->name), app)) {
      continue;
    }
    auto spec = entry_spec(*entry, file, env.path);
    if (spec) return std::move(*spec);
    reject(file, spec.err().message);
  }
  return std::nullopt;
}

std::optional<std::string> find_terminal_emulator(const std::string& path) {
  for (std::string_view name : kTerminalEmulators) {
    if (auto program = search_path(name, path)) return program;
  }
  return std::nullopt;
}

result<launch_command> prepare_launch(const launch_spec& spec, const launch_env& env) {
  launch_command command;
  if (!spec.working_dir.empty()) {
    // Checked here so that an unusable directory is a clear answer before
    // anything runs; spawn checks again (its chdir) in case it went away.
    struct stat st;
    const char* why = nullptr;
    if (spec.working_dir[0] != '/') {
      why = "it is not an absolute path";
    } else if (stat(spec.working_dir.c_str(), &st) != 0) {
      why = strerror(errno);
    } else if (!S_ISDIR(st.st_mode)) {
      why = "it is not a directory";
    } else if (access(spec.working_dir.c_str(), X_OK) != 0) {
      why = strerror(errno);
    }
    if (why != nullptr) {
      return make_error(errc::io, str_cat(spec.source, " sets Path=", spec.working_dir,
                                          ", which cannot be the working directory (", why,
                                          "); nothing was started"));
    }
    command.working_dir = spec.working_dir;
  }
  if (!spec.terminal) {
    command.argv = spec.argv;
    return command;
  }
  auto emulator = find_terminal_emulator(env.path);
  if (!emulator) {
    std::string tried;
    for (std::string_view name : kTerminalEmulators) {
      tried.append(tried.empty() ? "" : ", ").append(name);
    }
    return make_error(errc::not_available,
                      str_cat(spec.source, " says Terminal=true, but no terminal emulator is on "
                                           "PATH (tried ", tried,
                              "); install one, e.g. xterm (apt-get install xterm); nothing "
                              "was started"));
  }
  command.terminal = *emulator;
  command.argv = {*emulator, "-e"};
  command.argv.insert(command.argv.end(), spec.argv.begin(), spec.argv.end());
  return command;
}

namespace {

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The interpreter and its first operand from the "#!" line of the file at
// path (at most 256 bytes read); empty when it is not a script.
std::vector<std::string> shebang(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[256];
  in.read(buf, sizeof buf);
  const std::string head(buf, size_t(in.gcount()));
  if (!head.starts_with("#!")) return {};
  const std::string line = head.substr(2, head.find('\n') == std::string::npos
                                              ? std::string::npos
                                              : head.find('\n') - 2);
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size() && words.size() < 8) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

}  // namespace

std::vector<launch_name> launch_names(const launch_spec& spec, const launch_command& command) {
  std::vector<launch_name> out;
  auto add = [&out](const std::string& name, const char* what) {
    if (name.empty()) return;
    for (const launch_name& n : out) {
      if (n.name == name) return;
    }
    out.push_back({name, what});
  };
  auto program = [&](const std::string& path, const char* what) {
    add(base_name(path), what);
    char* real = realpath(path.c_str(), nullptr);
    if (real != nullptr) {
      add(base_name(real), "the file its executable links to");
      free(real);
    }
    std::vector<std::string> words = shebang(path);
    if (words.empty()) return;
    add(base_name(words[0]), "its interpreter");
    if (base_name(words[0]) == "env") {
      // "#!/usr/bin/env python3", "#!/usr/bin/env -S python3 -u".
      for (size_t k = 1; k < words.size(); ++k) {
        if (words[k] == "-S" || words[k].starts_with("-")) continue;
        if (words[k].find('=') != std::string::npos) continue;
        add(base_name(words[k]), "its interpreter");
        break;
      }
    }
  };
  if (!spec.argv.empty()) program(spec.argv.front(), "its executable");
  if (!command.terminal.empty()) program(command.terminal, "its terminal");
  add(spec.startup_wm_class, "its desktop entry's StartupWMClass");
  return out;
}

std::shared_ptr<const desktop_aliases> read_desktop_aliases(const launch_env& env) {
  constexpr size_t kMostEntries = 4096;
  auto out = std::make_shared<desktop_aliases>();
  std::unordered_set<std::string> seen;
  size_t read = 0;
  for (const std::string& dir : env.application_dirs) {
    for (const std::string& name : list_dir(dir)) {
      if (!name.ends_with(".desktop") || !seen.insert(name).second) continue;
      if (read++ >= kMostEntries) return out;
      auto entry = read_desktop_entry(dir + "/" + name);
      if (!entry) continue;
      std::set<std::string> names{ascii_lower(name.substr(0, name.size() - 8))};
      if (entry->name) names.insert(ascii_lower(unescape_value(*entry->name)));
      std::vector<std::string> keys;
      if (entry->startup_wm_class) keys.push_back(ascii_lower(unescape_value(*entry->startup_wm_class)));
      if (entry->exec) {
        if (auto argv = parse_desktop_exec(*entry->exec); argv && !argv->empty()) {
          const std::string& program = argv->front();
          keys.push_back(ascii_lower(program.substr(program.rfind('/') + 1)));
        }
      }
      for (const std::string& k : keys) {
        if (!k.empty()) out->by_key[k].insert(names.begin(), names.end());
      }
    }
  }
  return out;
}

}  // namespace cu
