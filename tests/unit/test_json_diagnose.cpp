// Parse errors name where and why a line is not JSON the server can take.
#include <catch2/catch.hpp>

#include <simdjson.h>

#include <string>

#include "protocol/json_diagnose.h"

namespace {

// The message the server answers a line with, through the DOM parser as it
// sees it first.
std::string message_for(const std::string& line) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  auto err = p.parse(line).get(e);
  REQUIRE(err != simdjson::SUCCESS);
  return cu::describe_parse_error(line, err);
}

}  // namespace

TEST_CASE("a number too large for a double in the id names the id and the number") {
  CHECK(message_for(R"({"jsonrpc":"2.0","id":1e400,"method":"ping"})") ==
        "Parse error at byte 22 (in \"id\"): the number 1e400 is out of range (numbers must "
        "fit a 64-bit integer or a double)");
}

TEST_CASE("an integer past 64 bits in the id names the id") {
  CHECK_THAT(message_for(R"({"id":18446744073709551616})"),
             Catch::Contains("18446744073709551616 is out of range") &&
                 Catch::Contains("(in \"id\")"));
}

TEST_CASE("a lone surrogate names the string and its path") {
  CHECK(message_for(R"({"params":{"arguments":{"text":"x\ud800y"}}})") ==
        "Parse error at byte 31 (in \"params\".\"arguments\".\"text\"): a string has a bad "
        "escape or a lone UTF-16 surrogate (\\ud800 to \\udfff)");
}

TEST_CASE("a bad number inside an array names its index") {
  CHECK_THAT(message_for(R"({"params":{"arguments":{"region":[0,0,-1e999,4]}}})"),
             Catch::Contains("-1e999 is out of range") &&
                 Catch::Contains("(in \"params\".\"arguments\".\"region\"[2])"));
}

TEST_CASE("a misspelt literal is named") {
  CHECK_THAT(message_for(R"({"a":tru})"), Catch::Contains("\"tru\" is not true, false or null"));
}

TEST_CASE("a bad escape in a member name is found") {
  CHECK_THAT(message_for(R"({"x\ud800":1})"), Catch::Contains("a member name has a bad escape"));
}

TEST_CASE("invalid UTF-8 names the byte offset") {
  CHECK(message_for("{\"a\":\"\xff\"}") ==
        "Parse error at byte 6: the line is not valid UTF-8 (a malformed byte sequence)");
}

TEST_CASE("structural errors keep simdjson's own message") {
  std::string m = message_for(R"({"jsonrpc":"2.0","id":1)");
  CHECK(m.rfind("Parse error", 0) == 0);
  CHECK(m.size() > std::string("Parse error: ").size());
}

TEST_CASE("a huge token is not echoed whole") {
  std::string digits(5000, '9');
  std::string m = message_for("{\"id\":" + digits + "}");
  CHECK(m.size() < 300);
  CHECK_THAT(m, Catch::Contains("(in \"id\")"));
}

TEST_CASE("json tokens count punctuation, strings and other values, not what strings hold") {
  CHECK(cu::json_tokens(R"({"a":[1, 22,true]})", 100) == 11);
  CHECK(cu::json_tokens(R"("x,y:[z]{}")", 100) == 1);
  CHECK(cu::json_tokens(R"(["a\"],[", 0])", 100) == 5);
  CHECK(cu::json_tokens("  ", 100) == 0);
}

TEST_CASE("json tokens count a malformed text as the parser's first stage would") {
  CHECK(cu::json_tokens("[0 0 0", 100) == 4);
  CHECK(cu::json_tokens(R"("unterminated, [0,0])", 100) == 1);
}

TEST_CASE("json tokens stop counting past the limit") {
  std::string dense = "[";
  for (int i = 0; i < 1000; ++i) dense += "0,";
  CHECK(cu::json_tokens(dense, 10) == 11);
}
