// The single-owner lock: where it lives by default, and what it refuses.
#include "util/lock.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace {

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/cu-lock-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

std::string contents(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Sets an environment variable for the scope of the object.
struct scoped_env {
  std::string name;
  std::optional<std::string> old;
  scoped_env(const char* n, const char* value) : name(n) {
    if (const char* v = getenv(n)) old = v;
    if (value) {
      setenv(n, value, 1);
    } else {
      unsetenv(n);
    }
  }
  ~scoped_env() {
    if (old) {
      setenv(name.c_str(), old->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
};

}  // namespace

TEST_CASE("the lock file is named per display, the screen number dropped") {
  CHECK(cu::lock_file_name(":10") == "sidebutton-computer-use-:10.lock");
  CHECK(cu::lock_file_name(":10.0") == "sidebutton-computer-use-:10.lock");
  CHECK(cu::lock_file_name("host.example:3.1") == "sidebutton-computer-use-host.example:3.lock");
  CHECK(cu::lock_file_name("/tmp/launch-x/org.x:0") ==
        "sidebutton-computer-use-_tmp_launch-x_org.x:0.lock");
}

TEST_CASE("the default lock lives in a private XDG_RUNTIME_DIR") {
  temp_dir runtime;
  REQUIRE(chmod(runtime.path.c_str(), 0700) == 0);
  scoped_env env("XDG_RUNTIME_DIR", runtime.path.c_str());
  auto p = cu::default_lock_path(":10");
  REQUIRE(p.ok());
  CHECK(*p == runtime.path + "/sidebutton-computer-use-:10.lock");
}

TEST_CASE("without XDG_RUNTIME_DIR the lock lives in a private directory under /tmp") {
  scoped_env env("XDG_RUNTIME_DIR", nullptr);
  auto p = cu::default_lock_path(":10");
  REQUIRE(p.ok());
  std::string dir = "/tmp/sidebutton-computer-use-" + std::to_string(geteuid());
  CHECK(*p == dir + "/sidebutton-computer-use-:10.lock");
  struct stat st;
  REQUIRE(lstat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 077) == 0);
  CHECK(st.st_uid == geteuid());
}

TEST_CASE("a runtime directory open to others is not used") {
  temp_dir runtime;
  REQUIRE(chmod(runtime.path.c_str(), 0777) == 0);
  scoped_env env("XDG_RUNTIME_DIR", runtime.path.c_str());
  auto p = cu::default_lock_path(":10");
  REQUIRE(p.ok());
  CHECK(p->rfind(runtime.path, 0) != 0);
}

TEST_CASE("a second lock on the same file fails and names the file") {
  temp_dir d;
  std::string path = d.path + "/lock";
  auto first = cu::acquire_instance_lock(path);
  REQUIRE(first.ok());
  CHECK(contents(path) == std::to_string(getpid()) + "\n");
  // flock locks belong to the open file description: a second open in this
  // process conflicts just as another process would.
  auto second = cu::acquire_instance_lock(path);
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.err().message, Catch::Contains("another computer-use-mcp instance") &&
                                       Catch::Contains(path));
  close(*first);
}

TEST_CASE("a lock path that is a hard link to another file is refused and the file kept") {
  temp_dir d;
  std::string precious = d.path + "/precious", path = d.path + "/lock";
  std::ofstream(precious) << "keep me\n";
  REQUIRE(link(precious.c_str(), path.c_str()) == 0);
  auto r = cu::acquire_instance_lock(path);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.err().message, Catch::Contains("hard link"));
  CHECK(contents(precious) == "keep me\n");
}

TEST_CASE("a lock path that is a symbolic link is refused") {
  temp_dir d;
  std::string target = d.path + "/target", path = d.path + "/lock";
  std::ofstream(target) << "keep me\n";
  REQUIRE(symlink(target.c_str(), path.c_str()) == 0);
  auto r = cu::acquire_instance_lock(path);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.err().message, Catch::Contains("symbolic link"));
  CHECK(contents(target) == "keep me\n");
}

TEST_CASE("an existing lock file with other contents is locked but not overwritten") {
  temp_dir d;
  std::string path = d.path + "/lock";
  std::ofstream(path) << "some notes of the user's\n";
  auto r = cu::acquire_instance_lock(path);
  REQUIRE(r.ok());
  CHECK(contents(path) == "some notes of the user's\n");
  close(*r);
}
