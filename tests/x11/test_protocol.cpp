// The JSON-RPC and MCP surface of the real binary: handshake and protocol
// versions, the 2026-07-28 era served beside the handshake, listing (titles, annotations, output schemas), error answers,
// many requests on one pipe, JSON-RPC batch arrays, logging/setLevel and
// notifications/message, and structuredContent.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "support/tool_names.h"
#include "support/harness.h"
#include "support/jsonrpc.h"

using namespace cu::test;
using simdjson::dom::element;

namespace {

// The next line the server writes, parsed.
json_ptr next_json(server_process& s) {
  auto line = s.read_line();
  REQUIRE(line);
  return parse_json(*line);
}

// The JSON-RPC error code of the next line the server writes.
int64_t next_error_code(server_process& s) {
  auto line = s.read_line();
  REQUIRE(line);
  return error_code(*parse_json(*line));
}

// The protocolVersion the server answers an initialize asking for version.
std::string negotiate(server_process& s, const std::string& version) {
  auto init = s.request("initialize", R"({"protocolVersion":")" + version + "\"}");
  REQUIRE(init);
  std::string_view answered;
  REQUIRE(init->root["result"]["protocolVersion"].get(answered) == simdjson::SUCCESS);
  return std::string(answered);
}

}  // namespace

TEST_CASE("initialize then tools/list returns the 24 tools in contract order") {
  xvfb x;
  server_process s(x.display());
  auto init = s.request("initialize",
                        R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                        R"("clientInfo":{"name":"test","version":"1"}})");
  std::string_view name, version;
  REQUIRE(init->root["result"]["serverInfo"]["name"].get(name) == simdjson::SUCCESS);
  CHECK(name == "computer-use");
  REQUIRE(init->root["result"]["protocolVersion"].get(version) == simdjson::SUCCESS);
  CHECK(version == "2025-06-18");
  CHECK(init->root["result"]["capabilities"]["tools"].is_object());
  s.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  auto list = s.request("tools/list");
  simdjson::dom::array tools;
  REQUIRE(list->root["result"]["tools"].get(tools) == simdjson::SUCCESS);
  const std::vector<std::string> expected = tool_names_of("computer");
  REQUIRE(expected.size() == 24);
  REQUIRE(tools.size() == 24);
  size_t i = 0;
  for (auto t : tools) {
    std::string_view n, type;
    REQUIRE(t["name"].get(n) == simdjson::SUCCESS);
    CHECK(n == expected[i]);
    REQUIRE(t["inputSchema"]["type"].get(type) == simdjson::SUCCESS);
    CHECK(type == "object");
    ++i;
  }
}

TEST_CASE("an unsupported protocol version is answered with the newest one") {
  xvfb x;
  server_process s(x.display());
  CHECK(negotiate(s, "1999-01-01") == "2025-11-25");
  for (const char* v : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
    CHECK(negotiate(s, v) == v);
  }
}

TEST_CASE("a malformed line gets -32700 with a null id and the next request is answered") {
  xvfb x;
  server_process s(x.display());
  s.send(R"({"jsonrpc":"2.0","id":1,"method":"ping")");  // Unterminated.
  auto line = s.read_line();
  REQUIRE(line);
  auto err = parse_json(*line);
  CHECK(error_code(*err) == -32700);
  CHECK(err->root["id"].is_null());
  auto pong = s.request("ping");
  CHECK(pong->root["result"].is_object());
}

