// wait, computer_batch, cancellation, progress, logging and the protocol
// additions of docs/protocol.md, against the real binary on a private Xvfb:
// what a client sees on the pipe and what a probe window sees on screen.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/contract.h"
#include "support/harness.h"
#include "support/input_probe.h"

using namespace cu::test;
using simdjson::dom::element;
using simdjson::dom::element_type;

namespace {

constexpr uint32_t kXK_b = 0x62;
constexpr uint32_t kXK_c = 0x63;

// U+00B7 MIDDLE DOT, as UTF-8.
const std::string kDot = "\xc2\xb7";

// ---------------------------------------------------------------- JSON ----

bool is_number(element e) {
  auto t = e.type();
  return t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
}

// Structural equality: objects compare as unordered maps, numbers by value.
bool json_equal(element a, element b) {
  if (is_number(a) && is_number(b)) {
    double x = 0, y = 0;
    return a.get_double().get(x) == simdjson::SUCCESS &&
           b.get_double().get(y) == simdjson::SUCCESS && x == y;
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case element_type::ARRAY: {
      simdjson::dom::array x = a, y = b;
      if (x.size() != y.size()) return false;
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j) {
        if (!json_equal(*i, *j)) return false;
      }
      return true;
    }
    case element_type::OBJECT: {
      simdjson::dom::object x = a, y = b;
      if (x.size() != y.size()) return false;
      for (auto field : x) {
        element other;
        if (y.at_key(field.key).get(other) != simdjson::SUCCESS) return false;
        if (!json_equal(field.value, other)) return false;
      }
      return true;
    }
    case element_type::STRING: return std::string_view(a) == std::string_view(b);
    case element_type::BOOL: return bool(a) == bool(b);
    case element_type::NULL_VALUE: return true;
    default: return false;
  }
}

std::string method_of(const json_line& j) {
  std::string_view m;
  if (j.root["method"].get(m) != simdjson::SUCCESS) return {};
  return std::string(m);
}

// The id of a message as JSON text ("" when it has none).
std::string id_of(const json_line& j) {
  element id;
  if (j.root["id"].get(id) != simdjson::SUCCESS) return {};
  return std::string(simdjson::minify(id));
}

int64_t error_code(const json_line& r) {
  int64_t code = 0;
  REQUIRE(r.root["error"]["code"].get(code) == simdjson::SUCCESS);
  return code;
}

// ------------------------------------------------------------- requests ----

std::string rpc(std::string_view id, std::string_view method, std::string_view params = "{}") {
  return std::string(R"({"jsonrpc":"2.0","id":)") + std::string(id) + R"(,"method":")" +
         std::string(method) + R"(","params":)" + std::string(params) + "}";
}

// A JSON-RPC batch array of these messages. Built with append: GCC 12 warns
// falsely (-Wrestrict) on "[" + std::string.
std::string json_array(std::initializer_list<std::string> items) {
  std::string s = "[";
  bool first = true;
  for (const std::string& i : items) {
    if (!first) s.append(",");
    s.append(i);
    first = false;
  }
  return s.append("]");
}

std::string tool_call(std::string_view id, std::string_view name, std::string_view args) {
  return rpc(id, "tools/call",
             std::string(R"({"name":")") + std::string(name) + R"(","arguments":)" +
                 std::string(args) + "}");
}

// A tools/call with params._meta.progressToken (token is JSON text).
std::string tool_call_with_token(std::string_view id, std::string_view name,
                                 std::string_view args, std::string_view token) {
  return rpc(id, "tools/call",
             std::string(R"({"name":")") + std::string(name) + R"(","arguments":)" +
                 std::string(args) + R"(,"_meta":{"progressToken":)" + std::string(token) + "}}");
}

std::string cancel_note(std::string_view id) {
  return std::string(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)") +
         std::string(id) + R"(,"reason":"test"}})";
}


// One batch action.
std::string act(std::string_view name, std::string_view args = {}) {
  std::string s = R"({"name":")" + std::string(name) + "\"";
  if (!args.empty()) s += R"(,"arguments":)" + std::string(args);
  return s + "}";
}

std::string actions(const std::vector<std::string>& steps) {
  std::string s = "[";
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i > 0) s += ",";
    s += steps[i];
  }
  return s + "]";
}

// computer_batch arguments; extra is more members (",\"delay_ms\":5").
std::string batch_args(const std::vector<std::string>& steps, std::string_view extra = {}) {
  return R"({"actions":)" + actions(steps) + std::string(extra) + "}";
}

std::string key_step(std::string_view text) { return act("key", R"({"text":")" + std::string(text) + "\"}"); }

