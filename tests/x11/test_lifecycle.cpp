// Start-up and shutdown: the single-owner lock, stdin EOF and signals.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "support/harness.h"

using namespace cu::test;

TEST_CASE("a second instance on the same lock exits non-zero with a clear message") {
  xvfb x;
  server_process first(x.display());
  CHECK(first.request("ping")->root["result"].is_object());
  server_process second(x.display(), {{"CU_LOCK_PATH", first.lock_path()}});
  second.expect_exit_status(1);
  auto status = second.wait_exit();
  REQUIRE(status);
  CHECK(*status != 0);
  CHECK(second.stderr_text().find("lock") != std::string::npos);
  // The first one is unaffected.
  CHECK(first.request("ping")->root["result"].is_object());
}

TEST_CASE("stdin EOF ends the server with status 0 after answering what was in flight") {
  xvfb x;
  server_process s(x.display());
  s.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"screenshot"}})");
  s.close_stdin();
  auto r = s.read_response("1");
  REQUIRE(r);
  CHECK(image_of(*r).width == 1366);
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("SIGTERM and SIGINT end the server with status 0") {
  xvfb x;
  for (int sig : {SIGTERM, SIGINT}) {
    server_process s(x.display());
    CHECK(s.request("ping")->root["result"].is_object());
    s.signal(sig);
    CHECK(s.wait_exit() == 0);
  }
}

TEST_CASE("the lock is free again once the server has exited") {
  xvfb x;
  std::string lock;
  {
    server_process first(x.display());
    lock = first.lock_path();
    first.close_stdin();
    REQUIRE(first.wait_exit() == 0);
    server_process second(x.display(), {{"CU_LOCK_PATH", lock}});
    CHECK(second.request("ping")->root["result"].is_object());
  }
}

TEST_CASE("without CU_LOCK_PATH the lock is taken in XDG_RUNTIME_DIR, one per display") {
  xvfb x;
  char tmpl[] = "/tmp/cu-runtime-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string runtime = tmpl;
  std::map<std::string, std::string> env = {{"CU_LOCK_PATH", ""}, {"XDG_RUNTIME_DIR", runtime}};
  {
    server_process first(x.display(), env);
    CHECK(first.request("ping")->root["result"].is_object());
    std::string lock = runtime + "/sidebutton-computer-use-" + x.display() + ".lock";
    struct stat st;
    REQUIRE(stat(lock.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    // A second server on the same display and runtime directory is refused.
    server_process second(x.display(), env);
    second.expect_exit_status(1);
    REQUIRE(second.wait_exit());
    CHECK_THAT(second.stderr_text(), Catch::Contains(lock));
    CHECK(first.request("ping")->root["result"].is_object());
  }
  (void)!system(("rm -rf '" + runtime + "'").c_str());
}

TEST_CASE("a lock path that is a hard link to another file: exit 1, the file untouched") {
  xvfb x;
  char tmpl[] = "/tmp/cu-lockln-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string dir = tmpl, precious = dir + "/precious", lock = dir + "/lock";
  {
    std::ofstream(precious) << "keep me\n";
  }
  REQUIRE(link(precious.c_str(), lock.c_str()) == 0);
  {
    server_process s(x.display(), {{"CU_LOCK_PATH", lock}});
    s.expect_exit_status(1);
    REQUIRE(s.wait_exit());
    CHECK_THAT(s.stderr_text(), Catch::Contains("hard link"));
  }
  std::ifstream in(precious);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "keep me\n");
  (void)!system(("rm -rf '" + dir + "'").c_str());
}