TEST_CASE("lines that are not JSON-RPC request objects get -32600") {
  xvfb x;
  server_process s(x.display());
  for (const char* bad : {"42", R"("text")", "[]", R"({"jsonrpc":"2.0","id":7})",
                          R"({"jsonrpc":"1.0","id":8,"method":"ping"})",
                          R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"}) {
    s.send(bad);
    INFO(bad);
    CHECK(next_error_code(s) == -32600);
  }
  CHECK(s.request("ping")->root["result"].is_object());
}

TEST_CASE("an unknown method gets -32601 and notifications get no response") {
  xvfb x;
  server_process s(x.display());
  s.send(R"({"jsonrpc":"2.0","method":"notifications/whatever"})");
  s.send(R"({"jsonrpc":"2.0","method":"no/such/notification","params":{}})");
  s.send(R"({"jsonrpc":"2.0","id":"a","method":"no/such/method"})");
  // The first line out must be the answer to the request: the two
  // notifications before it produced nothing.
  auto r = next_json(s);
  std::string_view id;
  REQUIRE(r->root["id"].get(id) == simdjson::SUCCESS);
  CHECK(id == "a");
  CHECK(error_code(*r) == -32601);
}

TEST_CASE("a notifications/cancelled without params is ignored and the server goes on") {
  xvfb x;
  server_process s(x.display());
  // This line once ended the server with SIGSEGV: simdjson was asked about
  // a params element that did not exist.
  for (const char* bad : {R"({"jsonrpc":"2.0","method":"notifications/cancelled"})",
                          R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":[]})",
                          R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{}})",
                          R"({"jsonrpc":"2.0","method":"notifications/cancelled",)"
                          R"("params":{"requestId":null}})",
                          R"({"jsonrpc":"2.0","method":"notifications/progress"})",
                          R"({"jsonrpc":"2.0","method":"notifications/initialized"})"}) {
    s.send(bad);
  }
  // Nothing answered the notifications: the next line is the ping's.
  s.send(R"({"jsonrpc":"2.0","id":"p","method":"ping"})");
  auto r = next_json(s);
  std::string_view id;
  REQUIRE(r->root["id"].get(id) == simdjson::SUCCESS);
  CHECK(id == "p");
  CHECK(r->root["result"].is_object());
  s.close_stdin();
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("100 requests written in one burst are all answered") {
  xvfb x;
  server_process s(x.display());
  std::string burst;
  for (int i = 1; i <= 100; ++i) {
    std::string id = std::to_string(i);
    if (i % 10 == 0) {
      burst += R"({"jsonrpc":"2.0","id":)" + id +
               R"(,"method":"tools/call","params":{"name":"screenshot"}})" "\n";
    } else if (i % 3 == 0) {
      burst += R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/list"})" "\n";
    } else {
      burst += R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})" "\n";
    }
  }
  s.write_raw(burst);
  std::set<int64_t> seen;
  for (int i = 0; i < 100; ++i) {
    auto line = s.read_line();
    REQUIRE(line);
    auto r = parse_json(*line);
    int64_t id = 0;
    REQUIRE(r->root["id"].get(id) == simdjson::SUCCESS);
    CHECK(r->root["result"].is_object());
    if (id % 10 == 0) CHECK(image_of(*r).width == 1366);
    seen.insert(id);
  }
  CHECK(seen.size() == 100);
  CHECK(*seen.begin() == 1);
  CHECK(*seen.rbegin() == 100);
}

TEST_CASE("a frame split into single bytes is reassembled") {
  xvfb x;
  server_process s(x.display());
  std::string req = R"({"jsonrpc":"2.0","id":"split","method":"ping"})" "\n";
  for (char c : req) s.write_raw(std::string(1, c));
  auto r = s.read_response(R"("split")");
  REQUIRE(r);
  CHECK(r->root["result"].is_object());
}

TEST_CASE("a frame longer than the limit gets -32600 and the stream continues") {
  xvfb x;
  server_process s(x.display(), {{"CU_MAX_FRAME_BYTES", "4096"}});
  std::string huge = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")" +
                     std::string(100000, 'x') + "\"}}";
  s.send(huge);
  CHECK(next_error_code(s) == -32600);
  CHECK(s.request("ping")->root["result"].is_object());
}

TEST_CASE("an unknown tool is an isError result that names it") {
  xvfb x;
  server_process s(x.display());
  auto r = s.call_tool("frobnicate");
  CHECK(is_error(*r));
  CHECK(text_of(*r).find("frobnicate") != std::string::npos);
}

TEST_CASE("invalid arguments are an isError result naming the argument") {
  xvfb x;
  server_process s(x.display());
  struct bad {
    const char* tool;
    const char* args;
    const char* argument;
  };
  for (const bad& b : {bad{"screenshot", R"({"save_to_disk":"yes"})", "save_to_disk"},
                       bad{"zoom", R"({})", "region"},
                       bad{"zoom", R"({"region":[1,2,3]})", "region"},
                       bad{"zoom", R"({"region":"0,0,10,10"})", "region"},
                       bad{"zoom", R"({"region":[0,0,10.5,10]})", "region"},
                       bad{"screenshot", R"([1,2])", "arguments"}}) {
    auto r = s.call_tool(b.tool, b.args);
    INFO(b.tool << " " << b.args);
    CHECK(is_error(*r));
    std::string text = text_of(*r);
    CHECK(text.find(std::string("\"") + b.argument + "\"") != std::string::npos);
    CHECK(text.find('\n') == std::string::npos);
  }
  auto r = s.request("tools/call", R"({"arguments":{}})");
  CHECK(error_code(*r) == -32602);
}

