// Tests for src/util/threads.h: the thread table is what the code starts.
// Every thread the source starts is named after a row, every row's name is
// given somewhere, and a running server (no display needed: its threads
// start before they connect) shows the kernel the table's names.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "toolsets/registry.h"
#include "util/threads.h"

namespace {

namespace fs = std::filesystem;

std::string env_or_fail(const char* name) {
  const char* v = std::getenv(name);
  INFO(name << " is not set; run the test through `meson test`");
  REQUIRE(v != nullptr);
  return v;
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

const cu::thread_row* row_named(std::string_view comm) {
  for (const cu::thread_row& t : cu::server_threads()) {
    if (t.comm == comm) return &t;
  }
  return nullptr;
}

// The server on pipes, stopped by closing its stdin.
class server_process {
 public:
  server_process(const std::string& binary, const std::map<std::string, std::string>& env) {
    int in[2], out[2];
    REQUIRE(pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      execl(binary.c_str(), binary.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  ~server_process() {
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  pid_t pid() const { return pid_; }

  void send(const std::string& line) {
    std::string l = line + "\n";
    REQUIRE(write(in_, l.data(), l.size()) == ssize_t(l.size()));
  }

  // The next line, or empty after 20 s or at EOF.
  std::string read_line() {
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 20000) <= 0) return {};
      char chunk[4096];
      ssize_t n = read(out_, chunk, sizeof chunk);
      if (n <= 0) return {};
      buffer_.append(chunk, size_t(n));
    }
  }

  // Closes stdin and waits for the exit status (-1 when it did not exit
  // within 20 s).
  int finish() {
    close(in_);
    in_ = -1;
    for (int i = 0; i < 2000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(10000);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
};

}  // namespace

TEST_CASE("every thread's kernel name is unique and fits the kernel's 15 bytes") {
  std::set<std::string_view> seen;
  size_t loops = 0;
  for (const cu::thread_row& t : cu::server_threads()) {
    INFO(t.name);
    if (t.comm.empty()) {
      ++loops;
      continue;
    }
    CHECK(t.comm.size() <= 15);
    CHECK(t.comm.rfind("cu-", 0) == 0);
    CHECK(seen.insert(t.comm).second);
  }
  CHECK(loops == 1);
  CHECK(cu::server_threads().front().comm.empty());
}

TEST_CASE("the source names every thread it starts after a row, and gives every row's name") {
  const fs::path src = fs::path(env_or_fail("CU_SOURCE_DIR")) / "src";
  const std::regex named(R"re(name_thread\([^,]+, "([^"]*)"\))re");
  const std::regex started(R"(std::thread\(&|threads_\.emplace_back\(&)");
  std::set<std::string> given;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    const std::string text = read_file(entry.path());
    const std::string rel = fs::relative(entry.path(), src).generic_string();
    size_t names = 0, starts = 0;
    for (std::sregex_iterator m(text.begin(), text.end(), named), end; m != end; ++m) {
      ++names;
      const std::string comm = (*m)[1].str();
      INFO("src/" << rel << " names a thread \"" << comm
                  << "\", which is no row of src/util/threads.cpp");
      CHECK(row_named(comm) != nullptr);
      given.insert(comm);
    }
    for (std::sregex_iterator m(text.begin(), text.end(), started), end; m != end; ++m) ++starts;
    INFO("src/" << rel << " starts " << starts << " thread(s) and names " << names
                << ": a thread left unnamed passes for the one that started it");
    CHECK(names >= starts);
  }
  for (const cu::thread_row& t : cu::server_threads()) {
    if (t.comm.empty()) continue;
    INFO("no name_thread(..., \"" << t.comm << "\") under src/ for the " << t.name);
    CHECK(given.count(std::string(t.comm)) == 1);
  }
}

TEST_CASE("a running server's threads carry the table's names") {
  const std::string binary = env_or_fail("CU_SERVER");
  char dir_template[] = "/tmp/cu-test-threads-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  // Every toolset and the trace on, so every thread that starts with the
  // server starts; a display nobody serves, since none is needed for that.
  server_process server(binary, {{"DISPLAY", ":59997"},
                                 {"CU_TOOLSETS", "all"},
                                 {"CU_TRACE_DIR", dir + "/trace"},
                                 {"CU_LOCK_PATH", dir + "/lock"},
                                 {"CU_INPUT_GUARD", "0"},
                                 {"CU_UINPUT", dir + "/no-uinput"},
                                 {"CU_CAPTURE_WORKERS", "3"},
                                 {"CU_LOG_LEVEL", "error"}});
  server.send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  const std::string answer = server.read_line();
  INFO("initialize answered: " << answer);
  REQUIRE(answer.find("\"id\":1") != std::string::npos);

  const std::string process = trimmed(read_file("/proc/" + std::to_string(server.pid()) + "/comm"));
  std::map<std::string, int> seen;
  std::string all;
  for (const auto& task :
       fs::directory_iterator("/proc/" + std::to_string(server.pid()) + "/task")) {
    const std::string comm = trimmed(read_file(task.path() / "comm"));
    ++seen[comm];
    all += comm + " ";
  }
  INFO("the server's threads: " << all);
  // The loop thread alone keeps the process's name: another thread with it
  // was started without name_thread.
  CHECK(seen[process] == 1);
  CHECK(seen["cu-capture"] == 3);
  for (const auto& [comm, count] : seen) {
    if (comm == process || comm.rfind("cu-", 0) != 0) continue;
    INFO("a thread named " << comm << " is no row of src/util/threads.cpp");
    CHECK(row_named(comm) != nullptr);
  }
  for (const cu::thread_row& t : cu::server_threads()) {
    if (t.comm.empty() || !t.at_start) continue;
    if (t.comm == "cu-a11y" && !cu::toolset_built(cu::toolset::a11y)) continue;
    INFO("the " << t.name << " (" << t.comm << ") starts with the server, says the table");
    CHECK(seen.count(std::string(t.comm)) == 1);
  }
  CHECK(server.finish() == 0);
  fs::remove_all(dir);
}