std::string step_prefix(size_t i, std::string_view name) {
  std::string s = "[step ";
  s.append(std::to_string(i)).append(" ").append(kDot).append(" ").append(name).append("] ");
  return s;
}

// ---------------------------------------------------------- responses ----

simdjson::dom::array content_of(const json_line& r) {
  simdjson::dom::array a;
  REQUIRE(r.root["result"]["content"].get(a) == simdjson::SUCCESS);
  return a;
}

// The types of a result's content blocks, in order.
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

// The parsed first text block of a batch result.
json_ptr summary_of(const json_line& r) {
  std::string t = text_of(r, 0);
  REQUIRE_FALSE(t.empty());
  return parse_json(t);
}

// Checks that a batch result's summary is exactly `expected` (JSON text) and
// that structuredContent is that same object.
// docs/protocol.md promises structuredContent for successful results; for a
// batch that stopped early (an isError result) it is checked when present.
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

// Reads lines until the response with this id; everything else read on the
// way (notifications, other responses) goes to others. Null on timeout.
json_ptr read_until(server_process& s, std::string_view id_json, std::vector<json_ptr>& others,
                    int timeout_ms = 20000) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    auto line = s.read_line(int(std::max<int64_t>(0, deadline - now_ms())));
    if (!line) return nullptr;
    json_ptr j = parse_json(std::move(*line));
    if (j->root.is_object() && id_of(*j) == id_json && method_of(*j).empty()) return j;
    others.push_back(std::move(j));
  }
}

std::vector<const json_line*> with_method(const std::vector<json_ptr>& lines,
                                          std::string_view method) {
  std::vector<const json_line*> out;
  for (const json_ptr& j : lines) {
    if (j->root.is_object() && method_of(*j) == method) out.push_back(j.get());
  }
  return out;
}

// ------------------------------------------------------------ the probe ----


// The letter a key event's keycode types ('?' for anything else).
char letter_of(input_probe& probe, uint8_t keycode) {
  if (probe.keycode_has(keycode, {kXK_a})) return 'a';
  if (probe.keycode_has(keycode, {kXK_b})) return 'b';
  if (probe.keycode_has(keycode, {kXK_c})) return 'c';
  if (probe.keycode_has(keycode, {kXK_Shift_L, kXK_Shift_R})) return 'S';
  return '?';
}

// The letters of the key presses among events, in order.
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

// Polls the probe (with a deadline) until the letters pressed so far contain
// `letters` in order; the events stay in probe.events(). A batch's steps
// answer only when the whole batch does, so there is no reply to sync on.
bool wait_pressed(input_probe& probe, const std::string& letters, int timeout_ms = 5000) {
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

// Number of maximal runs of equal characters ("aabba" has 3).
size_t runs(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 0 || s[i] != s[i - 1]) ++n;
  }
  return n;
}


}  // namespace

// =================================================================== wait ====

TEST_CASE("wait answers `waited 2s` after two seconds while a later ping is answered at once") {
  xvfb x;
  server_process s(x.display());
  const int64_t start = now_ms();
  s.send(tool_call("\"w\"", "wait", R"({"duration":2})"));
  s.send(rpc("\"p\"", "ping"));
  auto first = s.read_line(5000);
  REQUIRE(first);
  auto pong = parse_json(*first);
  CHECK(id_of(*pong) == "\"p\"");
  CHECK(pong->root["result"].is_object());
  CHECK(now_ms() - start < 1000);
  auto w = s.read_response("\"w\"", 10000);
  REQUIRE(w);
  const int64_t elapsed = now_ms() - start;
  CHECK_FALSE(is_error(*w));
  CHECK(text_of(*w) == "waited 2s");
  CHECK(elapsed >= 1950);
  CHECK(elapsed < 4000);
}

TEST_CASE("wait answers with the duration as given: 0.25 and 0") {
  xvfb x;
  server_process s(x.display());
  int64_t start = now_ms();
  auto r = s.call_tool("wait", R"({"duration":0.25})");
  int64_t elapsed = now_ms() - start;
  CHECK_FALSE(is_error(*r));
  CHECK(text_of(*r) == "waited 0.25s");
  CHECK(elapsed >= 240);
  CHECK(elapsed < 2000);

  start = now_ms();
  r = s.call_tool("wait", R"({"duration":0})");
  CHECK_FALSE(is_error(*r));
  CHECK(text_of(*r) == "waited 0s");
  CHECK(now_ms() - start < 1000);
}