TEST_CASE("requests read from a file are all answered and the server exits 0") {
  xvfb x;
  char path[] = "/tmp/cu-stdin-XXXXXX";
  int fd = mkstemp(path);
  std::string reqs = R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n"
                     R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"screenshot"}})" "\n"
                     R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})";  // No final newline.
  REQUIRE(write(fd, reqs.data(), reqs.size()) == ssize_t(reqs.size()));
  close(fd);
  server_process s(x.display(), {}, path);
  std::set<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto line = s.read_line();
    REQUIRE(line);
    int64_t id = 0;
    REQUIRE(parse_json(*line)->root["id"].get(id) == simdjson::SUCCESS);
    ids.insert(id);
  }
  CHECK(ids == std::set<int64_t>{1, 2, 3});
  CHECK(s.wait_exit() == 0);
  unlink(path);
}

TEST_CASE("a capture cancelled before it completes gets no response") {
  xvfb x;
  server_process s(x.display());
  // Both lines arrive in one read, so the cancel is handled before the
  // capture's completion can come back: no race.
  s.write_raw(R"({"jsonrpc":"2.0","id":"shot","method":"tools/call","params":{"name":"screenshot"}})" "\n"
              R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"shot"}})" "\n");
  // A screenshot started after the cancelled one is answered; the cancelled
  // one never is.
  s.write_raw(R"({"jsonrpc":"2.0","id":"next","method":"tools/call","params":{"name":"screenshot"}})" "\n");
  auto r = next_json(s);
  std::string_view id;
  REQUIRE(r->root["id"].get(id) == simdjson::SUCCESS);
  CHECK(id == "next");
  s.close_stdin();
  CHECK_FALSE(s.read_line());
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("requests typed on a terminal are answered") {
  xvfb x;
  server_process s(x.display(), {}, server_process::kStdinTty);
  auto r = s.request("ping");
  CHECK(r->root["result"].is_object());
  auto shot = s.call_tool("screenshot");
  CHECK(image_of(*shot).width == 1366);
  // A terminal has no end of file of its own: stop the server with SIGTERM.
  s.signal(SIGTERM);
  CHECK(s.wait_exit() == 0);
  // Whoever started it in a terminal is told, in one line, what it is.
  const std::string err = s.stderr_text();
  INFO(err);
  const size_t at = err.find("computer-use-mcp: this is an MCP server for a host to spawn");
  REQUIRE(at != std::string::npos);
  const std::string line = err.substr(at, err.find('\n', at) - at);
  CHECK_THAT(line, Catch::Contains("to try it by hand, pipe requests in"));
  CHECK_THAT(line, Catch::Contains("\"method\":\"initialize\""));
}

TEST_CASE("a server whose stdin is a pipe says nothing about terminals") {
  xvfb x;
  server_process s(x.display());
  CHECK(s.request("ping")->root["result"].is_object());
  s.close_stdin();
  CHECK(s.wait_exit() == 0);
  CHECK(s.stderr_text().find("for a host to spawn") == std::string::npos);
}

