#include "util/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/log.h"

namespace cu {
namespace {

error io_error(const std::string& what, int err) {
  return make_error(errc::io, what + ": " + strerror(err));
}

// Whether dir is a directory (not a link to one) owned by us that no one
// else may enter or write.
result<bool> private_directory(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return io_error("cannot use " + dir, errno);
  if (!S_ISDIR(st.st_mode)) return make_error(errc::io, dir + " is not a directory");
  if (st.st_uid != geteuid()) {
    return make_error(errc::io, dir + " belongs to another user; refusing to keep the lock there");
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%03o", unsigned(st.st_mode & 0777));
    return make_error(errc::io, dir + " is open to other users (mode " + mode +
                                    "); refusing to keep the lock there");
  }
  return true;
}

// What a lock file may hold for us to overwrite it with our pid: nothing, or
// an earlier pid.
bool holds_a_pid_or_nothing(int fd, off_t size) {
  if (size == 0) return true;
  if (size > 32) return false;
  char buf[33];
  ssize_t n = pread(fd, buf, size_t(size), 0);
  if (n != size) return false;
  for (ssize_t i = 0; i < n; ++i) {
    if ((buf[i] < '0' || buf[i] > '9') && buf[i] != '\n') return false;
  }
  return true;
}

}  // namespace

std::string lock_file_name(std::string_view display) {
  // ":10.0" → ":10": the screen number does not change whose pointer it is.
  size_t colon = display.rfind(':');
  if (colon != std::string_view::npos) {
    size_t dot = display.find('.', colon);
    if (dot != std::string_view::npos) display = display.substr(0, dot);
  }
  std::string name = "sidebutton-computer-use-";
  for (char c : display) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == ':' || c == '_' || c == '-';
    name += plain ? c : '_';
  }
  return name + ".lock";
}

result<std::string> default_lock_path(std::string_view display) {
  const char* runtime = getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] == '/') {
    std::string dir = runtime;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    auto ok = private_directory(dir);
    if (ok) return dir + "/" + lock_file_name(display);
    log(log_level::warn, "XDG_RUNTIME_DIR: %s; keeping the lock under /tmp instead",
        ok.err().message.c_str());
  }
  std::string dir = "/tmp/sidebutton-computer-use-" + std::to_string(geteuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return io_error("cannot create " + dir, errno);
  }
  auto ok = private_directory(dir);
  if (!ok) return make_error(errc::io, ok.err().message + " (set CU_LOCK_PATH to choose the lock file)");
  return dir + "/" + lock_file_name(display);
}

result<int> acquire_instance_lock(const std::string& path) {
  // O_NOFOLLOW: a symbolic link is refused (ELOOP), not followed. No
  // O_TRUNC: whatever the name points at is not ours to clear until checked.
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0) {
    if (errno == ELOOP) {
      return make_error(errc::io, "refusing the lock file " + path + ": it is a symbolic link");
    }
    return io_error("cannot open lock file " + path, errno);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return io_error("cannot stat lock file " + path, err);
  }
  std::string refusal;
  if (!S_ISREG(st.st_mode)) {
    refusal = "it is not a regular file";
  } else if (st.st_uid != geteuid()) {
    refusal = "it belongs to another user";
  } else if (st.st_nlink != 1) {
    refusal = "it has " + std::to_string(st.st_nlink) +
              " names (a hard link to another file), which the lock must not write to";
  }
  if (!refusal.empty()) {
    close(fd);
    return make_error(errc::io, "refusing the lock file " + path + ": " + refusal);
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return make_error(errc::io, "another computer-use-mcp instance holds the lock " + path +
                                      " (set CU_LOCK_PATH to run a second one on another display)");
    }
    return io_error("cannot lock " + path, err);
  }
  // The holder's pid, for whoever wonders who has it.
  if (holds_a_pid_or_nothing(fd, st.st_size) && ftruncate(fd, 0) == 0) {
    std::string pid = std::to_string(getpid()) + "\n";
    ssize_t ignored = pwrite(fd, pid.data(), pid.size(), 0);
    (void)ignored;
  }
  return fd;
}

}  // namespace cu