TEST_CASE("wait with a duration out of range or of the wrong type is an isError naming duration") {
  xvfb x;
  server_process s(x.display());
  for (const char* args : {R"({"duration":-1})", R"({"duration":-0.01})", R"({"duration":115.01})",
                           R"({"duration":116})", R"({"duration":1e9})", R"({"duration":"2"})",
                           R"({"duration":true})", R"({"duration":[2]})", R"({"duration":null})",
                           R"({})"}) {
    INFO("wait " << args);
    const int64_t start = now_ms();
    auto r = s.call_tool("wait", args);
    CHECK(is_error(*r));
    std::string text = text_of(*r);
    CHECK(text.find("\"duration\"") != std::string::npos);
    CHECK(text.find('\n') == std::string::npos);
    CHECK(now_ms() - start < 1000);
  }
  CHECK(s.request("ping")->root["result"].is_object());
}

TEST_CASE("a cancelled wait ends at once and is never answered") {
  xvfb x;
  server_process s(x.display());
  // With a progress token the wait reports once a second while it lasts: the
  // reports stopping shows that it ended.
  s.send(tool_call_with_token("\"w\"", "wait", R"({"duration":30})", "\"wc\""));
  auto first = s.read_line(5000);
  REQUIRE(first);
  auto note = parse_json(*first);
  REQUIRE(method_of(*note) == "notifications/progress");
  const int64_t cancelled_at = now_ms();
  s.send(cancel_note("\"w\""));
  s.send(tool_call("\"w2\"", "wait", R"({"duration":0.1})"));
  s.send(rpc("\"p\"", "ping"));
  // Read everything for 2.5 s: the ping and the short wait are answered;
  // nothing comes for the cancelled wait, no progress either.
  std::vector<json_ptr> lines;
  while (auto line = s.read_line(int(std::max<int64_t>(0, cancelled_at + 2500 - now_ms())))) {
    lines.push_back(parse_json(*line));
  }
  std::set<std::string> ids;
  for (const json_ptr& j : lines) {
    INFO(j->text);
    CHECK(method_of(*j) != "notifications/progress");
    if (method_of(*j).empty()) ids.insert(id_of(*j));
  }
  CHECK(ids == std::set<std::string>{"\"p\"", "\"w2\""});
  // Nothing is left in flight: stdin EOF ends the server at once, silently.
  const int64_t eof_at = now_ms();
  s.close_stdin();
  CHECK_FALSE(s.read_line(5000));
  CHECK(s.wait_exit(5000) == 0);
  CHECK(now_ms() - eof_at < 3000);
}

TEST_CASE("a cancel for an unknown or finished id is ignored") {
  xvfb x;
  server_process s(x.display());
  auto r = s.call_tool("wait", R"({"duration":0.05})");
  CHECK(text_of(*r) == "waited 0.05s");
  s.send(cancel_note("1000"));  // The id call_tool used: finished.
  s.send(cancel_note("\"never\""));
  s.send(tool_call("\"w\"", "wait", R"({"duration":0.2})"));
  auto w = s.read_response("\"w\"", 5000);
  REQUIRE(w);
  CHECK(text_of(*w) == "waited 0.2s");
}

TEST_CASE("stdin EOF during a 60 s wait answers it with an isError at once and exits 0") {
  xvfb x;
  server_process s(x.display());
  s.send(tool_call("\"w\"", "wait", R"({"duration":60})"));
  CHECK(s.request("ping")->root["result"].is_object());
  const int64_t start = now_ms();
  s.close_stdin();
  auto r = s.read_response("\"w\"", 10000);
  REQUIRE(r);
  CHECK(now_ms() - start < 3000);
  CHECK(is_error(*r));
  INFO(text_of(*r));
  // "like hold_key": its early answer says it ended early.
  CHECK(text_of(*r).find("ended early") != std::string::npos);
  CHECK(s.wait_exit(10000) == 0);
  CHECK(now_ms() - start < 5000);
}

// ========================================================= computer_batch ====

TEST_CASE("an all-ok batch: the exact summary, prefixed step blocks and the events in order") {
  session t;
  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("mouse_move", R"({"coordinate":[100,200]})"),
                                     act("left_click", R"({"coordinate":[300,400]})"),
                                     act("cursor_position")}));
  INFO(r->text.substr(0, 1500));
  CHECK_FALSE(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":3,"succeeded":3,"failed":0,"skipped":0,"stopped_at":null,)"
                R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
                R"({"index":1,"name":"left_click","ok":true},)"
                R"({"index":2,"name":"cursor_position","ok":true}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "mouse_move") + "moved to " + at(100, 200));
  CHECK(text_of(*r, 2) == step_prefix(1, "left_click") + "left_click at " + at(300, 400));
  const std::string pos = text_of(*r, 3);
  const std::string prefix = step_prefix(2, "cursor_position");
  REQUIRE(pos.rfind(prefix, 0) == 0);
  CHECK(int_array(pos.substr(prefix.size())) == std::vector<int64_t>{300, 400});

  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(keys(events).empty());
  // The move's motion ends at its point, before the click.
  size_t first_button = events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == XCB_BUTTON_PRESS) {
      first_button = i;
      break;
    }
  }
  REQUIRE(first_button < events.size());
  bool reached_move_point = false;
  for (size_t i = 0; i < first_button; ++i) {
    reached_move_point = reached_move_point || (events[i].type == XCB_MOTION_NOTIFY &&
                                                events[i].root_x == device_x(100) &&
                                                events[i].root_y == device_y(200));
  }
  CHECK(reached_move_point);
  auto b = buttons(events);
  REQUIRE(b.size() == 2);
  CHECK(b[0].type == XCB_BUTTON_PRESS);
  CHECK(b[0].detail == 1);
  CHECK(b[0].root_x == device_x(300));
  CHECK(b[0].root_y == device_y(400));
  CHECK(b[1].type == XCB_BUTTON_RELEASE);
  check_nothing_pressed(t.probe);
}

