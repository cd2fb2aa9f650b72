// Owns: what the a11y thread reads out of an application's accessibility
// tree, as plain values (an element, an application, the walk's limits),
// and the tree's text rendering, which is pure and needs no bus.
// Thread affinity: values; made on the a11y thread, read on any.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.h"

namespace cu {

// One node of an application's tree, in depth-first order.
struct a11y_element {
  int index = 0;  // Depth-first position, 0 for the application itself.
  int depth = 0;  // 0 for the application, 1 for its windows.
  std::string role;   // AT-SPI's role name: "push button", "frame".
  std::string name;   // Cut to walk_limits::max_text bytes (whole UTF-8).
  std::string value;  // A Value's number or a text field's text, else empty.
  // AT-SPI state nicks ("focused", "checked"), as the walk makes them
  // true: "editable" only with EditableText, and "offscreen" (the walk's
  // own) for an element with a frame that is not showing, or lies outside
  // its window or scrolled out of its container.
  std::vector<std::string> states;
  std::vector<std::string> actions;  // Action names: "click", "activate".
  // In root window (screen) pixels, when the element has a Component with
  // a non-empty extent on the screen (not GTK's G_MININT for unmapped).
  std::optional<rect> frame;
  // The child positions from the application down to this element, to
  // find it again in a later call.
  std::vector<int> path;
};

// One application registered on the accessibility bus. Several can share
// a pid (a program with two toolkits, or one that registers twice).
struct a11y_app {
  std::string name;
  std::string bus_name;  // Its unique name on the accessibility bus, ":1.23".
  int pid = 0;
  std::vector<std::string> windows;  // Its top-level children's names.
  // False when it did not answer within the call timeout (stopped or
  // hung): its name and windows are unknown, its pid comes from the bus.
  bool answered = true;
};

struct walk_limits {
  int max_nodes = 2000;  // Elements returned at most.
  int max_depth = 64;    // Deeper elements are left out.
  size_t max_text = 200; // Bytes of a name or value kept.
};

struct walk_outcome {
  std::vector<a11y_element> elements;
  bool truncated_nodes = false;  // max_nodes was reached.
  bool truncated_depth = false;  // Some element was deeper than max_depth.
  int skipped = 0;  // Children that vanished (or failed) during the walk.
  int bus_calls = 0;  // D-Bus calls the walk made (tools/bench/bench-a11y counts them).
};

// s cut to at most max bytes at a UTF-8 character boundary, with "…"
// appended when anything was cut.
std::string clip_text(std::string s, size_t max);

// The tree as text, one line per element indented two spaces per depth:
// `<index> <role> "<name>" = "<value>" [states] {actions} @x,y wxh`, the name
// and value quoted with \n, \r, \t, \" and \\ escaped (one line each).
// Only the states a model acts on are shown (focused, selected, checked,
// pressed, expanded, collapsed, editable, offscreen, and "disabled" for an
// element with actions, or focusable or editable, that is not enabled); the
// structured form keeps them all. An offscreen element's frame is left out
// of the text: it is not a place to click.
std::string render_tree(const std::vector<a11y_element>& elements);

}  // namespace cu