TEST_CASE("at debug every tool call's end is logged with its duration, outcome and answer size") {
  xvfb x;
  server_process s(x.display(), {{"CU_LOG_LEVEL", "debug"}});
  // Each answer's size on the wire: its line and the newline.
  auto wire_size = [](const json_ptr& r) { return std::to_string(r->text.size() + 1); };
  auto pos = s.call_tool("cursor_position");
  auto shot = s.call_tool("screenshot");
  auto click = s.call_tool("left_click", R"({"coordinate":[99999,0]})");
  auto unknown = s.call_tool("no_such_tool");
  REQUIRE_FALSE(is_error(*pos));
  REQUIRE_FALSE(is_error(*shot));
  REQUIRE(is_error(*click));
  REQUIRE(is_error(*unknown));
  s.close_stdin();
  REQUIRE(s.wait_exit() == 0);
  const std::string err = s.stderr_text();
  INFO(err);
  // The ids are the harness's, in order: one per call above.
  struct expected_line {
    std::string tool, outcome, bytes;
  };
  const std::vector<expected_line> expected = {{"cursor_position", "ok", wire_size(pos)},
                                               {"screenshot", "ok", wire_size(shot)},
                                               {"left_click", "isError", wire_size(click)},
                                               {"no_such_tool", "isError", wire_size(unknown)}};
  for (const expected_line& e : expected) {
    CAPTURE(e.tool);
    std::string head = "tools/call ";
    head.append(e.tool).append(" (id ");
    size_t at = err.find(head);
    // The call's first line is its start; the end line says how it went.
    size_t end_line = std::string::npos;
    for (; at != std::string::npos; at = err.find(head, at + 1)) {
      const std::string line = err.substr(at, err.find('\n', at) - at);
      if (line.find("): ") != std::string::npos) {
        end_line = at;
        CHECK_THAT(line, Catch::Contains("): " + e.outcome + " in "));
        CHECK_THAT(line, Catch::Contains(" ms, " + e.bytes + " bytes"));
      }
    }
    CHECK(end_line != std::string::npos);
    // Then, once the answer's last byte is out, how long after the request
    // was read: after the end line, and at least as long as it says.
    size_t written_line = std::string::npos;
    for (at = err.find(head); at != std::string::npos; at = err.find(head, at + 1)) {
      const std::string line = err.substr(at, err.find('\n', at) - at);
      const size_t w = line.find(") written ");
      if (w == std::string::npos) continue;
      written_line = at;
      CHECK_THAT(line, Catch::EndsWith(" ms after it was read"));
      const double ms = std::strtod(line.c_str() + w + 10, nullptr);
      CHECK(ms > 0);
      CHECK(ms < 10000);
    }
    CHECK(written_line != std::string::npos);
    CHECK(written_line > end_line);
  }
}

TEST_CASE("a storm of malformed lines gets one error each and never stops the server") {
  xvfb x;
  server_process s(x.display());
  std::mt19937 rng(20261122);
  auto pick = [&](int n) { return int(rng() % uint32_t(n)); };
  std::string burst;
  int expected_errors = 0;
  std::set<std::string> ping_ids;
  for (int i = 0; i < 400; ++i) {
    switch (pick(6)) {
      case 0: {  // Random bytes, never a newline; a leading '#' keeps it non-blank.
        std::string junk = "#";
        for (int k = pick(200); k > 0; --k) {
          char c = char(pick(256));
          junk += c == '\n' ? ' ' : c;
        }
        burst += junk + "\n";
        ++expected_errors;
        break;
      }
      case 1:  // Nested deeper than any parser's limit.
        burst += std::string(5000, '[') + std::string(5000, ']') + "\n";
        ++expected_errors;
        break;
      case 2:  // Invalid UTF-8 inside a string.
        burst += "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\xfeng\"}\n";
        ++expected_errors;
        break;
      case 3:  // Truncated request.
        burst += R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":)" "\n";
        ++expected_errors;
        break;
      case 4:  // A valid request with a wrong-typed field: -32602 or -32600.
        burst += R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"})" "\n";
        ++expected_errors;
        break;
      default: {  // A valid ping that must be answered.
        std::string id = "\"p" + std::to_string(i) + "\"";
        ping_ids.insert(id);
        burst += R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})" "\n";
      }
    }
  }
  s.write_raw(burst);
  int errors = 0;
  std::set<std::string> answered;
  for (size_t n = 0; n < size_t(expected_errors) + ping_ids.size(); ++n) {
    auto line = s.read_line();
    REQUIRE(line);
    auto r = parse_json(*line);
    simdjson::dom::element id;
    REQUIRE(r->root["id"].get(id) == simdjson::SUCCESS);
    if (r->root["error"].is_object()) {
      ++errors;
    } else {
      answered.insert(simdjson::minify(id));
    }
  }
  CHECK(errors == expected_errors);
  CHECK(answered == ping_ids);
  CHECK(s.request("ping")->root["result"].is_object());
}

TEST_CASE("initialize echoes each supported version, answers 2025-11-25 otherwise, and declares logging") {
  xvfb x;
  server_process s(x.display());
  for (const char* v : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01"}) {
    INFO(v);
    auto init = s.request("initialize", std::string(R"({"protocolVersion":")") + v +
                                            R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}})");
    std::string_view version;
    REQUIRE(init->root["result"]["protocolVersion"].get(version) == simdjson::SUCCESS);
    CHECK(version == (std::string(v) == "1999-01-01" ? "2025-11-25" : v));
    CHECK(init->root["result"]["capabilities"]["tools"].is_object());
    bool list_changed = true;
    CHECK(init->root["result"]["capabilities"]["tools"]["listChanged"].get(list_changed) ==
          simdjson::SUCCESS);
    CHECK_FALSE(list_changed);
    CHECK(init->root["result"]["capabilities"]["logging"].is_object());
  }
}