TEST_CASE("a batch stops at a step with out-of-range coordinates and runs nothing after it") {
  session t;
  // The same step on its own, for the exact error text.
  auto alone = t.s.call_tool("left_click", R"({"coordinate":[5000,5000]})");
  REQUIRE(is_error(*alone));
  t.probe.take();

  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("mouse_move", R"({"coordinate":[10,10]})"),
                                     act("left_click", R"({"coordinate":[5000,5000]})"),
                                     key_step("a"),
                                     act("left_click", R"({"coordinate":[50,50]})")}));
  INFO(r->text.substr(0, 1500));
  CHECK(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":4,"succeeded":1,"failed":1,"skipped":2,"stopped_at":1,)"
                R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
                R"({"index":1,"name":"left_click","ok":false}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "mouse_move") + "moved to " + at(10, 10));
  CHECK(text_of(*r, 2) == step_prefix(1, "left_click") + text_of(*alone));

  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(keys(events).empty());
  CHECK(buttons(events).empty());
  CHECK(t.probe.pointer() == std::pair{device_x(10), device_y(10)});
  check_nothing_pressed(t.probe);
}

TEST_CASE("a batch stops at an unknown tool, which is not rejected up front") {
  session t;
  auto alone = t.s.call_tool("frobnicate");
  REQUIRE(is_error(*alone));

  auto r = t.s.call_tool("computer_batch",
                         batch_args({key_step("a"), act("frobnicate", "{}"), key_step("b")}));
  INFO(r->text.substr(0, 1500));
  CHECK(is_error(*r));
  check_summary(*r,
                R"({"batch":{"total":3,"succeeded":1,"failed":1,"skipped":1,"stopped_at":1,)"
                R"("steps":[{"index":0,"name":"key","ok":true},)"
                R"({"index":1,"name":"frobnicate","ok":false}]}})");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text"});
  CHECK(text_of(*r, 1) == step_prefix(0, "key") + "pressed a");
  CHECK(text_of(*r, 2) == step_prefix(1, "frobnicate") + text_of(*alone));
  CHECK(text_of(*r, 2).find("frobnicate", step_prefix(1, "frobnicate").size()) != std::string::npos);

  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "a");
  CHECK(keys(events).size() == 2);
  check_nothing_pressed(t.probe);
}

