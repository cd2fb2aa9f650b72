#include "util/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cu {

result<int> acquire_instance_lock(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return make_error(errc::io, "cannot open lock file " + path + ": " + strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return make_error(errc::io, "another computer-use-mcp instance holds the lock " + path +
                                      " (set CU_LOCK_PATH to run a second one on another display)");
    }
    return make_error(errc::io, "cannot lock " + path + ": " + strerror(err));
  }
  // The holder's pid, for whoever wonders who has it.
  if (ftruncate(fd, 0) == 0) {
    std::string pid = std::to_string(getpid()) + "\n";
    ssize_t ignored = pwrite(fd, pid.data(), pid.size(), 0);
    (void)ignored;
  }
  return fd;
}

}  // namespace cu
