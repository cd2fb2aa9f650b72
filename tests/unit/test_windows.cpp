// Tests for src/x11/windows.h: which window open_application picks.
#include "x11/windows.h"

#include <catch2/catch.hpp>

using cu::match_window;
using cu::window_info;

namespace {

window_info win(xcb_window_t id, std::string inst, std::string cls, std::string title,
                bool viewable = true) {
  window_info w;
  w.id = id;
  w.instance = std::move(inst);
  w.cls = std::move(cls);
  w.title = std::move(title);
  w.viewable = viewable;
  return w;
}

xcb_window_t pick(const std::vector<window_info>& ws, std::string_view app) {
  auto w = match_window(ws, app);
  return w ? w->id : 0;
}

}  // namespace

TEST_CASE("the class matches case-insensitively before any title") {
  std::vector<window_info> ws = {win(1, "navigator", "Firefox", "xterm manual - Mozilla Firefox"),
                                 win(2, "xterm", "XTerm", "bash")};
  CHECK(pick(ws, "xterm") == 2);
  CHECK(pick(ws, "XTERM") == 2);
  CHECK(pick(ws, "firefox") == 1);
  CHECK(pick(ws, "Navigator") == 1);
}

TEST_CASE("an exact title beats a class that only contains the name") {
  std::vector<window_info> ws = {win(1, "gnome-terminal-server", "Gnome-terminal", "notes"),
                                 win(2, "xterm", "XTerm", "Terminal")};
  CHECK(pick(ws, "terminal") == 2);
}

TEST_CASE("substrings match when nothing matches exactly, class before title") {
  std::vector<window_info> ws = {win(1, "libreoffice", "libreoffice-writer", "Untitled 1"),
                                 win(2, "xterm", "XTerm", "writer's notes")};
  CHECK(pick(ws, "writer") == 1);
  CHECK(pick(ws, "untitled") == 1);
  CHECK(pick(ws, "notes") == 2);
}

TEST_CASE("among equal matches a viewable window wins, then the topmost") {
  std::vector<window_info> ws = {win(1, "xterm", "XTerm", "a"), win(2, "xterm", "XTerm", "b"),
                                 win(3, "xterm", "XTerm", "c", false)};
  CHECK(pick(ws, "xterm") == 2);
}

TEST_CASE("no match and an empty name give nothing") {
  std::vector<window_info> ws = {win(1, "xterm", "XTerm", "bash")};
  CHECK(pick(ws, "xclock") == 0);
  CHECK(pick(ws, "") == 0);
}

TEST_CASE("window ids print as X tools print them") {
  CHECK(cu::window_id_text(0x1a00022) == "0x1a00022");
}
