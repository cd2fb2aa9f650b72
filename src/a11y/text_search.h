// Owns: find_text's accessibility backend: the labels the applications on
// the screen expose (a button's name, a link's, a menu item's, a label's
// text) searched for a phrase, with the element's own box, and only where
// that element is what the screen shows (not behind another window, not
// scrolled away). One Collection call per window (AT-SPI's GetMatches, the
// walk done inside the application) and one name read per element shown,
// so a search of a browser page takes milliseconds where OCR takes most of
// a second.
// Thread affinity: made on the loop thread; run on the a11y thread, which
// writes the search's findings before its completion is pushed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "a11y/a11y_op.h"
#include "core/geometry.h"
#include "core/grant_policy.h"

namespace cu {

// One element whose label holds the phrase.
struct a11y_text_hit {
  std::string text;  // The element's label, whole.
  std::string role;  // AT-SPI's role name: "push button", "link".
  rect box;          // What matched, in area's pixels.
  bool whole_words = false;
  // The shown client window topmost at the element's centre (the window
  // searched, with one; 0 when no client window holds the centre, as a
  // popup menu's), and the element's process.
  uint32_t window = 0;
  int pid = 0;
};

// A search and, once run, what it found.
struct a11y_text_search {
  std::string phrase;
  bool exact = false;
  // Instead of a phrase: every element of an actionable role shown there
  // (buttons, entries, links, menu items, check and radio boxes, tabs, list
  // and tree rows, combo boxes, sliders), named or not (screenshot_marks).
  bool actionable = false;
  size_t max_results = 10;
  // Where to look: in root window pixels, or, with window set, in that
  // window's own pixels (its content's top-left corner at 0, 0), and then
  // only in that window's application, covered or not.
  rect area;
  uint32_t window = 0;
  // Where area's 0, 0 is on the root window.
  point origin;
  // The grants (docs/grants.md): applications this view does not allow
  // are not searched, judged by their window's WM_CLASS and their process.
  // Null: every application is.
  std::shared_ptr<const grant_view> view;
  // Found: whole-word matches first, each group top to bottom, then left
  // to right.
  std::vector<a11y_text_hit> hits;
  int elements_read = 0;  // Labels read (of elements shown).
  // Why nothing could be searched (no bus, an application not answering):
  // the caller reads the pixels instead.
  std::string unavailable;
};

// The search as a job. It always answers an empty success (or nothing when
// cancelled): a bus that is not there, or an application that does not
// answer, leaves io->unavailable set and io->hits empty.
std::unique_ptr<a11y_op> make_text_search(std::shared_ptr<a11y_text_search> io);

}  // namespace cu