TEST_CASE("under 2025-03-26 a JSON-RPC batch array gets one array answer") {
  xvfb x;
  server_process s(x.display());
  REQUIRE(negotiate(s, "2025-03-26") == "2025-03-26");
  s.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  SECTION("requests and a notification: one answer with the three responses") {
    s.send(json_array({rpc("1", "ping"), rpc("2", "tools/list"),
                       R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                       tool_call("3", "wait", R"({"duration":0.1})")}));
    auto line = s.read_line(10000);
    REQUIRE(line);
    auto answer = parse_json(*line);
    simdjson::dom::array a;
    REQUIRE(answer->root.get(a) == simdjson::SUCCESS);
    REQUIRE(a.size() == 3);
    std::vector<int64_t> ids;
    for (element e : a) {
      int64_t id = 0;
      REQUIRE(e["id"].get(id) == simdjson::SUCCESS);
      ids.push_back(id);
      CHECK(e["result"].is_object());
    }
    // In the order they completed: the wait last.
    CHECK(ids.back() == 3);
    std::sort(ids.begin(), ids.end());
    CHECK(ids == std::vector<int64_t>{1, 2, 3});
    element last;
    REQUIRE(a.at(2).get(last) == simdjson::SUCCESS);
    CHECK(text_of(*parse_json(std::string(simdjson::minify(last)))) == "waited 0.1s");
    // Nothing else was written for them.
    s.send(rpc("\"next\"", "ping"));
    line = s.read_line(5000);
    REQUIRE(line);
    CHECK(id_of(*parse_json(*line)) == "\"next\"");
  }
  SECTION("an empty array gets a single -32600") {
    s.send("[]");
    auto line = s.read_line(5000);
    REQUIRE(line);
    auto err = parse_json(*line);
    REQUIRE(err->root.is_object());
    CHECK(error_code(*err) == -32600);
  }
  SECTION("an array of notifications gets no answer") {
    s.send(R"([{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"x/y"}])");
    s.send(rpc("\"next\"", "ping"));
    auto line = s.read_line(5000);
    REQUIRE(line);
    CHECK(id_of(*parse_json(*line)) == "\"next\"");
  }
  SECTION("initialize inside an array gets a -32600 error object in the answer") {
    s.send(json_array({rpc("5", "initialize", R"({"protocolVersion":"2025-03-26"})"),
                       rpc("6", "ping")}));
    auto line = s.read_line(5000);
    REQUIRE(line);
    auto answer = parse_json(*line);
    simdjson::dom::array a;
    REQUIRE(answer->root.get(a) == simdjson::SUCCESS);
    REQUIRE(a.size() == 2);
    bool saw_init = false, saw_ping = false;
    for (element e : a) {
      int64_t id = 0, code = 0;
      REQUIRE(e["id"].get(id) == simdjson::SUCCESS);
      if (id == 5) {
        saw_init = true;
        CHECK(e["error"]["code"].get(code) == simdjson::SUCCESS);
        CHECK(code == -32600);
      } else {
        saw_ping = id == 6;
        CHECK(e["result"].is_object());
      }
    }
    CHECK(saw_init);
    CHECK(saw_ping);
  }
  SECTION("a cancelled request in an array contributes nothing") {
    s.send(json_array({tool_call("\"long\"", "wait", R"({"duration":30})"),
                       rpc("\"short\"", "ping")}));
    s.send(cancel_note("\"long\""));
    auto line = s.read_line(5000);
    REQUIRE(line);
    auto answer = parse_json(*line);
    simdjson::dom::array a;
    REQUIRE(answer->root.get(a) == simdjson::SUCCESS);
    REQUIRE(a.size() == 1);
    std::string_view id;
    REQUIRE(a.at(0)["id"].get(id) == simdjson::SUCCESS);
    CHECK(id == "short");
  }
}

TEST_CASE("under 2025-06-18 an array gets a single -32600") {
  xvfb x;
  server_process s(x.display());
  REQUIRE(negotiate(s, "2025-06-18") == "2025-06-18");
  s.send(json_array({rpc("1", "ping"), rpc("2", "ping")}));
  auto line = s.read_line(5000);
  REQUIRE(line);
  auto err = parse_json(*line);
  REQUIRE(err->root.is_object());
  CHECK(error_code(*err) == -32600);
  s.send(rpc("\"next\"", "ping"));
  line = s.read_line(5000);
  REQUIRE(line);
  CHECK(id_of(*parse_json(*line)) == "\"next\"");
}

