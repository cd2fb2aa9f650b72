// Tests for src/core/json_writer.h: string escaping, UTF-8 repair, comma
// placement, numbers and base64 payloads. Every document the tests produce is
// also parsed with simdjson, which validates UTF-8, so "valid JSON" is checked
// by a real parser rather than by eye.
#include "core/json_writer.h"

#include <simdjson.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "util/base64.h"

namespace {

constexpr std::string_view kFffd = "\xEF\xBF\xBD";

// The JSON string literal for s.
std::string literal(std::string_view s) {
  std::string out;
  cu::append_json_string(out, s);
  return out;
}

// The bytes of s between double quotes, unchanged. (Built with append:
// GCC 12 at -O3 warns falsely about "literal" + std::string, bug 105329.)
std::string in_quotes(std::string_view s) {
  std::string out = "\"";
  out.append(s);
  out.push_back('"');
  return out;
}

// Parses doc, failing the test when simdjson rejects it.
simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& doc) {
  simdjson::dom::element e;
  auto err = parser.parse(doc).get(e);
  INFO("document: " << doc);
  REQUIRE(err == simdjson::SUCCESS);
  return e;
}

// What a JSON parser reads back from the literal written for s.
std::string read_back(std::string_view s) {
  simdjson::dom::parser parser;
  std::string_view v;
  REQUIRE(parse(parser, literal(s)).get_string().get(v) == simdjson::SUCCESS);
  return std::string(v);
}

// s with every maximal invalid subpart replaced: the pieces joined, with
// U+FFFD wherever a piece is empty.
std::string with_fffd(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (std::string_view p : pieces) out.append(p.empty() ? kFffd : p);
  return out;
}

// The text json_writer::number(double) produces for v.
std::string double_text(double v) {
  std::string out;
  cu::json_writer(out).number(v);
  return out;
}

// A byte string of n random bytes, fixed by seed.
std::string random_bytes(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::string s(n, '\0');
  for (char& c : s) c = char(byte(rng));
  return s;
}

}  // namespace

TEST_CASE("quotes and backslashes are escaped") {
  CHECK(literal("") == "\"\"");
  CHECK(literal("plain") == "\"plain\"");
  CHECK(literal("a\"b") == "\"a\\\"b\"");
  CHECK(literal("a\\b") == "\"a\\\\b\"");
  CHECK(literal("\"\\\"") == "\"\\\"\\\\\\\"\"");
  CHECK(literal("/") == "\"/\"");
  CHECK(read_back("say \"hi\" C:\\dir\\") == "say \"hi\" C:\\dir\\");
}

TEST_CASE("every control character is escaped, the common ones in short form") {
  for (int c = 0; c < 0x20; ++c) {
    CAPTURE(c);
    std::string expected;
    switch (c) {
      case '\n': expected = "\\n"; break;
      case '\r': expected = "\\r"; break;
      case '\t': expected = "\\t"; break;
      case '\b': expected = "\\b"; break;
      case '\f': expected = "\\f"; break;
      default: {
        const char* hex = "0123456789abcdef";
        expected = std::string("\\u00") + hex[c >> 4] + hex[c & 15];
      }
    }
    const std::string s(1, char(c));
    CHECK(literal(s) == in_quotes(expected));
    CHECK(literal("a" + s + "b") == "\"a" + expected + "b\"");
    CHECK(read_back(s) == s);
  }
}

TEST_CASE("a NUL byte inside a string survives the round trip") {
  const std::string s("a\0b", 3);
  CHECK(literal(s) == "\"a\\u0000b\"");
  CHECK(read_back(s) == s);
}

TEST_CASE("DEL is passed through unescaped") {
  CHECK(literal("\x7f") == "\"\x7f\"");
  CHECK(read_back("a\x7f") == "a\x7f");
}

TEST_CASE("valid multi-byte UTF-8 is passed through unchanged") {
  const std::vector<std::string_view> valid = {
      "\xC2\x80",          // U+0080, the smallest 2-byte sequence.
      "\xC3\xA9",          // U+00E9 e acute.
      "\xDF\xBF",          // U+07FF, the largest 2-byte sequence.
      "\xE0\xA0\x80",      // U+0800, the smallest 3-byte sequence.
      "\xE2\x82\xAC",      // U+20AC euro sign.
      "\xED\x9F\xBF",      // U+D7FF, just below the surrogates.
      "\xEE\x80\x80",      // U+E000, just above the surrogates.
      "\xEF\xBF\xBD",      // U+FFFD itself.
      "\xEF\xBF\xBF",      // U+FFFF.
      "\xF0\x90\x80\x80",  // U+10000, the smallest 4-byte sequence.
      "\xF0\x9F\x98\x80",  // U+1F600 grinning face.
      "\xF4\x8F\xBF\xBF",  // U+10FFFF, the last code point.
  };
  for (std::string_view v : valid) {
    CAPTURE(v);
    CHECK(literal(v) == in_quotes(v));
    std::string mixed = "x";
    mixed.append(v).append("\n").append(v).append("\"");
    CHECK(read_back(mixed) == mixed);
  }
  const std::string text = "Gr\xC3\xBC\xC3\x9F" "e \xE6\x97\xA5\xE6\x9C\xAC "
                           "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";
  CHECK(literal(text) == in_quotes(text));
}

