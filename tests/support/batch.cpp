#include "support/batch.h"

#include <unistd.h>

#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include "support/jsonrpc.h"

namespace cu::test {

using simdjson::dom::element;

namespace {

constexpr uint32_t kXK_b = 0x62;
constexpr uint32_t kXK_c = 0x63;

// U+00B7 MIDDLE DOT, as UTF-8.
const std::string kDot = "\xc2\xb7";

simdjson::dom::array content_of(const json_line& r) {
  simdjson::dom::array a;
  REQUIRE(r.root["result"]["content"].get(a) == simdjson::SUCCESS);
  return a;
}

// The parsed first text block of a batch result.
json_ptr summary_of(const json_line& r) {
  std::string t = text_of(r, 0);
  REQUIRE_FALSE(t.empty());
  return parse_json(t);
}

// The letter a key event's keycode types ('?' for anything else).
char letter_of(input_probe& probe, uint8_t keycode) {
  if (probe.keycode_has(keycode, {kXK_a})) return 'a';
  if (probe.keycode_has(keycode, {kXK_b})) return 'b';
  if (probe.keycode_has(keycode, {kXK_c})) return 'c';
  if (probe.keycode_has(keycode, {kXK_Shift_L, kXK_Shift_R})) return 'S';
  return '?';
}

}  // namespace

// ------------------------------------------------------------- requests ----

std::string act(std::string_view name, std::string_view args) {
  std::string s = R"({"name":")" + std::string(name) + "\"";
  if (!args.empty()) s += R"(,"arguments":)" + std::string(args);
  return s + "}";
}

std::string key_step(std::string_view text) { return act("key", R"({"text":")" + std::string(text) + "\"}"); }

std::string batch_args(const std::vector<std::string>& steps, std::string_view extra) {
  return R"({"actions":)" + json_array(steps) + std::string(extra) + "}";
}

// ------------------------------------------------------------ responses ----

std::string step_prefix(size_t i, std::string_view name) {
  std::string s = "[step ";
  s.append(std::to_string(i)).append(" ").append(kDot).append(" ").append(name).append("] ");
  return s;
}

std::vector<std::string> block_types(const json_line& r) {
  std::vector<std::string> out;
  for (element b : content_of(r)) {
    std::string_view t;
    out.emplace_back(b["type"].get(t) == simdjson::SUCCESS ? std::string(t) : "?");
  }
  return out;
}

size_t image_count(const json_line& r) {
  auto t = block_types(r);
  return size_t(std::count(t.begin(), t.end(), "image"));
}

void check_summary(const json_line& r, const std::string& expected) {
  json_ptr got = summary_of(r);
  json_ptr want = parse_json(expected);
  INFO("summary: " << got->text);
  INFO("expected: " << expected);
  CHECK(json_equal(got->root, want->root));
  element structured;
  const bool has = r.root["result"]["structuredContent"].get(structured) == simdjson::SUCCESS;
  if (!is_error(r)) REQUIRE(has);
  if (!has) {
    WARN("a batch that stopped early carries no structuredContent");
    return;
  }
  INFO("structuredContent: " << simdjson::minify(structured));
  CHECK(json_equal(structured, want->root));
}

// ------------------------------------------------------------ the probe ----

std::string pressed_letters(input_probe& probe, const std::vector<input_event>& events) {
  std::string out;
  std::map<uint8_t, char> cache;
  for (const input_event& e : events) {
    if (e.type != XCB_KEY_PRESS) continue;
    auto it = cache.find(e.detail);
    if (it == cache.end()) it = cache.emplace(e.detail, letter_of(probe, e.detail)).first;
    out += it->second;
  }
  return out;
}

bool wait_pressed(input_probe& probe, const std::string& letters, int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    probe.sync();
    std::string got = pressed_letters(probe, probe.events());
    size_t k = 0;
    for (char c : got) {
      if (k < letters.size() && c == letters[k]) ++k;
    }
    if (k == letters.size()) return true;
    if (now_ms() > deadline) return false;
    usleep(5000);
  }
}

}  // namespace cu::test