TEST_CASE("unknown methods with an id get -32601") {
  xvfb x;
  server_process s(x.display());
  for (const char* m : {"subscriptions/listen", "resources/list", "prompts/list"}) {
    INFO(m);
    auto r = s.request(m);
    CHECK(error_code(*r) == -32601);
  }
}

TEST_CASE("a 2026-07-28 request is served with no initialize, and a legacy one beside it keeps its shape") {
  xvfb x;
  server_process s(x.display());
  const std::string meta =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{}})";
  s.send(R"({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{)" + meta + "}}");
  s.send(R"({"jsonrpc":"2.0","id":"m","method":"tools/call","params":{)" + meta +
         R"(,"name":"cursor_position"}})");
  s.send(R"({"jsonrpc":"2.0","id":"l","method":"tools/call","params":{"name":"cursor_position"}})");
  s.send(R"({"jsonrpc":"2.0","id":"b","method":"server/discover"})");
  std::map<std::string, json_ptr> by_id;
  for (int i = 0; i < 4; ++i) {
    auto r = next_json(s);
    by_id[id_of(*r)] = std::move(r);
  }
  std::string_view type;
  element discover = by_id.at("\"d\"")->root["result"];
  REQUIRE(discover["resultType"].get(type) == simdjson::SUCCESS);
  CHECK(type == "complete");
  std::vector<std::string_view> versions;
  for (element v : discover["supportedVersions"].get_array()) versions.push_back(v.get_string());
  CHECK(versions == std::vector<std::string_view>{"2024-11-05", "2025-03-26", "2025-06-18",
                                                   "2025-11-25", "2026-07-28"});
  CHECK(discover["capabilities"]["tools"].is_object());
  element modern = by_id.at("\"m\"")->root["result"];
  REQUIRE(modern["resultType"].get(type) == simdjson::SUCCESS);
  CHECK(type == "complete");
  std::string_view name;
  REQUIRE(modern["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].get(name) ==
          simdjson::SUCCESS);
  CHECK(name == "computer-use");
  element legacy = by_id.at("\"l\"")->root["result"];
  CHECK(legacy["isError"].get_bool().value() == false);
  CHECK(legacy["resultType"].error() == simdjson::NO_SUCH_FIELD);
  CHECK(legacy["_meta"].error() == simdjson::NO_SUCH_FIELD);
  // A discover that names no version is malformed, not unknown.
  CHECK(error_code(*by_id.at("\"b\"")) == -32602);
}

TEST_CASE("logging/setLevel turns log lines into notifications/message") {
  xvfb x;
  server_process s(x.display());
  // Before any setLevel nothing is sent.
  s.send(tool_call("\"before\"", "wait", R"({"duration":0.05})"));
  std::vector<json_ptr> others;
  REQUIRE(read_until(s, "\"before\"", others, 5000));
  CHECK(with_method(others, "notifications/message").empty());

  auto set = s.request("logging/setLevel", R"({"level":"debug"})");
  simdjson::dom::object result;
  REQUIRE(set->root["result"].get(result) == simdjson::SUCCESS);
  CHECK(result.size() == 0);

  s.send(tool_call("\"logged\"", "cursor_position", "{}"));
  others.clear();
  REQUIRE(read_until(s, "\"logged\"", others, 5000));
  // The message goes through the server's completion queue while the
  // response is written at once, so it may come after it (and after a later
  // request's answer): read on until it arrives.
  auto is_the_message = [](const json_line& m) {
    std::string_view level, data;
    return method_of(m) == "notifications/message" &&
           m.root["params"]["level"].get(level) == simdjson::SUCCESS && level == "debug" &&
           m.root["params"]["data"].get(data) == simdjson::SUCCESS &&
           data.find("tools/call cursor_position (id ") != std::string_view::npos &&
           data.find("logged") != std::string_view::npos;
  };
  const int64_t deadline = now_ms() + 5000;
  while (std::none_of(others.begin(), others.end(), [&](const json_ptr& j) { return is_the_message(*j); })) {
    auto line = s.read_line(int(std::max<int64_t>(0, deadline - now_ms())));
    if (!line) break;
    others.push_back(parse_json(*line));
  }
  auto messages = with_method(others, "notifications/message");
  std::string seen;
  for (const json_ptr& j : others) seen += j->text.substr(0, 300) + "\n";
  INFO("other lines read:\n" << seen);
  REQUIRE_FALSE(messages.empty());
  bool found = false;
  for (const json_line* m : messages) {
    INFO(m->text);
    std::string_view level, logger, data;
    CHECK(m->root["params"]["level"].get(level) == simdjson::SUCCESS);
    CHECK(m->root["params"]["logger"].get(logger) == simdjson::SUCCESS);
    CHECK(logger == "computer-use");
    CHECK(m->root["params"]["data"].get(data) == simdjson::SUCCESS);
    if (level == "debug" && data.find("tools/call cursor_position (id ") != std::string_view::npos &&
        data.find("logged") != std::string_view::npos) {
      found = true;
    }
  }
  CHECK(found);

  SECTION("an unknown level gets -32602") {
    for (const char* params : {R"({"level":"loud"})", R"({"level":5})", R"({})"}) {
      INFO(params);
      CHECK(error_code(*s.request("logging/setLevel", params)) == -32602);
    }
  }
  SECTION("at emergency a tools/call logs nothing") {
    CHECK(s.request("logging/setLevel", R"({"level":"emergency"})")->root["result"].is_object());
    others.clear();
    s.send(tool_call("\"quiet\"", "cursor_position", "{}"));
    REQUIRE(read_until(s, "\"quiet\"", others, 5000));
    s.send(rpc("\"sync2\"", "ping"));
    REQUIRE(read_until(s, "\"sync2\"", others, 5000));
    // A message would come through the completion queue: give it time.
    while (auto line = s.read_line(500)) others.push_back(parse_json(*line));
    // Lines logged while the level was still debug may arrive late: only
    // this call's own line counts.
    std::string seen;
    size_t about_quiet = 0;
    for (const json_ptr& j : others) {
      seen += j->text.substr(0, 300) + "\n";
      if (method_of(*j) == "notifications/message" &&
          j->text.find("quiet") != std::string::npos) {
        ++about_quiet;
      }
    }
    INFO("lines read:\n" << seen);
    CHECK(about_quiet == 0);
  }
}

