// Tests for src/protocol/coordinates.h: which captures become the
// coordinate session, and what voids it (a resize, a lost server, a new
// display area).
#include <catch2/catch.hpp>

#include "protocol/coordinates.h"

using namespace cu;

namespace {

coord_session capture_of(size2 root, uint64_t generation) {
  coord_session s = make_session(rect{0, 0, root.w, root.h});
  s.generation = generation;
  s.root = root;
  return s;
}

screen_report root_is(size2 root) {
  screen_report r;
  r.root = root;
  return r;
}

}  // namespace

TEST_CASE("a capture of the screen as it is becomes the session") {
  server_generation gen;
  coordinates c(":99", gen);
  CHECK_FALSE(c.live());
  c.on_screen_report(root_is({1920, 1080}));
  auto s = capture_of({1920, 1080}, gen.current());
  c.adopt(s);
  REQUIRE(c.live());
  CHECK(*c.live() == s);
}

TEST_CASE("a capture from a server that is gone is not adopted, and a lost server voids all") {
  server_generation gen;
  coordinates c(":99", gen);
  auto old = capture_of({1024, 768}, gen.current());
  gen.lost(gen.current());
  c.adopt(old);
  CHECK_FALSE(c.live());

  c.adopt(capture_of({1024, 768}, gen.current()));
  c.set_area(rect{0, 0, 512, 768});
  c.adopt(capture_of({1024, 768}, gen.current()));
  REQUIRE(c.live());
  screen_report lost;
  lost.lost = true;
  lost.generation = gen.current();  // The server the session is of.
  CHECK(c.on_screen_report(lost));
  CHECK_FALSE(c.live());
  CHECK_FALSE(c.area());
}

TEST_CASE("late news of a lost server keeps a session already made on the next one") {
  server_generation gen;
  coordinates c(":99", gen);
  c.on_screen_report(root_is({1920, 1080}));
  const uint64_t first = gen.current();
  c.adopt(capture_of({1920, 1080}, first));
  // A capture worker notices the restart first, reconnects and captures
  // the new screen; the desktop thread's report of the loss comes after.
  gen.lost(first);
  auto fresh = capture_of({1280, 1024}, gen.current());
  c.adopt(fresh);
  screen_report lost;
  lost.lost = true;
  lost.generation = first;
  CHECK(c.on_screen_report(lost));
  REQUIRE(c.live());
  CHECK(*c.live() == fresh);
  // The new server's size report agrees with it.
  screen_report size = root_is({1280, 1024});
  size.generation = gen.current();
  CHECK_FALSE(c.on_screen_report(size));
  REQUIRE(c.live());
  CHECK(*c.live() == fresh);
}

TEST_CASE("a resize voids the session, but keeps one already captured at the new size") {
  server_generation gen;
  coordinates c(":99", gen);
  c.on_screen_report(root_is({1024, 768}));
  c.adopt(capture_of({1024, 768}, gen.current()));
  CHECK_FALSE(c.on_screen_report(root_is({1280, 800})));
  CHECK_FALSE(c.live());

  // The capture saw the new size before the desktop thread's report did.
  auto early = capture_of({1920, 1080}, gen.current());
  c.adopt(early);
  CHECK_FALSE(c.live());
  c.on_screen_report(root_is({1920, 1080}));
  REQUIRE(c.live());
  CHECK(*c.live() == early);
}

TEST_CASE("a new display area voids the session; the same area keeps it") {
  server_generation gen;
  coordinates c(":99", gen);
  c.adopt(capture_of({1920, 1080}, gen.current()));
  c.set_area(std::nullopt);
  CHECK(c.live());
  c.set_area(rect{0, 0, 960, 1080});
  CHECK_FALSE(c.live());
  REQUIRE(c.area());
  CHECK(*c.area() == rect{0, 0, 960, 1080});
}
