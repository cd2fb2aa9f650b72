// The a11y toolset's pure side (a11y/element.h): names and values clipped
// at a character boundary, and the tree rendered as get_app_state's text.
// No bus: the elements are made by hand.
#include <catch2/catch.hpp>

#include "a11y/element.h"

using cu::a11y_element;
using cu::clip_text;
using cu::rect;
using cu::render_tree;

TEST_CASE("clip_text keeps a short text as it is") {
  CHECK(clip_text("Save", 4) == "Save");
  CHECK(clip_text("", 0).empty());
}

TEST_CASE("clip_text cuts a long text and marks the cut with an ellipsis") {
  CHECK(clip_text("Save as", 4) == "Save\xE2\x80\xA6");
}

TEST_CASE("clip_text never cuts a UTF-8 character in half") {
  // "héllo": the é is two bytes; a cut after three bytes would split it.
  CHECK(clip_text("h\xC3\xA9llo", 2) == "h\xE2\x80\xA6");
  CHECK(clip_text("h\xC3\xA9llo", 3) == "h\xC3\xA9\xE2\x80\xA6");
}

TEST_CASE("render_tree indents by depth and shows role, name, value, actions and frame") {
  a11y_element app;
  app.role = "application";
  app.name = "gtk3-widget-factory";
  a11y_element entry;
  entry.index = 1;
  entry.depth = 1;
  entry.role = "text";
  entry.value = "entry";
  entry.states = {"editable", "enabled", "focusable", "focused", "showing"};
  entry.actions = {"activate"};
  entry.frame = rect{15, 193, 356, 34};
  CHECK(render_tree({app, entry}) ==
        "0 application \"gtk3-widget-factory\"\n"
        "  1 text = \"entry\" [focused editable] {activate} @15,193 356x34\n");
}

TEST_CASE("render_tree says disabled only of an element one could otherwise use") {
  a11y_element button;
  button.role = "push button";
  button.name = "Close";
  button.actions = {"click"};
  a11y_element panel;
  panel.index = 1;
  panel.role = "panel";
  CHECK(render_tree({button, panel}) ==
        "0 push button \"Close\" [disabled] {click}\n"
        "1 panel\n");
}

TEST_CASE("render_tree keeps an element on one line whatever its text holds") {
  a11y_element view;
  view.role = "text";
  view.name = "say \"hi\"";
  view.value = "line one\nline two\ttab \\ end";
  CHECK(render_tree({view}) ==
        "0 text \"say \\\"hi\\\"\" = \"line one\\nline two\\ttab \\\\ end\"\n");
}
