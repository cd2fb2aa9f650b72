// Tests for src/toolsets/args.h: reading tool arguments, and the one shape
// every invalid-argument message has.
#include "toolsets/args.h"

#include <simdjson.h>

#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <string_view>

namespace {

// Holds a parsed arguments object; the parser owns the strings that
// arg_string returns views of, so it lives as long as the fixture.
class args {
 public:
  explicit args(const std::string& json) {
    REQUIRE(parser_.parse(json).get(object_) == simdjson::SUCCESS);
  }
  simdjson::dom::object get() const { return object_; }

 private:
  simdjson::dom::parser parser_;
  simdjson::dom::object object_;
};

// The error message of a failed result, after checking that it failed with
// invalid_argument and fits on one line.
template <class T>
std::string failure(const cu::result<T>& r) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == cu::errc::invalid_argument);
  CHECK(r.err().message.find('\n') == std::string::npos);
  return r.err().message;
}

constexpr std::string_view kRegionExpected = "expected an array of 4 integers [x0, y0, x1, y1]";
constexpr std::string_view kCoordinateExpected = "expected an array of 2 numbers [x, y]";

}  // namespace

TEST_CASE("an absent or null boolean gives the fallback") {
  args a(R"({"other":1,"nothing":null})");
  for (bool fallback : {false, true}) {
    auto absent = cu::arg_bool(a.get(), "save_to_disk", fallback);
    REQUIRE(absent.ok());
    CHECK(*absent == fallback);
    auto null = cu::arg_bool(a.get(), "nothing", fallback);
    REQUIRE(null.ok());
    CHECK(*null == fallback);
  }
}

TEST_CASE("a present boolean is read as given") {
  args a(R"({"yes":true,"no":false})");
  CHECK(*cu::arg_bool(a.get(), "yes", false) == true);
  CHECK(*cu::arg_bool(a.get(), "no", true) == false);
}

TEST_CASE("a boolean of the wrong type names the argument and what it got") {
  args a(R"({"s":"true","n":1,"a":[],"o":{}})");
  CHECK(failure(cu::arg_bool(a.get(), "s", false)) ==
        "Invalid argument \"s\": expected a boolean, got a string");
  CHECK(failure(cu::arg_bool(a.get(), "n", false)) ==
        "Invalid argument \"n\": expected a boolean, got a number");
  CHECK(failure(cu::arg_bool(a.get(), "a", false)) ==
        "Invalid argument \"a\": expected a boolean, got an array");
  CHECK(failure(cu::arg_bool(a.get(), "o", false)) ==
        "Invalid argument \"o\": expected a boolean, got an object");
}

TEST_CASE("a string is read as given, escapes and all") {
  args a(R"({"text":"ctrl+s","empty":"","escaped":"a\"b\n\u00e9"})");
  CHECK(*cu::arg_string(a.get(), "text") == "ctrl+s");
  CHECK(*cu::arg_string(a.get(), "empty") == "");
  CHECK(*cu::arg_string(a.get(), "escaped") == "a\"b\n\xC3\xA9");
}

TEST_CASE("an absent or null required string is reported missing") {
  args a(R"({"text":null})");
  CHECK(failure(cu::arg_string(a.get(), "text")) ==
        "Missing required argument \"text\": expected a string");
  CHECK(failure(cu::arg_string(a.get(), "x")) ==
        "Missing required argument \"x\": expected a string");
}

TEST_CASE("a string of the wrong type names the argument and what it got") {
  args a(R"({"text":5,"b":false})");
  CHECK(failure(cu::arg_string(a.get(), "text")) ==
        "Invalid argument \"text\": expected a string, got a number");
  CHECK(failure(cu::arg_string(a.get(), "b")) ==
        "Invalid argument \"b\": expected a string, got a boolean");
}

