// The waits on the screen (the vision toolset) against a real Xvfb:
// wait_for_change answering a change the test's own X client draws, with
// its rectangle, and ignoring changes elsewhere; wait_until_stable while a
// window animates, then stops; screenshot_find's until appear and
// disappear; timeouts, cancellation and stdin's end. Every wait is synced
// on its "watching" progress notification (the moment from which drawing
// counts), never on a sleep.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/jsonrpc.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

const std::map<std::string, std::string> kVisionOn = {{"CU_TOOLSETS", "vision"}};

simdjson::dom::element structured(const json_line& r) {
  INFO(r.text);
  simdjson::dom::element e;
  REQUIRE(r.root["result"]["structuredContent"].get(e) == simdjson::SUCCESS);
  return e;
}

// The image rectangle a device rectangle covers at 1920x1080 -> 1366x768,
// rounded outwards as the server maps it.
struct box {
  int x, y, w, h;
};
box to_image(int x, int y, int w, int h) {
  const double sx = 1366.0 / 1920, sy = 768.0 / 1080;
  const int x0 = int(std::floor(x * sx)), y0 = int(std::floor(y * sy));
  const int x1 = int(std::ceil((x + w) * sx)), y1 = int(std::ceil((y + h) * sy));
  return box{x0, y0, x1 - x0, y1 - y0};
}

void check_box(simdjson::dom::element r, box want) {
  CHECK(std::abs(num(r, "x") - want.x) <= 1);
  CHECK(std::abs(num(r, "y") - want.y) <= 1);
  CHECK(std::abs(num(r, "width") - want.w) <= 2);
  CHECK(std::abs(num(r, "height") - want.h) <= 2);
}

}  // namespace

TEST_CASE("wait_for_change answers a change drawn in its region, with the rectangle, and not "
          "one drawn elsewhere") {
  xvfb x(1920, 1080);
  x_client painter(x.display());
  xcb_window_t win = painter.create_window(400, 300, 600, 400, rgb{90, 90, 90});
  xcb_window_t other = painter.create_window(1300, 100, 300, 200, rgb{20, 20, 20});
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");  // The session: 1366x768 for 1920x1080.

  // The region is the window's: device (400, 300) to (1000, 700).
  const box area = to_image(400, 300, 600, 400);
  const std::string args = "{\"region\":" + region(area.x, area.y, area.x + area.w,
                                                   area.y + area.h) +
                           ",\"timeout\":20}";
  std::vector<json_ptr> others;
  start_watching(s, "\"c\"", "wait_for_change", args, others);
  // Drawn outside the region: not an answer.
  painter.fill(other, 10, 10, 50, 50, rgb{200, 0, 0});
  painter.sync();
  // Drawn inside: the answer, with this rectangle.
  painter.fill(win, 150, 100, 120, 80, rgb{0, 200, 0});
  painter.sync();
  const int64_t drawn = now_ms();
  json_ptr r = read_until(s, "\"c\"", others, 20000);
  REQUIRE(r);
  const int64_t answered = now_ms();
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  simdjson::dom::element st = structured(*r);
  bool changed = false;
  REQUIRE(st["changed"].get(changed) == simdjson::SUCCESS);
  CHECK(changed);
  simdjson::dom::element device = st["device"];
  CHECK(num(device, "x") == 550);
  CHECK(num(device, "y") == 400);
  CHECK(num(device, "width") == 120);
  CHECK(num(device, "height") == 80);
  check_box(st["rect"], to_image(550, 400, 120, 80));
  check_box(st["watched"], area);
  // Drawn and answered: the time is the bench's to measure (bench-protocol
  // --vision); here only that the drawing, not the timeout, ended it.
  CHECK(answered - drawn < 10000);
}

