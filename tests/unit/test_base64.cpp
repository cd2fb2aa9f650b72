// Tests for src/util/base64.h: RFC 4648 encoding and strict decoding.
#include "util/base64.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::string encode(std::string_view bytes) {
  std::string out;
  cu::base64_append(out, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return out;
}

// The decoded bytes as a string, or nothing when decoding was refused.
std::optional<std::string> decode(std::string_view text) {
  std::vector<uint8_t> out;
  if (!cu::base64_decode(text, out)) return std::nullopt;
  return std::string(out.begin(), out.end());
}

struct vector_pair {
  std::string_view plain;
  std::string_view encoded;
};

// RFC 4648, section 10.
constexpr vector_pair kRfc4648[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

}  // namespace

TEST_CASE("the RFC 4648 test vectors encode as the RFC says") {
  for (const vector_pair& v : kRfc4648) {
    CAPTURE(v.plain);
    CHECK(encode(v.plain) == v.encoded);
    CHECK(cu::base64_encoded_size(v.plain.size()) == v.encoded.size());
  }
}

TEST_CASE("the RFC 4648 test vectors decode as the RFC says") {
  for (const vector_pair& v : kRfc4648) {
    CAPTURE(v.encoded);
    CHECK(decode(v.encoded) == std::string(v.plain));
  }
}

TEST_CASE("encoding appends to what the string already holds") {
  std::string out = "data:";
  cu::base64_append(out, reinterpret_cast<const uint8_t*>("foo"), 3);
  CHECK(out == "data:Zm9v");
}

TEST_CASE("the whole alphabet encodes and decodes, including + and /") {
  const std::string bytes = {'\xfb', '\xff', '\xbf', '\x00', '\x10', '\x83'};
  CHECK(encode(bytes) == "+/+/ABCD");
  CHECK(decode("+/+/ABCD") == bytes);
}

TEST_CASE("random bytes of every length from 0 to 300 round-trip") {
  std::mt19937 rng(4648);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t n = 0; n <= 300; ++n) {
    CAPTURE(n);
    std::vector<uint8_t> bytes(n);
    for (uint8_t& b : bytes) b = uint8_t(byte(rng));
    std::string text;
    cu::base64_append(text, bytes.data(), bytes.size());
    REQUIRE(text.size() == cu::base64_encoded_size(n));
    std::vector<uint8_t> back = {0xAA};  // Decoding replaces what was there.
    REQUIRE(cu::base64_decode(text, back));
    CHECK(back == bytes);
  }
}

TEST_CASE("decoding rejects characters outside the alphabet") {
  for (std::string_view bad : {"Zm9v!A==", "Zm 9", "Zm9\n", "Zm-v", "Zm_v", "Zm9v.AAA"}) {
    CAPTURE(bad);
    CHECK_FALSE(decode(bad));
  }
  CHECK_FALSE(decode(std::string_view("Zm9\0", 4)));
  CHECK_FALSE(decode("Zm9\xC3"));
}

TEST_CASE("decoding rejects lengths that are not a multiple of four") {
  for (std::string_view bad : {"Z", "Zm", "Zm9", "Zm9vY", "Zm9vYg=", "Zm9vYg==="}) {
    CAPTURE(bad);
    CHECK_FALSE(decode(bad));
  }
}

TEST_CASE("decoding rejects padding anywhere but the end") {
  for (std::string_view bad : {"Zg==Zm9v", "Zm8=Zm9v", "=Zm9", "Z=m9", "Zm=v", "Zm9v=AAA",
                               "====", "Z===", "Zm=9", "Zm9v=A=="}) {
    CAPTURE(bad);
    CHECK_FALSE(decode(bad));
  }
}

TEST_CASE("base64 of pieces is base64 of the pieces joined, however they are cut") {
  std::vector<uint8_t> data(200);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 37 + 11);
  std::string whole;
  cu::base64_append(whole, data.data(), data.size());
  // Cuts of every length pattern from 0 to 7 bytes, so carries of one and
  // two bytes cross pieces, empty pieces included.
  for (size_t pattern = 0; pattern < 8; ++pattern) {
    std::vector<std::span<const uint8_t>> pieces;
    size_t at = 0, k = 0;
    while (at < data.size()) {
      const size_t len = std::min(data.size() - at, (pattern + k++) % 8);
      pieces.emplace_back(data.data() + at, len);
      at += len;
    }
    std::string out = "prefix";
    cu::base64_append(out, pieces);
    CAPTURE(pattern);
    CHECK(out == "prefix" + whole);
  }
}