TEST_CASE("a region of four integers is read in order") {
  args a(R"({"region":[10,20,300,400],"negative":[-5,0,1,2]})");
  auto r = cu::arg_region(a.get(), "region");
  REQUIRE(r.ok());
  CHECK(*r == std::array<int, 4>{10, 20, 300, 400});
  // Bounds are the session's business, later; the reader only wants integers.
  auto n = cu::arg_region(a.get(), "negative");
  REQUIRE(n.ok());
  CHECK(*n == std::array<int, 4>{-5, 0, 1, 2});
}

TEST_CASE("a region accepts integral floats") {
  args a(R"({"region":[100.0,0.0,1e2,2.5e2]})");
  auto r = cu::arg_region(a.get(), "region");
  REQUIRE(r.ok());
  CHECK(*r == std::array<int, 4>{100, 0, 100, 250});
}

TEST_CASE("a region with a fractional element is refused") {
  args a(R"({"region":[0,0,1.5,10]})");
  CHECK(failure(cu::arg_region(a.get(), "region")) ==
        "Invalid argument \"region\": " + std::string(kRegionExpected) +
            ", got element 2 is not an integer");
}

TEST_CASE("a region of the wrong length is refused") {
  args a(R"({"three":[1,2,3],"five":[1,2,3,4,5],"none":[]})");
  CHECK(failure(cu::arg_region(a.get(), "three")) ==
        "Invalid argument \"three\": " + std::string(kRegionExpected) + ", got 3 element(s)");
  CHECK(failure(cu::arg_region(a.get(), "five")) ==
        "Invalid argument \"five\": " + std::string(kRegionExpected) + ", got 5 element(s)");
  CHECK(failure(cu::arg_region(a.get(), "none")) ==
        "Invalid argument \"none\": " + std::string(kRegionExpected) + ", got 0 element(s)");
}

TEST_CASE("a region that is not an array of numbers is refused") {
  args a(R"({"str":"0,0,10,10","obj":{"x0":0},"elem":[0,"0",10,10],"nested":[[0],0,10,10]})");
  CHECK(failure(cu::arg_region(a.get(), "str")) ==
        "Invalid argument \"str\": " + std::string(kRegionExpected) + ", got a string");
  CHECK(failure(cu::arg_region(a.get(), "obj")) ==
        "Invalid argument \"obj\": " + std::string(kRegionExpected) + ", got an object");
  CHECK(failure(cu::arg_region(a.get(), "elem")) ==
        "Invalid argument \"elem\": " + std::string(kRegionExpected) +
            ", got element 1 is a string");
  CHECK(failure(cu::arg_region(a.get(), "nested")) ==
        "Invalid argument \"nested\": " + std::string(kRegionExpected) +
            ", got element 0 is an array");
}

TEST_CASE("a region with an element beyond int range is refused") {
  args a(R"({"region":[0,0,10000000000,10]})");
  CHECK_THAT(failure(cu::arg_region(a.get(), "region")),
             Catch::StartsWith("Invalid argument \"region\": ") &&
                 Catch::Contains("element 2"));
}

TEST_CASE("an absent or null region is reported missing") {
  args a(R"({"region":null})");
  CHECK(failure(cu::arg_region(a.get(), "region")) ==
        "Missing required argument \"region\": " + std::string(kRegionExpected));
  CHECK(failure(cu::arg_region(a.get(), "other")) ==
        "Missing required argument \"other\": " + std::string(kRegionExpected));
}

TEST_CASE("a coordinate of two numbers is read, fractions included") {
  args a(R"({"coordinate":[683,384.5],"big":[18446744073709551615,-0.0]})");
  auto c = cu::arg_coordinate(a.get(), "coordinate");
  REQUIRE(c.ok());
  CHECK(*c == std::array<double, 2>{683.0, 384.5});
  auto big = cu::arg_coordinate(a.get(), "big");
  REQUIRE(big.ok());
  CHECK((*big)[0] == 18446744073709551615.0);
}

