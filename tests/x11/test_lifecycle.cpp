// Start-up and shutdown: the single-owner lock, stdin EOF and signals.
#include <catch2/catch.hpp>

#include <csignal>
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
