// A trace record's line: whatever text a record holds (typed HTML, a window
// title), its script element ends where the writer ends it, and the JSON
// inside reads back as it was.
#include <catch2/catch.hpp>
#include <simdjson.h>

#include <string>

#include "trace/records.h"

namespace {

// The JSON between the line's opening tag and its "</script>".
std::string inside(const std::string& line) {
  const std::string open = R"(<script type="application/json" class="cu">)";
  REQUIRE(line.rfind(open, 0) == 0);
  const size_t end = line.rfind("</script>\n");
  REQUIRE(end != std::string::npos);
  REQUIRE(end + 10 == line.size());
  return line.substr(open.size(), end - open.size());
}

}  // namespace

TEST_CASE("no text in a record opens or closes markup inside its script element") {
  // "<!--" then "<script" inside a script element makes the HTML parser
  // wait for "-->" and a second "</script>": the record would swallow every
  // record after it. "</" would end it early.
  const std::string typed = R"(<!-- <script>alert(1)</script> --> a < b </script)";
  std::string json = R"({"kind":"call","text":")";
  for (char c : typed) {
    if (c == '"' || c == '\\') json += '\\';
    json += c;
  }
  json += "\"}";
  const std::string line = cu::script_line(json);
  const std::string body = inside(line);
  CHECK(body.find('<') == std::string::npos);

  simdjson::dom::parser parser;
  simdjson::dom::element e;
  REQUIRE(parser.parse(body).get(e) == simdjson::SUCCESS);
  std::string_view text;
  REQUIRE(e["text"].get(text) == simdjson::SUCCESS);
  CHECK(text == typed);
}

TEST_CASE("line and paragraph separators are escaped, other UTF-8 kept") {
  const std::string json = "{\"t\":\"a\xE2\x80\xA8" "b\xE2\x80\xA9" "c \xC3\xA9\"}";
  const std::string body = inside(cu::script_line(json));
  CHECK(body == "{\"t\":\"a\\u2028b\\u2029c \xC3\xA9\"}");
}
