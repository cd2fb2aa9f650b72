// Which X subwindows screenshot_marks' windows source marks as controls
// (x11/subwindows.h's pick_control_windows): pure, no display.
#include "x11/subwindows.h"

#include <catch2/catch.hpp>

#include <vector>

using cu::rect;
using cu::subwindow_node;

namespace {

subwindow_node node(size_t parent, rect box, bool shown = true) {
  subwindow_node n;
  n.parent = parent;
  n.box = box;
  n.shown = shown;
  return n;
}

}  // namespace

TEST_CASE("xcalc's buttons are controls and the form holding them is not") {
  // xcalc as xwininfo -tree gives it: a form the size of the window, the
  // display strip with the readout inside, and button windows.
  const rect top{300, 100, 226, 394};
  const std::vector<subwindow_node> nodes = {
      node(SIZE_MAX, rect{300, 100, 226, 394}),  // 0: the form.
      node(0, rect{305, 122, 216, 46}),          // 1: the display's frame, a strip.
      node(1, rect{312, 125, 204, 38}),          // 2: the display, a strip too.
      node(2, rect{331, 128, 186, 17}),          // 3: the readout.
      node(2, rect{317, 128, 10, 15}, false),    // 4: an indicator not mapped.
      node(0, rect{305, 182, 40, 26}),           // 5: a button.
      node(0, rect{349, 182, 40, 26}),           // 6: a button.
  };
  CHECK(cu::pick_control_windows(nodes, top) == std::vector<size_t>{3, 5, 6});
}

TEST_CASE("an xterm's text window and scroll bar are no controls") {
  const rect top{100, 100, 484, 316};
  const std::vector<subwindow_node> nodes = {
      node(SIZE_MAX, rect{114, 100, 470, 316}),  // The vt100 window: most of the window.
      node(SIZE_MAX, rect{100, 100, 14, 316}),   // The scroll bar: a full-height strip.
  };
  CHECK(cu::pick_control_windows(nodes, top).empty());
}

TEST_CASE("a window smaller than 6 pixels on a side or cut away by its parent is no control") {
  const rect top{0, 0, 400, 300};
  const std::vector<subwindow_node> nodes = {
      node(SIZE_MAX, rect{10, 10, 5, 40}),   // A separator.
      node(SIZE_MAX, rect{20, 20, 40, 0}),   // Scrolled out of its parent.
      node(SIZE_MAX, rect{50, 50, 6, 6}),    // Just big enough.
  };
  CHECK(cu::pick_control_windows(nodes, top) == std::vector<size_t>{2});
}

TEST_CASE("a parent whose only children are too small to act on is the control") {
  // A button drawing its arrow in a 4x4 child window.
  const rect top{0, 0, 400, 300};
  const std::vector<subwindow_node> nodes = {node(SIZE_MAX, rect{10, 10, 30, 20}),
                                             node(0, rect{20, 18, 4, 4})};
  CHECK(cu::pick_control_windows(nodes, top) == std::vector<size_t>{0});
}