TEST_CASE("each maximal invalid UTF-8 subpart becomes one U+FFFD") {
  struct example {
    std::string_view name;
    std::string_view in;
    std::string expected;
  };
  const std::vector<example> examples = {
      {"lone continuation byte", "a\x80z", with_fffd({"a", "", "z"})},
      {"two continuation bytes", "\x80\xBF", with_fffd({"", ""})},
      {"truncated 3-byte sequence", "a\xE2\x82z", with_fffd({"a", "", "z"})},
      {"truncated 3-byte sequence before a valid one", "\xE2\x82\xE2\x82\xAC",
       with_fffd({"", "\xE2\x82\xAC"})},
      {"truncated 4-byte sequence", "\xF0\x9F\x98z", with_fffd({"", "z"})},
      {"overlong C0 80", "\xC0\x80", with_fffd({"", ""})},
      {"overlong C1 BF", "\xC1\xBF", with_fffd({"", ""})},
      {"overlong E0 80 80", "\xE0\x80\x80", with_fffd({"", "", ""})},
      {"overlong F0 80 80 80", "\xF0\x80\x80\x80", with_fffd({"", "", "", ""})},
      {"surrogate ED A0 80", "\xED\xA0\x80", with_fffd({"", "", ""})},
      {"surrogate ED BF BF", "\xED\xBF\xBF", with_fffd({"", "", ""})},
      {"above U+10FFFF F4 90 80 80", "\xF4\x90\x80\x80", with_fffd({"", "", "", ""})},
      {"F5 lead byte", "\xF5\x80\x80\x80", with_fffd({"", "", "", ""})},
      {"F8 lead byte", "\xF8", with_fffd({""})},
      {"FF byte", "a\xFF", with_fffd({"a", ""})},
      {"2-byte lead at the end of the string", "ab\xC3", with_fffd({"ab", ""})},
      {"3-byte lead and one continuation at the end", "\xE2\x82", with_fffd({""})},
      {"4-byte lead and two continuations at the end", "\xF0\x9F\x98", with_fffd({""})},
      {"lead byte followed by a control character", "\xC3\n", with_fffd({"", "\\n"})},
      {"lead byte followed by a quote", "\xE2\"", with_fffd({"", "\\\""})},
      // The example from the Unicode Standard, section 3.9 (U+FFFD substitution).
      {"Unicode standard example", "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64",
       with_fffd({"a", "", "", "", "b", "", "c", "", "", "d"})},
  };
  for (const example& ex : examples) {
    CAPTURE(ex.name);
    CHECK(literal(ex.in) == in_quotes(ex.expected));
  }
}

TEST_CASE("invalid UTF-8 reads back as U+FFFD from a real parser") {
  CHECK(read_back("a\x80z") == "a" + std::string(kFffd) + "z");
  CHECK(read_back("\xED\xA0\x80") == std::string(kFffd) + std::string(kFffd) + std::string(kFffd));
  CHECK(read_back("end\xF0\x9F") == "end" + std::string(kFffd));
}

TEST_CASE("random bytes always produce a valid JSON string") {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<size_t> length(0, 64);
  simdjson::dom::parser parser;
  for (int i = 0; i < 2000; ++i) {
    const std::string s = random_bytes(rng, length(rng));
    std::string doc = literal(s);
    simdjson::dom::element e;
    INFO("input bytes: " << std::string(s));
    REQUIRE(parser.parse(doc).get(e) == simdjson::SUCCESS);
    REQUIRE(e.is_string());
  }
}

TEST_CASE("a string of mixed content round-trips through a real parser") {
  std::string s;
  for (int c = 0; c < 0x80; ++c) s.push_back(char(c));
  s += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  CHECK(read_back(s) == s);
}

TEST_CASE("the writer places commas between values and members only") {
  std::string out;
  cu::json_writer w(out);
  w.begin_object();
  w.key("a").number(int64_t{1});
  w.key("b").begin_array();
  w.number(int64_t{1}).begin_object().end_object().begin_array().end_array().string("s");
  w.begin_array().null().boolean(false).end_array();
  w.end_array();
  w.key("c").begin_object().key("d").null().end_object();
  w.key("e").boolean(true);
  w.key("f").begin_object().key("g").begin_object().key("h").begin_array().end_array();
  w.end_object().key("i").raw("17").end_object();
  w.end_object();
  CHECK(out ==
        R"({"a":1,"b":[1,{},[],"s",[null,false]],"c":{"d":null},"e":true,)"
        R"("f":{"g":{"h":[]},"i":17}})");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parse(parser, out);
  int64_t i = 0;
  CHECK(doc["f"]["i"].get(i) == simdjson::SUCCESS);
  CHECK(i == 17);
}

