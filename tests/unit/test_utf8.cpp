// Tests for src/util/utf8.h.
#include "util/utf8.h"

#include <catch2/catch.hpp>

TEST_CASE("code points are counted, a malformed byte as one") {
  CHECK(cu::count_code_points("") == 0);
  CHECK(cu::count_code_points("héllo 日本 😀") == 10);
  CHECK(cu::count_code_points("a\xffz") == 3);
}

TEST_CASE("Latin-1 converts to UTF-8 and back; other characters become ?") {
  CHECK(cu::latin1_to_utf8("caf\xe9") == "café");
  CHECK(cu::utf8_to_latin1("café") == "caf\xe9");
  CHECK(cu::utf8_to_latin1("日本 €") == "?? ?");
}

TEST_CASE("decoding rejects overlong forms, surrogates and values past U+10FFFF") {
  size_t i = 0;
  char32_t cp = 0;
  CHECK_FALSE(cu::next_code_point("\xc0\xaf", &i, &cp));
  i = 0;
  CHECK_FALSE(cu::next_code_point("\xed\xa0\x80", &i, &cp));
  i = 0;
  CHECK_FALSE(cu::next_code_point("\xf4\x90\x80\x80", &i, &cp));
  i = 0;
  REQUIRE(cu::next_code_point("\xf0\x9f\x98\x80", &i, &cp));
  CHECK(cp == 0x1f600);
  CHECK(i == 4);
}
