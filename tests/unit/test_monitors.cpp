// Tests for src/x11/monitors.h: choosing a monitor for switch_display.
#include "x11/monitors.h"

#include <catch2/catch.hpp>

using cu::choose_monitor;
using cu::monitor;
using cu::rect;

namespace {

std::vector<monitor> two() {
  return {monitor{"left", rect{0, 0, 1920, 1080}, true},
          monitor{"right", rect{1920, 0, 1920, 1080}, false}};
}

}  // namespace

TEST_CASE("auto means the whole screen") {
  auto r = choose_monitor(two(), "auto");
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  CHECK(choose_monitor(two(), "AUTO").ok());
}

TEST_CASE("a monitor is chosen by name, case-insensitively, or by index") {
  auto by_name = choose_monitor(two(), "Right");
  REQUIRE(by_name.ok());
  REQUIRE(by_name->has_value());
  CHECK((*by_name)->geometry == rect{1920, 0, 1920, 1080});
  auto by_index = choose_monitor(two(), "0");
  REQUIRE(by_index.ok());
  CHECK((*by_index)->name == "left");
}

TEST_CASE("an unknown monitor is an error that lists the choices") {
  auto r = choose_monitor(two(), "middle");
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().message.find("\"middle\"") != std::string::npos);
  CHECK(r.err().message.find("1 (right 1920x1080+1920+0)") != std::string::npos);
  CHECK_FALSE(choose_monitor(two(), "2").ok());
  CHECK_FALSE(choose_monitor(two(), "-1").ok());
  CHECK_FALSE(choose_monitor(two(), "1x").ok());
  CHECK(choose_monitor({}, "0").err().message.find("no RandR monitors") != std::string::npos);
}

TEST_CASE("geometry prints as xrandr prints it") {
  CHECK(cu::geometry_text(rect{1920, 0, 1920, 1080}) == "1920x1080+1920+0");
  CHECK(cu::geometry_text(rect{-10, 5, 100, 50}) == "100x50-10+5");
}