TEST_CASE("tools/list gives titles, annotations and the documented output schemas") {
  xvfb x;
  server_process s(x.display());
  const std::set<std::string> read_only = {"screenshot", "zoom", "cursor_position", "read_clipboard",
                                           "list_granted_applications", "wait"};
  const std::set<std::string> with_output = {"screenshot", "zoom", "cursor_position",
                                             "request_access", "list_granted_applications",
                                             "open_application", "switch_display",
                                             "computer_batch"};
  auto list = s.request("tools/list");
  simdjson::dom::array tools;
  REQUIRE(list->root["result"]["tools"].get(tools) == simdjson::SUCCESS);
  const std::vector<std::string> expected = tool_names_of("computer");
  REQUIRE(expected.size() == 24);
  REQUIRE(tools.size() == 24);
  size_t i = 0;
  for (element t : tools) {
    std::string_view name;
    REQUIRE(t["name"].get(name) == simdjson::SUCCESS);
    INFO(name);
    CHECK(name == expected[i++]);
    std::string_view title;
    CHECK(t["title"].get(title) == simdjson::SUCCESS);
    CHECK_FALSE(title.empty());
    simdjson::dom::object ann;
    REQUIRE(t["annotations"].get(ann) == simdjson::SUCCESS);
    bool ro = false, destructive = false, idempotent = false, open_world = false;
    CHECK(ann["readOnlyHint"].get(ro) == simdjson::SUCCESS);
    CHECK(ann["destructiveHint"].get(destructive) == simdjson::SUCCESS);
    CHECK(ann["idempotentHint"].get(idempotent) == simdjson::SUCCESS);
    CHECK(ann["openWorldHint"].get(open_world) == simdjson::SUCCESS);
    CHECK(ro == (read_only.count(std::string(name)) == 1));
    if (ro) CHECK_FALSE(destructive);
    element schema;
    const bool has_output = t["outputSchema"].get(schema) == simdjson::SUCCESS;
    CHECK(has_output == (with_output.count(std::string(name)) == 1));
    if (has_output) {
      std::string_view type;
      CHECK(schema["type"].get(type) == simdjson::SUCCESS);
      CHECK(type == "object");
    }
  }
}