TEST_CASE("a coordinate of the wrong length or type is refused") {
  args a(R"({"one":[1],"three":[1,2,3],"str":"1,2","elem":[1,true],"null_elem":[null,2]})");
  CHECK(failure(cu::arg_coordinate(a.get(), "one")) ==
        "Invalid argument \"one\": " + std::string(kCoordinateExpected) + ", got 1 element(s)");
  CHECK(failure(cu::arg_coordinate(a.get(), "three")) ==
        "Invalid argument \"three\": " + std::string(kCoordinateExpected) +
            ", got 3 element(s)");
  CHECK(failure(cu::arg_coordinate(a.get(), "str")) ==
        "Invalid argument \"str\": " + std::string(kCoordinateExpected) + ", got a string");
  CHECK(failure(cu::arg_coordinate(a.get(), "elem")) ==
        "Invalid argument \"elem\": " + std::string(kCoordinateExpected) +
            ", got element 1 is a boolean");
  CHECK(failure(cu::arg_coordinate(a.get(), "null_elem")) ==
        "Invalid argument \"null_elem\": " + std::string(kCoordinateExpected) +
            ", got element 0 is null");
}

TEST_CASE("a non-finite coordinate never reaches the reader") {
  // JSON has no NaN or infinity, and simdjson refuses a number that overflows
  // a double instead of reading it as infinity, so arg_coordinate's
  // finiteness check is a second line of defence no document can reach.
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  CHECK(parser.parse(std::string(R"({"coordinate":[1e400,0]})")).get(e) != simdjson::SUCCESS);
  CHECK(parser.parse(std::string(R"({"coordinate":[NaN,0]})")).get(e) != simdjson::SUCCESS);
  CHECK(parser.parse(std::string(R"({"coordinate":[-Infinity,0]})")).get(e) != simdjson::SUCCESS);
}

TEST_CASE("an absent or null coordinate is reported missing") {
  args a(R"({"coordinate":null})");
  CHECK(failure(cu::arg_coordinate(a.get(), "coordinate")) ==
        "Missing required argument \"coordinate\": " + std::string(kCoordinateExpected));
  CHECK(failure(cu::arg_coordinate(a.get(), "x")) ==
        "Missing required argument \"x\": " + std::string(kCoordinateExpected));
}

TEST_CASE("invalid_argument builds the shared message with and without what was got") {
  cu::error e = cu::invalid_argument("duration", "a number of seconds");
  CHECK(e.code == cu::errc::invalid_argument);
  CHECK(e.message == "Invalid argument \"duration\": expected a number of seconds");
  CHECK(cu::invalid_argument("duration", "a number", "a string").message ==
        "Invalid argument \"duration\": expected a number, got a string");
}

TEST_CASE("a region element far outside any screen is out of range, not 'not an integer'") {
  args a(R"({"region":[0,0,1e10,1e10]})");
  CHECK(failure(cu::arg_region(a.get(), "region")) ==
        "Invalid argument \"region\": " + std::string(kRegionExpected) +
            ", got element 2 is 10000000000, out of range (no screen is wider than 32767 "
            "pixels)");
}

TEST_CASE("a name must be non-empty, short and free of control characters") {
  args a(R"({"ok":"xclock","empty":"","nul":"xclock\u0000rm","esc":"a\u001b","long":")" +
         std::string(2000, 'x') + R"(","num":3})");
  REQUIRE(cu::arg_name(a.get(), "ok", 1024).ok());
  CHECK_THAT(failure(cu::arg_name(a.get(), "empty", 1024)), Catch::Contains("non-empty"));
  CHECK(failure(cu::arg_name(a.get(), "nul", 1024)) ==
        "Invalid argument \"nul\": expected a name without control characters, got control "
        "character U+0000 at byte 6");
  CHECK_THAT(failure(cu::arg_name(a.get(), "esc", 1024)), Catch::Contains("U+001B"));
  CHECK_THAT(failure(cu::arg_name(a.get(), "long", 1024)),
             Catch::Contains("at most 1024 bytes, got 2000 bytes"));
  CHECK_THAT(failure(cu::arg_name(a.get(), "num", 1024)), Catch::Contains("a string"));
}