TEST_CASE("a nested batch or a step's bad arguments fail that step, as in the reference server") {
  // Only a malformed actions list is refused as a whole; what concerns one
  // step stops the batch at that step, with the usual summary first.
  session t;
  const std::string ka = key_step("a");
  const std::string nested = act("computer_batch", "{\"actions\":[" + ka + "]}");

  auto first = t.s.call_tool("computer_batch", batch_args({nested, ka}));
  INFO(first->text.substr(0, 1500));
  CHECK(is_error(*first));
  check_summary(*first,
                R"({"batch":{"total":2,"succeeded":0,"failed":1,"skipped":1,"stopped_at":0,)"
                R"("steps":[{"index":0,"name":"computer_batch","ok":false}]}})");
  CHECK(block_types(*first) == std::vector<std::string>{"text", "text"});
  CHECK(text_of(*first, 1).rfind(step_prefix(0, "computer_batch"), 0) == 0);
  CHECK_THAT(text_of(*first, 1), Catch::Contains("cannot run inside a computer_batch"));
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(events.empty());

  struct step_case {
    std::string bad;
    const char* name;
    const char* says;
  };
  for (const step_case& c : {step_case{nested, "computer_batch", "cannot run inside"},
                             step_case{R"({"name":"key","arguments":[1]})", "key", "\"arguments\""},
                             step_case{R"({"name":"key","arguments":"a"})", "key", "\"arguments\""},
                             step_case{R"({"name":"key","arguments":{"text":5}})", "key", "\"text\""}}) {
    INFO(c.bad);
    auto r = t.s.call_tool("computer_batch", batch_args({ka, c.bad, key_step("b")}));
    INFO(r->text.substr(0, 1500));
    CHECK(is_error(*r));
    check_summary(*r, std::string(R"({"batch":{"total":3,"succeeded":1,"failed":1,"skipped":1,"stopped_at":1,)"
                                  R"("steps":[{"index":0,"name":"key","ok":true},{"index":1,"name":")") +
                          c.name + R"(","ok":false}]}})");
    CHECK(text_of(*r, 2).rfind(step_prefix(1, c.name), 0) == 0);
    CHECK_THAT(text_of(*r, 2), Catch::Contains(c.says));
    events = t.probe.take();
    INFO(describe(events));
    CHECK(pressed_letters(t.probe, events) == "a");
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("a batch rejected up front changes nothing") {
  session t;
  const std::string ka = key_step("a");
  const std::string move = act("mouse_move", R"({"coordinate":[700,500]})");
  std::vector<std::string> too_long(101, ka);
  struct bad {
    std::string args;
    const char* names;  // A word the message must contain.
  };
  const bad cases[] = {
      {R"({"actions":[]})", "actions"},
      {R"({})", "actions"},
      {R"({"actions":"key a"})", "actions"},
      {R"({"actions":{"name":"key"}})", "actions"},
      {"{\"actions\":" + actions(too_long) + "}", "actions"},
      {batch_args({move, ka}, R"(,"delay_ms":-1)"), "delay_ms"},
      {batch_args({move, ka}, R"(,"delay_ms":10001)"), "delay_ms"},
      {batch_args({move, ka}, R"(,"delay_ms":1.5)"), "delay_ms"},
      {batch_args({move, ka}, R"(,"delay_ms":"10")"), "delay_ms"},
      {batch_args({move, ka}, R"(,"screenshot":"sometimes")"), "screenshot"},
      {batch_args({move, ka}, R"(,"screenshot":true)"), "screenshot"},
      {batch_args({move, ka}, R"(,"screenshot":"each","delay_ms":-5)"), "delay_ms"},
      {batch_args({move, ka, "42"}), "actions"},
      {batch_args({move, ka, "\"key\""}), "actions"},
      {batch_args({move, ka, "[\"key\"]"}), "actions"},
      {batch_args({move, ka, R"({"arguments":{"text":"a"}})"}), "name"},
      {batch_args({move, ka, R"({"name":5})"}), "name"},
      {batch_args({move, ka, R"({"name":null})"}), "name"},
  };
  for (const bad& b : cases) {
    INFO("computer_batch " << b.args.substr(0, 300));
    auto r = t.s.call_tool("computer_batch", b.args);
    INFO(r->text.substr(0, 600));
    CHECK(is_error(*r));
    const std::string text = text_of(*r);
    CHECK_FALSE(text.empty());
    CHECK(text.find(b.names) != std::string::npos);
    auto events = t.probe.take();
    INFO(describe(events));
    CHECK(events.empty());
    check_nothing_pressed(t.probe);
  }
  // The session is intact: the same steps in a good batch run.
  auto ok = t.s.call_tool("computer_batch", batch_args({move, ka}));
  CHECK_FALSE(is_error(*ok));
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "a");
  CHECK(t.probe.pointer() == std::pair{device_x(700), device_y(500)});
}

TEST_CASE("screenshot \"each\" adds one image after every non-screenshot step") {
  session t;
  SECTION("three input steps give three images, each after its step's text") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       key_step("a"), act("cursor_position")},
                                      R"(,"screenshot":"each")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image", "text", "image",
                                                      "text", "image"});
    CHECK(text_of(*r, 1).rfind(step_prefix(0, "mouse_move"), 0) == 0);
    CHECK(text_of(*r, 3).rfind(step_prefix(1, "key"), 0) == 0);
    CHECK(text_of(*r, 5).rfind(step_prefix(2, "cursor_position"), 0) == 0);
    CHECK(image_count(*r) == 3);
    for (size_t i : {size_t(2), size_t(4), size_t(6)}) {
      std::string_view data;
      REQUIRE(r->root["result"]["content"].at(i)["data"].get(data) == simdjson::SUCCESS);
      CHECK(decode_png_base64(data).width == 1366);
    }
    check_summary(*r,
                  R"({"batch":{"total":3,"succeeded":3,"failed":0,"skipped":0,"stopped_at":null,)"
                  R"("steps":[{"index":0,"name":"mouse_move","ok":true},)"
                  R"({"index":1,"name":"key","ok":true},)"
                  R"({"index":2,"name":"cursor_position","ok":true}]}})");
  }
  SECTION("a screenshot step brings its own image and gets no second one") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("screenshot"), act("mouse_move", R"({"coordinate":[5,5]})")},
                                      R"(,"screenshot":"each")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "image", "text", "image"});
  }
}

