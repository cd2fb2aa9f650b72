// Progress notifications: a long call with a progress token (wait, hold_key,
// a batch's step) reports rising progress with its total and the token as
// given, and nothing after its response; without a token it reports nothing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/batch.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"

using namespace cu::test;

TEST_CASE("a wait with a progress token reports rising progress with its total until it ends") {
  xvfb x;
  server_process s(x.display());
  const int64_t start = now_ms();
  s.send(tool_call_with_token("\"w\"", "wait", R"({"duration":2.5})", "\"p1\""));
  std::vector<json_ptr> before;
  auto r = read_until(s, "\"w\"", before, 10000);
  REQUIRE(r);
  CHECK(text_of(*r) == "waited 2.5s");
  CHECK(now_ms() - start >= 2450);
  auto notes = with_method(before, "notifications/progress");
  CHECK(notes.size() == before.size());
  REQUIRE(notes.size() >= 2);
  double last = 0;
  for (const json_line* n : notes) {
    INFO(n->text);
    std::string_view token;
    CHECK(n->root["params"]["progressToken"].get(token) == simdjson::SUCCESS);
    CHECK(token == "p1");
    double progress = 0, total = 0;
    REQUIRE(n->root["params"]["progress"].get_double().get(progress) == simdjson::SUCCESS);
    CHECK(progress > last);
    CHECK(progress <= 2.6);
    last = progress;
    REQUIRE(n->root["params"]["total"].get_double().get(total) == simdjson::SUCCESS);
    CHECK(total == 2.5);
  }
  // Nothing after the response: a ping answered next, then silence.
  s.send(rpc("\"after\"", "ping"));
  auto line = s.read_line(5000);
  REQUIRE(line);
  CHECK(id_of(*parse_json(*line)) == "\"after\"");
  CHECK_FALSE(s.read_line(1500));
}

TEST_CASE("an integer progress token is echoed as an integer, and a batch's progress names its step") {
  xvfb x;
  server_process s(x.display());
  s.send(tool_call_with_token("\"w\"", "wait", R"({"duration":1.5})", "42"));
  std::vector<json_ptr> before;
  auto r = read_until(s, "\"w\"", before, 10000);
  REQUIRE(r);
  auto notes = with_method(before, "notifications/progress");
  REQUIRE(notes.size() >= 1);
  int64_t token = 0;
  CHECK(notes[0]->root["params"]["progressToken"].get(token) == simdjson::SUCCESS);
  CHECK(token == 42);

  before.clear();
  s.send(tool_call_with_token("\"b\"", "computer_batch",
                              batch_args({act("wait", R"({"duration":1.5})")}), "\"bt\""));
  r = read_until(s, "\"b\"", before, 10000);
  REQUIRE(r);
  CHECK_FALSE(is_error(*r));
  notes = with_method(before, "notifications/progress");
  REQUIRE(notes.size() >= 1);
  INFO(notes[0]->text);
  std::string_view message;
  REQUIRE(notes[0]->root["params"]["message"].get(message) == simdjson::SUCCESS);
  CHECK(message.rfind("step ", 0) == 0);
  CHECK(message.find("of 1: wait") != std::string_view::npos);
}

TEST_CASE("a hold_key with a progress token reports progress with its total") {
  session t;
  t.s.send(tool_call_with_token("\"h\"", "hold_key", R"({"text":"shift","duration":1.5})", "\"hk\""));
  std::vector<json_ptr> before;
  auto r = read_until(t.s, "\"h\"", before, 10000);
  REQUIRE(r);
  CHECK(text_of(*r) == "held shift for 1.5s");
  auto notes = with_method(before, "notifications/progress");
  REQUIRE(notes.size() >= 1);
  INFO(notes[0]->text);
  std::string_view token;
  CHECK(notes[0]->root["params"]["progressToken"].get(token) == simdjson::SUCCESS);
  CHECK(token == "hk");
  double total = 0;
  REQUIRE(notes[0]->root["params"]["total"].get_double().get(total) == simdjson::SUCCESS);
  CHECK(total == 1.5);
  check_nothing_pressed(t.probe);
}

TEST_CASE("without a progress token a long call gets no progress") {
  xvfb x;
  server_process s(x.display());
  s.send(tool_call("\"w\"", "wait", R"({"duration":2.2})"));
  std::vector<json_ptr> before;
  auto r = read_until(s, "\"w\"", before, 10000);
  REQUIRE(r);
  CHECK(text_of(*r) == "waited 2.2s");
  std::string seen;
  for (const json_ptr& j : before) seen += j->text.substr(0, 300) + "\n";
  INFO("lines before the response:\n" << seen);
  CHECK(before.empty());
}