TEST_CASE("structuredContent of screenshot, zoom and cursor_position matches what they return") {
  xvfb x;
  server_process s(x.display());
  SECTION("screenshot: image, device and scale") {
    auto shot = s.call_tool("screenshot");
    rgb_image img = image_of(*shot);
    element sc;
    REQUIRE(shot->root["result"]["structuredContent"].get(sc) == simdjson::SUCCESS);
    INFO(simdjson::minify(sc));
    int64_t w = 0, h = 0, dx = -1, dy = -1, dw = 0, dh = 0;
    double scale = 0;
    CHECK(sc["image"]["width"].get(w) == simdjson::SUCCESS);
    CHECK(sc["image"]["height"].get(h) == simdjson::SUCCESS);
    CHECK(w == img.width);
    CHECK(h == img.height);
    CHECK(sc["device"]["x"].get(dx) == simdjson::SUCCESS);
    CHECK(sc["device"]["y"].get(dy) == simdjson::SUCCESS);
    CHECK(sc["device"]["width"].get(dw) == simdjson::SUCCESS);
    CHECK(sc["device"]["height"].get(dh) == simdjson::SUCCESS);
    CHECK(dx == 0);
    CHECK(dy == 0);
    CHECK(dw == 1920);
    CHECK(dh == 1080);
    CHECK(sc["scale"].get_double().get(scale) == simdjson::SUCCESS);
    CHECK(scale == Approx(1920.0 / 1366.0).epsilon(1e-9));
    element saved;
    CHECK(sc["saved_to"].get(saved) != simdjson::SUCCESS);
  }
  SECTION("screenshot with save_to_disk: saved_to is the path of the text block") {
    auto shot = s.call_tool("screenshot", R"({"save_to_disk":true})");
    std::string_view saved;
    REQUIRE(shot->root["result"]["structuredContent"]["saved_to"].get(saved) == simdjson::SUCCESS);
    CHECK(text_of(*shot, 1) == "Saved to disk: " + std::string(saved));
    CHECK(access(std::string(saved).c_str(), R_OK) == 0);
  }
  SECTION("zoom: region, scale 1 and the image size") {
    REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
    auto z = s.call_tool("zoom", R"({"region":[100,50,400,250]})");
    REQUIRE_FALSE(is_error(*z));
    rgb_image img = image_of(*z);
    element sc;
    REQUIRE(z->root["result"]["structuredContent"].get(sc) == simdjson::SUCCESS);
    INFO(simdjson::minify(sc));
    int64_t w = 0, h = 0, dw = 0, dh = 0;
    double scale = 0;
    CHECK(sc["image"]["width"].get(w) == simdjson::SUCCESS);
    CHECK(sc["image"]["height"].get(h) == simdjson::SUCCESS);
    CHECK(w == img.width);
    CHECK(h == img.height);
    CHECK(sc["device"]["width"].get(dw) == simdjson::SUCCESS);
    CHECK(sc["device"]["height"].get(dh) == simdjson::SUCCESS);
    CHECK(dw == img.width);
    CHECK(dh == img.height);
    CHECK(sc["scale"].get_double().get(scale) == simdjson::SUCCESS);
    CHECK(scale == 1.0);
    CHECK(int_array(std::string(simdjson::minify(sc["region"]))) ==
          std::vector<int64_t>{100, 50, 400, 250});
  }
  SECTION("cursor_position: {x, y} equals the text") {
    REQUIRE_FALSE(is_error(*s.call_tool("screenshot")));
    REQUIRE_FALSE(is_error(*s.call_tool("mouse_move", R"({"coordinate":[321,123]})")));
    auto pos = s.call_tool("cursor_position");
    REQUIRE_FALSE(is_error(*pos));
    auto xy = int_array(text_of(*pos));
    REQUIRE(xy.size() == 2);
    CHECK(xy == std::vector<int64_t>{321, 123});
    auto want = parse_json(R"({"x":)" + std::to_string(xy[0]) + R"(,"y":)" + std::to_string(xy[1]) + "}");
    element sc;
    REQUIRE(pos->root["result"]["structuredContent"].get(sc) == simdjson::SUCCESS);
    INFO(simdjson::minify(sc));
    CHECK(json_equal(sc, want->root));
  }
  SECTION("request_access and list_granted_applications: the JSON text itself") {
    for (auto [tool, args] : {std::pair{"request_access", R"({"apps":["xterm"],"reason":"test"})"},
                              std::pair{"list_granted_applications", "{}"}}) {
      INFO(tool);
      auto r = s.call_tool(tool, args);
      REQUIRE_FALSE(is_error(*r));
      auto text = parse_json(text_of(*r));
      element sc;
      REQUIRE(r->root["result"]["structuredContent"].get(sc) == simdjson::SUCCESS);
      CHECK(json_equal(sc, text->root));
    }
  }
}