TEST_CASE("wait_for_change on a window, with quiet_ms, covers the whole change; a timeout is "
          "an error") {
  xvfb x(1920, 1080);
  x_client painter(x.display());
  xcb_window_t win = painter.create_app_window(200, 200, 400, 300, rgb{90, 90, 90});
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");

  std::vector<json_ptr> others;
  start_watching(s, "\"w\"", "wait_for_change",
                 "{\"window\":\"" + hex(win) + "\",\"quiet_ms\":300,\"timeout\":20}", others);
  // Two strokes: the answer, after the quiet, covers both.
  painter.fill(win, 10, 10, 20, 20, rgb{250, 0, 0});
  painter.fill(win, 300, 250, 40, 30, rgb{0, 0, 250});
  painter.sync();
  json_ptr r = read_until(s, "\"w\"", others, 20000);
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  simdjson::dom::element st = structured(*r);
  simdjson::dom::element device = st["device"];
  CHECK(num(device, "x") == 210);
  CHECK(num(device, "y") == 210);
  CHECK(num(device, "width") == 330);
  CHECK(num(device, "height") == 270);
  // In the image of a screenshot of the window (400x300: not scaled).
  simdjson::dom::element rect = st["rect"];
  CHECK(num(rect, "x") == 10);
  CHECK(num(rect, "y") == 10);
  CHECK(num(rect, "width") == 330);
  CHECK(num(rect, "height") == 270);
  std::string_view window;
  CHECK(st["window"].get(window) == simdjson::SUCCESS);
  CHECK(window == hex(win));
  bool settled = false;
  CHECK(st["settled"].get(settled) == simdjson::SUCCESS);
  CHECK(settled);

  // Nothing drawn: the timeout, as an error.
  const std::string text = error_text(s, "wait_for_change", "{\"timeout\":0.3}");
  CHECK(contains(text, "no change within 0.3s"));
  // A window that is gone.
  CHECK(contains(error_text(s, "wait_for_change", "{\"window\":\"0x1fffff0\"}"),
                 "no longer exists"));
}

TEST_CASE("wait_until_stable answers only once an animation has stopped") {
  xvfb x(1920, 1080);
  x_client painter(x.display());
  xcb_window_t anim = painter.create_window(100, 100, 300, 200, rgb{40, 40, 40});
  xcb_window_t still = painter.create_app_window(900, 500, 300, 200, rgb{40, 40, 40});
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");

  // Quiet for 1.5 s counts as stable; the frames come every 20 ms, so only
  // a stall of the test far beyond any seen could end the wait early.
  std::vector<json_ptr> others;
  start_watching(s, "\"st\"", "wait_until_stable", "{\"quiet_ms\":1500,\"timeout\":60}", others);
  const int64_t started = now_ms();
  int64_t last_frame = 0;
  for (int i = 0; i < 40; ++i) {
    painter.fill(anim, (i * 7) % 250, (i * 5) % 150, 50, 50,
                 rgb{uint8_t(i * 6), 100, uint8_t(250 - i * 6)});
    painter.sync();
    last_frame = now_ms();
    // Not answered while it moves.
    auto early = s.read_line(20);
    if (early) {
      json_ptr j = parse_json(*early);
      INFO(j->text);
      REQUIRE(id_of(*j) != "\"st\"");
      others.push_back(std::move(j));
    }
  }
  json_ptr r = read_until(s, "\"st\"", others, 60000);
  REQUIRE(r);
  const int64_t answered = now_ms();
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  CHECK(answered - last_frame >= 1400);
  simdjson::dom::element st = structured(*r);
  bool changed = false;
  REQUIRE(st["changed"].get(changed) == simdjson::SUCCESS);
  CHECK(changed);
  double after = 0;
  REQUIRE(st["after"].get(after) == simdjson::SUCCESS);
  CHECK(after * 1000 >= double(last_frame - started) + 1400);
  // The change is inside the animated window.
  simdjson::dom::element rect = st["rect"];
  const box w = to_image(100, 100, 300, 200);
  CHECK(num(rect, "x") >= w.x);
  CHECK(num(rect, "y") >= w.y);
  CHECK(num(rect, "x") + num(rect, "width") <= w.x + w.w);
  CHECK(num(rect, "y") + num(rect, "height") <= w.y + w.h);

  // A window that does not move is stable after its quiet, whatever moves
  // elsewhere.
  start_watching(s, "\"st2\"", "wait_until_stable",
                 "{\"window\":\"" + hex(still) + "\",\"quiet_ms\":200,\"timeout\":60}", others);
  for (int i = 0; i < 5; ++i) {
    painter.fill(anim, i * 10, 0, 10, 10, rgb{250, 250, 0});
    painter.sync();
  }
  r = read_until(s, "\"st2\"", others, 60000);
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  REQUIRE(structured(*r)["changed"].get(changed) == simdjson::SUCCESS);
  CHECK_FALSE(changed);

  // Never quiet within the timeout: an error saying where it changed.
  start_watching(s, "\"st3\"", "wait_until_stable", "{\"quiet_ms\":5000,\"timeout\":0.5}",
                 others);
  painter.fill(anim, 0, 0, 30, 30, rgb{0, 250, 250});
  painter.sync();
  r = read_until(s, "\"st3\"", others, 20000);
  REQUIRE(r);
  CHECK(is_error(*r));
  CHECK(contains(text_of(*r), "not stable within 0.5s"));
}

