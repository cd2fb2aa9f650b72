// The wait tool against the real binary: it answers after the duration it
// was given while other requests are answered at once, refuses a duration
// out of range or of the wrong type, ends at once when it is cancelled (and
// is never answered then), and is answered early when stdin closes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/jsonrpc.h"

using namespace cu::test;

TEST_CASE("wait answers `waited 2s` after two seconds while a later ping is answered at once") {
  xvfb x;
  server_process s(x.display());
  const int64_t start = now_ms();
  s.send(tool_call("\"w\"", "wait", R"({"duration":2})"));
  s.send(rpc("\"p\"", "ping"));
  auto first = s.read_line(5000);
  REQUIRE(first);
  auto pong = parse_json(*first);
  CHECK(id_of(*pong) == "\"p\"");
  CHECK(pong->root["result"].is_object());
  CHECK(now_ms() - start < 1000);
  auto w = s.read_response("\"w\"", 10000);
  REQUIRE(w);
  const int64_t elapsed = now_ms() - start;
  CHECK_FALSE(is_error(*w));
  CHECK(text_of(*w) == "waited 2s");
  CHECK(elapsed >= 1950);
  CHECK(elapsed < 4000);
}

TEST_CASE("wait answers with the duration as given: 0.25 and 0") {
  xvfb x;
  server_process s(x.display());
  int64_t start = now_ms();
  auto r = s.call_tool("wait", R"({"duration":0.25})");
  int64_t elapsed = now_ms() - start;
  CHECK_FALSE(is_error(*r));
  CHECK(text_of(*r) == "waited 0.25s");
  CHECK(elapsed >= 240);
  CHECK(elapsed < 2000);

  start = now_ms();
  r = s.call_tool("wait", R"({"duration":0})");
  CHECK_FALSE(is_error(*r));
  CHECK(text_of(*r) == "waited 0s");
  CHECK(now_ms() - start < 1000);
}

TEST_CASE("wait with a duration out of range or of the wrong type is an isError naming duration") {
  xvfb x;
  server_process s(x.display());
  for (const char* args : {R"({"duration":-1})", R"({"duration":-0.01})", R"({"duration":115.01})",
                           R"({"duration":116})", R"({"duration":1e9})", R"({"duration":"2"})",
                           R"({"duration":true})", R"({"duration":[2]})", R"({"duration":null})",
                           R"({})"}) {
    INFO("wait " << args);
    const int64_t start = now_ms();
    auto r = s.call_tool("wait", args);
    CHECK(is_error(*r));
    std::string text = text_of(*r);
    CHECK(text.find("\"duration\"") != std::string::npos);
    CHECK(text.find('\n') == std::string::npos);
    CHECK(now_ms() - start < 1000);
  }
  CHECK(s.request("ping")->root["result"].is_object());
}

TEST_CASE("a cancelled wait ends at once and is never answered") {
  xvfb x;
  server_process s(x.display());
  // With a progress token the wait reports once a second while it lasts: the
  // reports stopping shows that it ended.
  s.send(tool_call_with_token("\"w\"", "wait", R"({"duration":30})", "\"wc\""));
  auto first = s.read_line(5000);
  REQUIRE(first);
  auto note = parse_json(*first);
  REQUIRE(method_of(*note) == "notifications/progress");
  const int64_t cancelled_at = now_ms();
  s.send(cancel_note("\"w\""));
  s.send(tool_call("\"w2\"", "wait", R"({"duration":0.1})"));
  s.send(rpc("\"p\"", "ping"));
  // Read everything for 2.5 s: the ping and the short wait are answered;
  // nothing comes for the cancelled wait, no progress either.
  std::vector<json_ptr> lines;
  while (auto line = s.read_line(int(std::max<int64_t>(0, cancelled_at + 2500 - now_ms())))) {
    lines.push_back(parse_json(*line));
  }
  std::set<std::string> ids;
  for (const json_ptr& j : lines) {
    INFO(j->text);
    CHECK(method_of(*j) != "notifications/progress");
    if (method_of(*j).empty()) ids.insert(id_of(*j));
  }
  CHECK(ids == std::set<std::string>{"\"p\"", "\"w2\""});
  // Nothing is left in flight: stdin EOF ends the server at once, silently.
  const int64_t eof_at = now_ms();
  s.close_stdin();
  CHECK_FALSE(s.read_line(5000));
  CHECK(s.wait_exit(5000) == 0);
  CHECK(now_ms() - eof_at < 3000);
}

TEST_CASE("a cancel for an unknown or finished id is ignored") {
  xvfb x;
  server_process s(x.display());
  auto r = s.call_tool("wait", R"({"duration":0.05})");
  CHECK(text_of(*r) == "waited 0.05s");
  s.send(cancel_note("1000"));  // The id call_tool used: finished.
  s.send(cancel_note("\"never\""));
  s.send(tool_call("\"w\"", "wait", R"({"duration":0.2})"));
  auto w = s.read_response("\"w\"", 5000);
  REQUIRE(w);
  CHECK(text_of(*w) == "waited 0.2s");
}

TEST_CASE("stdin EOF during a 60 s wait answers it with an isError at once and exits 0") {
  xvfb x;
  server_process s(x.display());
  s.send(tool_call("\"w\"", "wait", R"({"duration":60})"));
  CHECK(s.request("ping")->root["result"].is_object());
  const int64_t start = now_ms();
  s.close_stdin();
  auto r = s.read_response("\"w\"", 10000);
  REQUIRE(r);
  CHECK(now_ms() - start < 3000);
  CHECK(is_error(*r));
  INFO(text_of(*r));
  // "like hold_key": its early answer says it ended early.
  CHECK(text_of(*r).find("ended early") != std::string::npos);
  CHECK(s.wait_exit(10000) == 0);
  CHECK(now_ms() - start < 5000);
}
