#include "util/save_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace cu {
namespace {

std::atomic<unsigned> g_counter{0};

error io_error(const std::string& what, int err) {
  return make_error(errc::io, what + ": " + strerror(err));
}

struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

result<std::string> save_image_file(const std::string& dir, const char* prefix,
                                    const char* extension,
                                    std::span<const std::span<const uint8_t>> pieces) {
  if (dir.empty()) return make_error(errc::io, "CU_SAVE_DIR is empty");
  std::string path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return io_error("cannot create " + path, errno);
  }
  // O_NOFOLLOW on the directory itself: a symlink planted at CU_SAVE_DIR is
  // refused rather than followed.
  fd_closer dirfd{open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
  if (dirfd.fd < 0) return io_error("cannot open " + path, errno);
  struct stat st;
  if (fstat(dirfd.fd, &st) != 0) return io_error("cannot stat " + path, errno);
  if (st.st_uid != geteuid()) {
    return make_error(errc::io, path + " belongs to another user; refusing to write there");
  }

  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm tm;
  localtime_r(&now.tv_sec, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  for (int attempt = 0; attempt < 16; ++attempt) {
    char name[128];
    snprintf(name, sizeof name, "%s-%s.%03ld-%d-%u.%s", prefix, stamp, now.tv_nsec / 1000000,
             int(getpid()), g_counter.fetch_add(1), extension);
    // O_EXCL never reuses or follows an existing entry, symlinks included.
    int fd = openat(dirfd.fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return io_error("cannot create a file in " + path, errno);
    }
    fd_closer file{fd};
    for (std::span<const uint8_t> piece : pieces) {
      size_t done = 0;
      while (done < piece.size()) {
        ssize_t n = write(fd, piece.data() + done, piece.size() - done);
        if (n < 0) {
          if (errno == EINTR) continue;
          int err = errno;
          unlinkat(dirfd.fd, name, 0);
          return io_error("cannot write " + path + "/" + name, err);
        }
        done += size_t(n);
      }
    }
    return path + "/" + name;
  }
  return make_error(errc::io, "cannot find a free file name in " + path);
}

}  // namespace cu