TEST_CASE("screenshot_find until appear answers once the template is drawn; until disappear "
          "once it is gone") {
  xvfb x(1024, 768);
  x_client painter(x.display());
  // A scene of blocks to cut a template from.
  auto paint = [&](int left, int top) {
    xcb_window_t w = painter.create_window(left, top, 300, 200, rgb{250, 250, 250});
    painter.fill(w, 40, 30, 60, 40, rgb{200, 30, 30});
    painter.fill(w, 100, 30, 60, 40, rgb{30, 200, 30});
    painter.fill(w, 40, 70, 60, 40, rgb{30, 30, 200});
    painter.fill(w, 100, 70, 60, 40, rgb{220, 220, 30});
    painter.sync();
    return w;
  };
  xcb_window_t first = paint(100, 100);
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  json_ptr z = ok_call(s, "zoom", "{\"region\":[130,120,270,220]}");
  std::string_view data;
  REQUIRE(z->root["result"]["content"].at(0)["data"].get(data) == simdjson::SUCCESS);
  const std::string png(data);
  xcb_destroy_window(painter.connection(), first);
  painter.sync();

  std::vector<json_ptr> others;
  start_watching(s, "\"a\"", "screenshot_find",
                 "{\"template\":\"" + png + "\",\"until\":\"appear\",\"timeout\":30}", others);
  xcb_window_t second = paint(500, 400);
  json_ptr r = read_until(s, "\"a\"", others, 30000);
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  simdjson::dom::element st = structured(*r);
  simdjson::dom::array m;
  REQUIRE(st["matches"].get(m) == simdjson::SUCCESS);
  REQUIRE(m.size() >= 1);
  CHECK(num(m.at(0), "x") == 530);
  CHECK(num(m.at(0), "y") == 420);
  std::string_view until;
  CHECK(st["until"].get(until) == simdjson::SUCCESS);
  CHECK(until == "appear");
  CHECK(num(st, "checks") >= 1);

  start_watching(s, "\"d\"", "screenshot_find",
                 "{\"template\":\"" + png + "\",\"until\":\"disappear\",\"timeout\":30}", others);
  xcb_destroy_window(painter.connection(), second);
  painter.sync();
  r = read_until(s, "\"d\"", others, 30000);
  REQUIRE(r);
  INFO(r->text);
  REQUIRE_FALSE(is_error(*r));
  REQUIRE(structured(*r)["matches"].get(m) == simdjson::SUCCESS);
  CHECK(m.size() == 0);

  // Never there: the timeout, as an error.
  std::string text = error_text(
      s, "screenshot_find", "{\"template\":\"" + png + "\",\"until\":\"appear\",\"timeout\":0.4}");
  CHECK(contains(text, "did not appear within 0.4s"));
}

TEST_CASE("wait_until_stable whose quiet outlasts its timeout says nothing was drawn, not that "
          "the screen still changed") {
  xvfb x(1024, 768);
  server_process s(x.display(), kVisionOn);
  ok_call(s, "screenshot", "{}");
  // Nothing draws on this screen: the timeout ends the wait first.
  s.send(tool_call("\"q\"", "wait_until_stable", "{\"quiet_ms\":10000,\"timeout\":0.1}"));
  json_ptr r = s.read_response("\"q\"", 20000);
  REQUIRE(r);
  INFO(r->text);
  CHECK(is_error(*r));
  const std::string text = text_of(*r);
  CHECK(contains(text, "not stable within 0.1s (timeout), though nothing was drawn"));
  CHECK(contains(text, "less than the 10s asked"));
  CHECK_FALSE(contains(text, "still changing"));
  // The fields of a stable answer say the same: not stable, no change.
  simdjson::dom::element st = structured(*r);
  bool stable = true, changed = true;
  REQUIRE(st["stable"].get(stable) == simdjson::SUCCESS);
  CHECK_FALSE(stable);
  REQUIRE(st["changed"].get(changed) == simdjson::SUCCESS);
  CHECK_FALSE(changed);
  CHECK(st["rect"].is_null());
  CHECK(num(st, "quiet_ms") == 10000);
}

