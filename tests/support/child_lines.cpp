#include "support/child_lines.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/harness.h"

namespace cu::test {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

}  // namespace

child_lines::child_lines(const std::vector<std::string>& argv, const std::string& display,
                         const std::map<std::string, std::string>& extra_env) {
  char tmpl[] = "/tmp/cu-child-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) fail("mkdtemp failed");
  dir_ = tmpl;
  const std::string err_path = dir_ + "/stderr";
  // Its stdin is a socket rather than a pipe so that writing to a child
  // that has died is an error (MSG_NOSIGNAL), not a SIGPIPE ending the test.
  int in_pipe[2], out_pipe[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pipe) != 0) fail("socketpair failed");
  if (pipe2(out_pipe, O_CLOEXEC) != 0) fail("pipe failed");
  pid_ = fork();
  if (pid_ < 0) fail("fork failed");
  if (pid_ == 0) {
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err, 2);
    setenv("DISPLAY", display.c_str(), 1);
    for (const auto& [k, v] : extra_env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  in_ = in_pipe[1];
  out_ = out_pipe[0];
}

child_lines::~child_lines() {
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::string cmd = "rm -rf '" + dir_ + "'";
  int ignored = system(cmd.c_str());
  (void)ignored;
}

void child_lines::send(std::string_view line) {
  std::string data(line);
  data += '\n';
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(in_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write to the child's stdin");
    done += size_t(n);
  }
}

std::optional<std::string> child_lines::read_line(int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      read_so_far_.append(line).append("\n");
      return line;
    }
    int left = int(std::max<int64_t>(0, deadline - now_ms()));
    pollfd p{out_, POLLIN, 0};
    int r = poll(&p, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char chunk[4096];
    ssize_t n = read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, size_t(n));
  }
}

std::optional<std::vector<std::string>> child_lines::read_until(std::string_view last,
                                                                int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  std::vector<std::string> before;
  for (;;) {
    auto line = read_line(int(std::max<int64_t>(0, deadline - now_ms())));
    if (!line) return std::nullopt;
    if (*line == last) return before;
    before.push_back(std::move(*line));
  }
}

void child_lines::signal(int signo) {
  if (pid_ > 0) kill(pid_, signo);
}

bool child_lines::running() { return child_running(pid_); }

std::string child_lines::log() const {
  std::ifstream f(dir_ + "/stderr", std::ios::binary);
  std::stringstream err;
  err << f.rdbuf();
  return "stdout so far:\n" + read_so_far_ + buffer_ + "stderr:\n" + err.str();
}

}  // namespace cu::test
