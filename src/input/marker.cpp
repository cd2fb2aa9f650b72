#include "input/marker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cu {
namespace {

// Whether /proc/<pid>/stat says the process has exited and awaits its
// parent (state Z) or is dying (X).
bool is_zombie(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The name in parentheses may hold anything, so the state is read after
  // the last ')'.
  const char* close_paren = strrchr(buf, ')');
  if (close_paren == nullptr || close_paren[1] != ' ') return false;
  return close_paren[2] == 'Z' || close_paren[2] == 'X';
}

}  // namespace

std::string input_marker_path(const std::string& lock_path) {
  if (lock_path.empty()) return {};
  return lock_path + ".input";
}

bool write_input_marker(const std::string& path, pid_t pid) {
  if (path.empty()) return false;
  // O_NOFOLLOW and the checks below: CU_LOCK_PATH may point anywhere, and
  // the marker must never write through a name planted beside it.
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0) return false;
  struct stat st;
  bool ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
              st.st_nlink == 1;
  if (ours) {
    const std::string text = std::to_string(pid) + "\n";
    ours = ftruncate(fd, 0) == 0 && pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size());
  }
  close(fd);
  return ours;
}

std::optional<pid_t> read_input_marker(const std::string& path) {
  if (path.empty()) return std::nullopt;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  char buf[24] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return std::nullopt;
  char* end = nullptr;
  long pid = strtol(buf, &end, 10);
  if (end == buf || (*end != '\n' && *end != '\0') || pid <= 0) return std::nullopt;
  return pid_t(pid);
}

std::optional<pid_t> dead_marker_pid(const std::string& path) {
  auto pid = read_input_marker(path);
  if (!pid) return std::nullopt;
  if (*pid == getpid()) return pid;
  // EPERM: the pid is some other user's process now, so not our server.
  if (kill(*pid, 0) != 0) return pid;
  // A killed server its host has not reaped yet is a zombie, which kill()
  // still finds; it holds nothing and presses nothing any more.
  return is_zombie(*pid) ? pid : std::nullopt;
}

void remove_input_marker(const std::string& path, pid_t pid) {
  if (read_input_marker(path) == pid) unlink(path.c_str());
}

}  // namespace cu
