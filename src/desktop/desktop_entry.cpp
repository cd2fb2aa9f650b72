#include "desktop/desktop_entry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/str_cat.h"

namespace cu {
namespace {

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

}  // namespace

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

result<desktop_entry> read_desktop_entry(const std::string& file) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer, forever; on a regular file it changes nothing.
  int fd = open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return make_error(errc::io, str_cat("it cannot be read (", strerror(errno), ")"));
  }
  std::string text;
  std::string why;  // Empty while the file is fine.
  struct stat st;
  if (fstat(fd, &st) != 0) {
    why = str_cat("it cannot be read (", strerror(errno), ")");
  } else if (!S_ISREG(st.st_mode)) {
    why = S_ISFIFO(st.st_mode)                         ? "it is a FIFO, not a regular file"
          : S_ISDIR(st.st_mode)                        ? "it is a directory, not a regular file"
          : S_ISSOCK(st.st_mode)                       ? "it is a socket, not a regular file"
          : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "it is a device, not a regular file"
                                                       : "it is not a regular file";
  } else if (st.st_size > kMaxDesktopFileSize) {
    why = "it is larger than 1 MiB, too large for a desktop entry";
  } else {
    text.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      ssize_t n = read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = str_cat("it cannot be read (", strerror(errno), ")");
        break;
      }
      if (n == 0) break;  // It shrank since fstat.
      got += size_t(n);
    }
    text.resize(got);
  }
  close(fd);
  if (!why.empty()) return make_error(errc::io, std::move(why));

  desktop_entry entry;
  bool in_main_group = false;
  std::istringstream in(text);
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
    else if (key == "NoDisplay") set(entry.no_display);
    else if (key == "Terminal") set(entry.terminal);
    else if (key == "Path") set(entry.path);
    else if (key == "StartupWMClass") set(entry.startup_wm_class);
  }
  return entry;
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

}  // namespace cu
