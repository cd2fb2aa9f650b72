// The pressed-input marker beside the lock: what it holds, when it counts as
// a dead server's, and that only its own server's pid removes it.
#include "input/marker.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/cu-marker-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  pid_t p = fork();
  REQUIRE(p >= 0);
  if (p == 0) _exit(0);
  REQUIRE(waitpid(p, nullptr, 0) == p);
  return p;
}

}  // namespace

TEST_CASE("the marker sits beside the lock, and an empty lock path has none") {
  CHECK(cu::input_marker_path("/run/user/1000/sidebutton-computer-use-:10.lock") ==
        "/run/user/1000/sidebutton-computer-use-:10.lock.input");
  CHECK(cu::input_marker_path("").empty());
  CHECK_FALSE(cu::write_input_marker("", getpid()));
  CHECK_FALSE(cu::read_input_marker(""));
}

TEST_CASE("a written marker names the pid, and only that pid removes it") {
  temp_dir d;
  const std::string m = d.path + "/lock.input";
  CHECK_FALSE(cu::read_input_marker(m));
  REQUIRE(cu::write_input_marker(m, 4242));
  CHECK(cu::read_input_marker(m) == 4242);
  cu::remove_input_marker(m, 4243);
  CHECK(exists(m));
  cu::remove_input_marker(m, 4242);
  CHECK_FALSE(exists(m));
}

TEST_CASE("a marker of an exited process is a dead server's, a live other process's is not") {
  temp_dir d;
  const std::string m = d.path + "/lock.input";
  CHECK_FALSE(cu::dead_marker_pid(m));
  const pid_t dead = dead_pid();
  REQUIRE(cu::write_input_marker(m, dead));
  CHECK(cu::dead_marker_pid(m) == dead);
  REQUIRE(cu::write_input_marker(m, getppid()));
  CHECK_FALSE(cu::dead_marker_pid(m));
}

TEST_CASE("a marker naming this very process at start is a predecessor's that had its pid") {
  temp_dir d;
  const std::string m = d.path + "/lock.input";
  REQUIRE(cu::write_input_marker(m, getpid()));
  CHECK(cu::dead_marker_pid(m) == getpid());
}

TEST_CASE("an exited process its parent has not reaped counts as dead") {
  temp_dir d;
  const std::string m = d.path + "/lock.input";
  pid_t zombie = fork();
  REQUIRE(zombie >= 0);
  if (zombie == 0) _exit(0);
  // Its /proc entry says Z once it has exited; waitid with WNOWAIT waits
  // for that without reaping it.
  siginfo_t info{};
  REQUIRE(waitid(P_PID, id_t(zombie), &info, WEXITED | WNOWAIT) == 0);
  REQUIRE(cu::write_input_marker(m, zombie));
  CHECK(cu::dead_marker_pid(m) == zombie);
  REQUIRE(waitpid(zombie, nullptr, 0) == zombie);
}

TEST_CASE("the marker is never written through a symbolic link, and a link is not read") {
  temp_dir d;
  const std::string target = d.path + "/target";
  const std::string m = d.path + "/lock.input";
  { std::ofstream(target) << "keep\n"; }
  REQUIRE(symlink(target.c_str(), m.c_str()) == 0);
  CHECK_FALSE(cu::write_input_marker(m, 4242));
  CHECK_FALSE(cu::read_input_marker(m));
  std::ifstream f(target);
  std::string line;
  std::getline(f, line);
  CHECK(line == "keep");
}

TEST_CASE("a marker with a second name (a hard link) is not written") {
  temp_dir d;
  const std::string other = d.path + "/other";
  const std::string m = d.path + "/lock.input";
  { std::ofstream(other) << "keep\n"; }
  REQUIRE(link(other.c_str(), m.c_str()) == 0);
  CHECK_FALSE(cu::write_input_marker(m, 4242));
  std::ifstream f(other);
  std::string line;
  std::getline(f, line);
  CHECK(line == "keep");
}
