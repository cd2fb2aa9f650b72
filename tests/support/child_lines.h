// Owns: a helper program the test talks to line by line: started on a
// display with its stdin on a socket and stdout on a pipe (stderr to a file of its own),
// so the test can send it commands and wait for the lines it prints about
// what happened to it (tests/x11/data/gtk_a11y.py is the first such
// program).
// Thread affinity: the test thread.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cu::test {

class child_lines {
 public:
  // Starts argv (argv[0] searched in PATH) with DISPLAY set to display and
  // extra_env added to the test's own environment.
  child_lines(const std::vector<std::string>& argv, const std::string& display,
              const std::map<std::string, std::string>& extra_env = {});
  // Closes its stdin, kills it (SIGKILL, which ends a stopped process too)
  // and reaps it.
  ~child_lines();
  child_lines(const child_lines&) = delete;
  child_lines& operator=(const child_lines&) = delete;

  pid_t pid() const { return pid_; }

  // Writes one line to its stdin (a newline is added).
  void send(std::string_view line);

  // The next line it printed (without the newline), or nothing after
  // timeout_ms or at EOF.
  std::optional<std::string> read_line(int timeout_ms = 20000);

  // Reads lines until one equal to `last` and returns the lines before it;
  // nothing when `last` did not come within timeout_ms (the lines read are
  // then in the log).
  std::optional<std::vector<std::string>> read_until(std::string_view last,
                                                     int timeout_ms = 20000);

  void signal(int signo);
  // False once it has exited (and then it is reaped).
  bool running();

  // Every line read from it so far, and what it wrote to stderr: for
  // messages when a test fails.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string dir_;
  std::string buffer_;
  std::string read_so_far_;
};

}  // namespace cu::test