TEST_CASE("screenshot \"final\" adds exactly one image, after the last executed step") {
  session t;
  SECTION("after three input steps") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       key_step("a"), act("cursor_position")},
                                      R"(,"screenshot":"final")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "text", "image"});
    CHECK(image_count(*r) == 1);
  }
  SECTION("none more when the last step is a successful screenshot") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       act("screenshot")},
                                      R"(,"screenshot":"final")"));
    INFO(r->text.substr(0, 800));
    CHECK_FALSE(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image"});
  }
  SECTION("after the failing step when the batch stops early") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})"),
                                       act("left_click", R"({"coordinate":[1366,0]})"),
                                       key_step("a")},
                                      R"(,"screenshot":"final")"));
    INFO(r->text.substr(0, 800));
    CHECK(is_error(*r));
    CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "text", "image"});
    CHECK(keys(t.probe.take()).empty());
  }
  SECTION("none with the default \"none\"") {
    auto r = t.s.call_tool("computer_batch",
                           batch_args({act("mouse_move", R"({"coordinate":[20,30]})")},
                                      R"(,"screenshot":"none")"));
    CHECK_FALSE(is_error(*r));
    CHECK(image_count(*r) == 0);
  }
}

TEST_CASE("delay_ms pauses at least that long between steps and not after the last") {
  session t;
  const int64_t start = now_ms();
  auto r = t.s.call_tool("computer_batch",
                         batch_args({key_step("a"), key_step("b"), key_step("c")},
                                    R"(,"delay_ms":300)"));
  const int64_t elapsed = now_ms() - start;
  CHECK_FALSE(is_error(*r));
  CHECK(elapsed >= 600);
  auto k = keys(t.probe.take());
  INFO(describe(k));
  REQUIRE(k.size() == 6);
  CHECK(pressed_letters(t.probe, k) == "abc");
  // X server time: each press at least the delay after the previous step's
  // release (milliseconds truncated, hence 299).
  CHECK(k[2].time - k[1].time >= 299);
  CHECK(k[4].time - k[3].time >= 299);

  const int64_t single = now_ms();
  auto one = t.s.call_tool("computer_batch", batch_args({key_step("a")}, R"(,"delay_ms":2000)"));
  CHECK_FALSE(is_error(*one));
  CHECK(now_ms() - single < 1500);

  auto zero = t.s.call_tool("computer_batch", batch_args({key_step("a")}, R"(,"delay_ms":0)"));
  CHECK_FALSE(is_error(*zero));
  auto limit = t.s.call_tool("computer_batch", batch_args({key_step("a")}, R"(,"delay_ms":10000)"));
  CHECK_FALSE(is_error(*limit));
  CHECK(pressed_letters(t.probe, t.probe.take()) == "aaa");
}

TEST_CASE("a wait step runs inside a batch and a batch sees the session its steps leave") {
  session t;
  const int64_t start = now_ms();
  auto r = t.s.call_tool("computer_batch",
                         batch_args({act("wait", R"({"duration":0.3})"),
                                     act("screenshot"),
                                     act("mouse_move", R"({"coordinate":[1365,767]})")}));
  INFO(r->text.substr(0, 600));
  CHECK_FALSE(is_error(*r));
  CHECK(now_ms() - start >= 290);
  CHECK(text_of(*r, 1) == step_prefix(0, "wait") + "waited 0.3s");
  CHECK(block_types(*r) == std::vector<std::string>{"text", "text", "image", "text"});
  CHECK(text_of(*r, 3) == step_prefix(2, "mouse_move") + "moved to " + at(1365, 767));
  CHECK(t.probe.pointer() == std::pair{device_x(1365), device_y(767)});
}

// ======================================================= input as a unit ====

// Sends batches A and B back to back, in one write, and waits for both to
// succeed.
void send_two_batches(session& t, int round, const std::vector<std::string>& a_steps,
                      const std::vector<std::string>& b_steps) {
  const std::string ida = "\"A" + std::to_string(round) + "\"";
  const std::string idb = "\"B" + std::to_string(round) + "\"";
  t.s.write_raw(tool_call(ida, "computer_batch", batch_args(a_steps)) + "\n" +
                tool_call(idb, "computer_batch", batch_args(b_steps)) + "\n");
  auto ra = t.s.read_response(ida, 30000);
  auto rb = t.s.read_response(idb, 30000);
  REQUIRE(ra);
  REQUIRE(rb);
  CHECK_FALSE(is_error(*ra));
  CHECK_FALSE(is_error(*rb));
}