TEST_CASE("screenshot_find until, when the X server goes away, says so and not that its time "
          "ran out") {
  auto x = std::make_unique<xvfb>(1024, 768, unused_display_number());
  server_process s(x->display(), kVisionOn);
  std::string png;
  {
    x_client painter(x->display());
    xcb_window_t w = painter.create_window(100, 100, 300, 200, rgb{250, 250, 250});
    painter.fill(w, 40, 30, 60, 40, rgb{200, 30, 30});
    painter.fill(w, 100, 30, 60, 40, rgb{30, 200, 30});
    painter.fill(w, 40, 70, 60, 40, rgb{30, 30, 200});
    painter.sync();
    ok_call(s, "screenshot", "{}");
    json_ptr z = ok_call(s, "zoom", "{\"region\":[130,120,270,220]}");
    std::string_view data;
    REQUIRE(z->root["result"]["content"].at(0)["data"].get(data) == simdjson::SUCCESS);
    png = std::string(data);
    xcb_destroy_window(painter.connection(), w);
    painter.sync();
  }
  // The server's debug lines say when a look found nothing: the watch is
  // then waiting for drawing, with no look out, which is when the X
  // server's end used to be taken for the timeout.
  REQUIRE(s.request("logging/setLevel", R"({"level":"debug"})"));
  std::vector<json_ptr> others;
  start_watching(s, "\"gone\"", "screenshot_find",
                 "{\"template\":\"" + png + "\",\"until\":\"appear\",\"timeout\":60}", others);
  auto looked = [](const json_line& m) {
    std::string_view data;
    return method_of(m) == "notifications/message" &&
           m.root["params"]["data"].get(data) == simdjson::SUCCESS &&
           data.find("look 1, the template did not appear yet") != std::string_view::npos;
  };
  const int64_t deadline = now_ms() + 20000;
  bool seen = false;
  for (const json_ptr& o : others) seen = seen || looked(*o);
  while (!seen) {
    REQUIRE(now_ms() < deadline);
    auto line = s.read_line(20000);
    REQUIRE(line);
    json_ptr j = parse_json(*line);
    REQUIRE(id_of(*j) != "\"gone\"");
    seen = looked(*j);
  }
  const int64_t killed = now_ms();
  x.reset();
  json_ptr r = read_until(s, "\"gone\"", others, 20000);
  REQUIRE(r);
  INFO(r->text);
  CHECK(now_ms() - killed < 10000);  // Long before the 60 s timeout.
  CHECK(is_error(*r));
  const std::string text = text_of(*r);
  CHECK(contains(text, "screenshot_find ended early: the X server stopped reporting changes "
                       "(it went away)"));
  CHECK(contains(text, "(after 1 look)"));
  CHECK_FALSE(contains(text, "did not appear"));
}

TEST_CASE("a watch ends silently when cancelled, and with an error when stdin closes") {
  xvfb x(1024, 768);
  server_process s(x.display(), kVisionOn);
  std::vector<json_ptr> others;
  start_watching(s, "\"k\"", "wait_for_change", "{\"timeout\":60}", others);
  s.send(cancel_note("\"k\""));
  s.send(rpc("\"p\"", "ping"));
  json_ptr p = read_until(s, "\"p\"", others, 20000);
  REQUIRE(p);
  for (const json_ptr& o : others) CHECK(id_of(*o) != "\"k\"");

  start_watching(s, "\"e\"", "wait_until_stable", "{\"quiet_ms\":10000,\"timeout\":100}",
                 others);
  s.close_stdin();
  json_ptr r = read_until(s, "\"e\"", others, 20000);
  REQUIRE(r);
  CHECK(is_error(*r));
  CHECK(contains(text_of(*r), "stdin closed"));
}
