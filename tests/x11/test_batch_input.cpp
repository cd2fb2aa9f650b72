// A computer_batch's input as a unit: two batches sent back to back never
// interleave their keys or clicks, and while a batch runs a long step other
// requests are answered but other input waits until the batch is done.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/batch.h"
#include "support/harness.h"
#include "support/input_probe.h"
#include "support/jsonrpc.h"

using namespace cu::test;

namespace {

// Number of maximal runs of equal characters ("aabba" has 3).
size_t runs(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 0 || s[i] != s[i - 1]) ++n;
  }
  return n;
}

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

}  // namespace

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