TEST_CASE("two batches of key steps sent back to back never interleave") {
  session t;
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    std::vector<std::string> a_steps, b_steps;
    for (int i = 0; i < 10; ++i) {
      // type pauses between characters: a chance for the other batch to
      // slip in, if anything let it.
      a_steps.push_back(i % 2 == 0 ? key_step("a") : act("type", R"({"text":"aa"})"));
      b_steps.push_back(i % 2 == 0 ? key_step("b") : act("type", R"({"text":"bb"})"));
    }
    send_two_batches(t, round, a_steps, b_steps);
    auto events = t.probe.take();
    const std::string letters = pressed_letters(t.probe, events);
    INFO("letters pressed: " << letters);
    CHECK(std::count(letters.begin(), letters.end(), 'a') == 15);
    CHECK(std::count(letters.begin(), letters.end(), 'b') == 15);
    CHECK(letters.size() == 30);
    CHECK(runs(letters) == 2);
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("two batches of clicks sent back to back never interleave") {
  session t;
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    std::vector<std::string> a_steps, b_steps;
    for (int i = 0; i < 10; ++i) {
      a_steps.push_back(act("left_click", "{\"coordinate\":" + coord(100 + i, 100) + "}"));
      b_steps.push_back(act("left_click", "{\"coordinate\":" + coord(900 + i, 600) + "}"));
    }
    send_two_batches(t, round, a_steps, b_steps);
    auto b = buttons(t.probe.take());
    std::string sides;
    for (const input_event& e : b) sides += e.root_y == device_y(100) ? 'A' : e.root_y == device_y(600) ? 'B' : '?';
    INFO("button events by batch: " << sides);
    CHECK(b.size() == 40);
    CHECK(std::count(sides.begin(), sides.end(), 'A') == 20);
    CHECK(std::count(sides.begin(), sides.end(), 'B') == 20);
    CHECK(runs(sides) == 2);
    // Within each batch, the clicks come in step order.
    std::vector<int> a_x, b_x;
    for (const input_event& e : b) {
      if (e.type != XCB_BUTTON_PRESS) continue;
      (e.root_y == device_y(100) ? a_x : b_x).push_back(e.root_x);
    }
    REQUIRE(a_x.size() == 10);
    REQUIRE(b_x.size() == 10);
    for (int i = 0; i < 10; ++i) {
      CHECK(a_x[size_t(i)] == device_x(100 + i));
      CHECK(b_x[size_t(i)] == device_x(900 + i));
    }
    check_nothing_pressed(t.probe);
  }
}

TEST_CASE("during a batch's long step other requests are answered but other input waits for it") {
  session t;
  const int64_t start = now_ms();
  t.s.send(tool_call("\"batch\"", "computer_batch",
                     batch_args({key_step("a"), act("wait", R"({"duration":1})"), key_step("b")})));
  // Once a is typed the batch holds the input actor.
  REQUIRE(wait_pressed(t.probe, "a"));
  t.s.send(tool_call("\"shot\"", "screenshot", "{}"));
  t.s.send(rpc("\"ping\"", "ping"));
  t.s.send(tool_call("\"click\"", "left_click", R"({"coordinate":[400,300]})"));
  t.s.send(tool_call("\"w\"", "wait", R"({"duration":0.1})"));
  std::vector<std::string> order;
  std::map<std::string, json_ptr> by_id;
  while (order.size() < 5) {
    auto line = t.s.read_line(10000);
    REQUIRE(line);
    auto j = parse_json(*line);
    std::string id = id_of(*j);
    order.push_back(id);
    by_id[id] = std::move(j);
  }
  std::string order_text;
  for (auto& id : order) order_text += id + " ";
  INFO("response order: " << order_text);
  auto pos = [&](const char* id) {
    return size_t(std::find(order.begin(), order.end(), id) - order.begin());
  };
  // Screenshot, ping and wait are not held up by the batch.
  CHECK(pos("\"shot\"") < pos("\"batch\""));
  CHECK(pos("\"ping\"") < pos("\"batch\""));
  CHECK(pos("\"w\"") < pos("\"batch\""));
  REQUIRE(by_id.count("\"batch\""));
  REQUIRE(by_id.count("\"click\""));
  CHECK_FALSE(is_error(*by_id["\"batch\""]));
  CHECK_FALSE(is_error(*by_id["\"click\""]));
  CHECK(image_of(*by_id["\"shot\""]).width == 1366);
  CHECK(now_ms() - start >= 950);

  // The click's events all come after the batch's b.
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "ab");
  size_t last_key = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == XCB_KEY_PRESS || events[i].type == XCB_KEY_RELEASE) last_key = i;
  }
  REQUIRE(keys(events).size() == 4);
  for (size_t i = 0; i < last_key; ++i) {
    INFO("event " << i);
    CHECK((events[i].type == XCB_KEY_PRESS || events[i].type == XCB_KEY_RELEASE));
  }
  auto b = buttons(events);
  REQUIRE(b.size() == 2);
  CHECK(b[0].root_x == device_x(400));
  CHECK(b[0].root_y == device_y(300));
  check_nothing_pressed(t.probe);
}