TEST_CASE("the writer separates objects in a top-level array") {
  std::string out;
  cu::json_writer w(out);
  w.begin_array();
  for (int i = 0; i < 3; ++i) {
    w.begin_object().key("n").number(int64_t{i}).key("s").string("x").end_object();
  }
  w.end_array();
  CHECK(out == R"([{"n":0,"s":"x"},{"n":1,"s":"x"},{"n":2,"s":"x"}])");
  simdjson::dom::parser parser;
  simdjson::dom::array a;
  REQUIRE(parse(parser, out).get_array().get(a) == simdjson::SUCCESS);
  CHECK(a.size() == 3);
}

TEST_CASE("keys are escaped like strings") {
  std::string out;
  cu::json_writer(out).begin_object().key("a\"b\n").string("v").end_object();
  CHECK(out == "{\"a\\\"b\\n\":\"v\"}");
  simdjson::dom::parser parser;
  std::string_view v;
  CHECK(parse(parser, out)["a\"b\n"].get(v) == simdjson::SUCCESS);
  CHECK(v == "v");
}

TEST_CASE("the writer appends to what the string already holds") {
  std::string out = "prefix:";
  cu::json_writer(out).begin_array().number(int64_t{1}).end_array();
  CHECK(out == "prefix:[1]");
}

TEST_CASE("64-bit integers are written exactly at both extremes") {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  std::string out;
  cu::json_writer(out).begin_array().number(lo).number(int64_t{-1}).number(int64_t{0}).number(hi).end_array();
  CHECK(out == "[-9223372036854775808,-1,0,9223372036854775807]");
  simdjson::dom::parser parser;
  simdjson::dom::array a = parse(parser, out);
  std::vector<int64_t> values;
  for (simdjson::dom::element e : a) {
    int64_t v = 0;
    REQUIRE(e.get(v) == simdjson::SUCCESS);
    values.push_back(v);
  }
  CHECK(values == std::vector<int64_t>{lo, -1, 0, hi});
}

TEST_CASE("doubles are written in the shortest form that round-trips") {
  CHECK(double_text(0.0) == "0");
  CHECK(double_text(0.1) == "0.1");
  CHECK(double_text(1.5) == "1.5");
  CHECK(double_text(-2.25) == "-2.25");
  CHECK(double_text(1366.0) == "1366");
  CHECK(double_text(0.1 + 0.2) == "0.30000000000000004");
  CHECK(double_text(1.0 / 3.0) == "0.3333333333333333");
  CHECK(double_text(5e-324) == "5e-324");
  CHECK(double_text(1e300) == "1e+300");
}

TEST_CASE("doubles read back exactly through a real parser") {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                100.0,
                                123456789.0,
                                0.1,
                                2.5e-8,
                                6.02214076e23,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::lowest(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::epsilon()};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 500; ++i) values.push_back(std::ldexp(unit(rng), exponent(rng)));

  simdjson::dom::parser parser;
  for (double v : values) {
    const std::string text = double_text(v);
    CAPTURE(v, text);
    CHECK(std::strtod(text.c_str(), nullptr) == v);
    double parsed = 0;
    REQUIRE(parse(parser, "[" + text + "]").at(0).get(parsed) == simdjson::SUCCESS);
    CHECK(parsed == v);
  }
}

TEST_CASE("NaN and the infinities are written as null") {
  std::string out;
  cu::json_writer(out)
      .begin_array()
      .number(std::numeric_limits<double>::quiet_NaN())
      .number(std::numeric_limits<double>::infinity())
      .number(-std::numeric_limits<double>::infinity())
      .number(2.5)
      .end_array();
  CHECK(out == "[null,null,null,2.5]");
  simdjson::dom::parser parser;
  parse(parser, out);
}

TEST_CASE("base64 writes a string holding the encoding of the bytes") {
  const std::string_view foobar = "foobar";
  const auto* bytes = reinterpret_cast<const uint8_t*>(foobar.data());
  std::string out;
  cu::json_writer w(out);
  w.begin_object();
  w.key("empty").base64(bytes, 0);
  w.key("f").base64(bytes, 1);
  w.key("fo").base64(bytes, 2);
  w.key("foobar").base64(bytes, 6);
  w.end_object();
  CHECK(out == R"({"empty":"","f":"Zg==","fo":"Zm8=","foobar":"Zm9vYmFy"})");
  simdjson::dom::parser parser;
  parse(parser, out);
}

TEST_CASE("base64 of random bytes in an array decodes back to the bytes") {
  std::mt19937 rng(99);
  std::vector<std::string> blobs;
  for (size_t n : std::vector<size_t>{0, 1, 2, 3, 4, 5, 100, 4097}) blobs.push_back(random_bytes(rng, n));
  std::string out;
  cu::json_writer w(out);
  w.begin_array();
  for (const std::string& b : blobs) {
    w.base64(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  }
  w.end_array();
  simdjson::dom::parser parser;
  simdjson::dom::array a = parse(parser, out);
  REQUIRE(a.size() == blobs.size());
  size_t i = 0;
  for (simdjson::dom::element e : a) {
    std::string_view text;
    REQUIRE(e.get(text) == simdjson::SUCCESS);
    std::vector<uint8_t> decoded;
    REQUIRE(cu::base64_decode(text, decoded));
    CHECK(std::string(decoded.begin(), decoded.end()) == blobs[i++]);
  }
}
