// The JSON-RPC and MCP surface of the real binary: handshake, listing,
// error answers, and many requests on one pipe.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>

#include <random>
#include <set>
#include <string>

#include "support/contract.h"
#include "support/harness.h"

using namespace cu::test;

namespace {


int64_t error_code(const json_line& r) {
  int64_t code = 0;
  REQUIRE(r.root["error"]["code"].get(code) == simdjson::SUCCESS);
  return code;
}

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
  REQUIRE(tools.size() == 24);
  size_t i = 0;
  for (auto t : tools) {
    std::string_view n, type;
    REQUIRE(t["name"].get(n) == simdjson::SUCCESS);
    CHECK(n == kContractTools[i]);
    REQUIRE(t["inputSchema"]["type"].get(type) == simdjson::SUCCESS);
    CHECK(type == "object");
    ++i;
  }
}

TEST_CASE("an unsupported protocol version is answered with the newest one") {
  xvfb x;
  server_process s(x.display());
  auto init = s.request("initialize", R"({"protocolVersion":"1999-01-01"})");
  std::string_view version;
  REQUIRE(init->root["result"]["protocolVersion"].get(version) == simdjson::SUCCESS);
  CHECK(version == "2025-11-25");
  for (const char* v : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
    auto again = s.request("initialize", std::string(R"({"protocolVersion":")") + v + "\"}");
    REQUIRE(again->root["result"]["protocolVersion"].get(version) == simdjson::SUCCESS);
    CHECK(version == v);
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
  s.send(R"({"jsonrpc":"2.0","id":"a","method":"server/discover"})");
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