// ============================================================ cancelling ====

TEST_CASE("a batch cancelled during its wait step is never answered and runs no further step") {
  session t;
  t.s.send(tool_call("\"cb\"", "computer_batch",
                     batch_args({key_step("a"), act("wait", R"({"duration":2})"), key_step("b")})));
  REQUIRE(wait_pressed(t.probe, "a"));
  const int64_t cancelled_at = now_ms();
  t.s.send(cancel_note("\"cb\""));
  // Another caller's input runs at once: the batch let go of the actor
  // without waiting out its step.
  auto c = t.s.call_tool("key", R"({"text":"c"})");
  CHECK_FALSE(is_error(*c));
  CHECK(now_ms() - cancelled_at < 1000);
  // Past the time b would have been pressed: no response and no b.
  CHECK(t.s.read_response("\"cb\"", 2500) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "ac");
  check_nothing_pressed(t.probe);
  CHECK(t.s.request("ping")->root["result"].is_object());
}

TEST_CASE("a batch cancelled during a hold_key step releases the key at once") {
  session t;
  t.s.send(tool_call("\"hb\"", "computer_batch",
                     batch_args({act("hold_key", R"({"text":"shift","duration":5})"),
                                 key_step("b")})));
  REQUIRE(wait_key_down(t.probe, {kXK_Shift_L, kXK_Shift_R}, 3000));
  const int64_t cancelled_at = now_ms();
  t.s.send(cancel_note("\"hb\""));
  // An input call answered after the cancel sees the keys already up.
  auto pos = t.s.call_tool("cursor_position");
  CHECK_FALSE(is_error(*pos));
  check_nothing_pressed(t.probe);
  CHECK(now_ms() - cancelled_at < 2000);
  CHECK(t.s.read_response("\"hb\"", 1000) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  auto k = keys(events);
  REQUIRE(k.size() == 2);
  CHECK(k[0].type == XCB_KEY_PRESS);
  CHECK(k[1].type == XCB_KEY_RELEASE);
  CHECK(pressed_letters(t.probe, events) == "S");
  check_nothing_pressed(t.probe);
}

TEST_CASE("a batch cancelled while it waits for the actor is never answered and does nothing") {
  session t;
  // The first batch holds the actor for 1.5 s; the second, queued behind it,
  // is cancelled before it starts.
  t.s.send(tool_call("\"first\"", "computer_batch",
                     batch_args({key_step("a"), act("hold_key", R"({"text":"shift","duration":1.5})")})));
  REQUIRE(wait_pressed(t.probe, "a"));
  t.s.send(tool_call("\"second\"", "computer_batch", batch_args({key_step("b"), key_step("b")})));
  t.s.send(cancel_note("\"second\""));
  auto first = t.s.read_response("\"first\"", 10000);
  REQUIRE(first);
  CHECK_FALSE(is_error(*first));
  CHECK(t.s.read_response("\"second\"", 1000) == nullptr);
  auto events = t.probe.take();
  INFO(describe(events));
  CHECK(pressed_letters(t.probe, events) == "aS");
  check_nothing_pressed(t.probe);
}

// ============================================================== progress ====

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

// ============================================================== protocol ====

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
  auto init = s.request("initialize", R"({"protocolVersion":"2025-03-26"})");
  std::string_view version;
  REQUIRE(init->root["result"]["protocolVersion"].get(version) == simdjson::SUCCESS);
  REQUIRE(version == "2025-03-26");
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
  auto init = s.request("initialize", R"({"protocolVersion":"2025-06-18"})");
  std::string_view version;
  REQUIRE(init->root["result"]["protocolVersion"].get(version) == simdjson::SUCCESS);
  REQUIRE(version == "2025-06-18");
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
  for (const char* m : {"server/discover", "resources/list", "prompts/list"}) {
    INFO(m);
    auto r = s.request(m);
    CHECK(error_code(*r) == -32601);
  }
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
  REQUIRE(tools.size() == 24);
  size_t i = 0;
  for (element t : tools) {
    std::string_view name;
    REQUIRE(t["name"].get(name) == simdjson::SUCCESS);
    INFO(name);
    CHECK(name == kContractTools[i++]);
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
