// Owns: screenshot_marks' map, as pure functions: the candidates the
// sources found (accessibility elements, window title bars, OCR words)
// merged and de-duplicated, numbered by position so that an unchanged
// screen numbers alike, and drawn on an RGB image as numbered labels that
// read on any background (a tiny built-in digit font, white on a dark
// rounded box with a light outline), placed off the element's own label
// where there is room.
// Thread affinity: none (pure functions; callers own the buffers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/geometry.h"

namespace cu {

enum class mark_source : uint8_t { a11y, windows, ocr };

const char* mark_source_name(mark_source s);

// Something actionable found by one source, in image pixels.
struct mark_candidate {
  std::string role;  // "push button", "title bar", "text".
  std::string name;  // The element's name, the window's title, the words read.
  rect box;
  mark_source source = mark_source::a11y;
  float confidence = 1.0f;  // OCR's belief in the words (0 to 1); 1 for the other sources.
  // Its name is the text OCR reads inside it, when it reads any: an X
  // program's button that is a window of its own has its label drawn, not
  // said, and the line read there names the mark instead of making one.
  bool named_by_text = false;
  // The X window it is in, when its source knows (0 otherwise): an
  // accessibility element's top-level client window, the client window a
  // title bar belongs to, an X control window itself. Acting by mark asks
  // at the press whether the pointer still reaches that window there.
  uint32_t window = 0;
  // An accessibility element's process (0 for the other sources): where it
  // is found again by role and name when its own action stands in for the
  // pointer.
  int pid = 0;
};

// A mark as the map gives it: its number (from 1), where its label is
// drawn and at what size (the side of one font pixel: 2, or 1 where no
// place beside the element had room for the full size).
struct mark {
  int n = 0;
  mark_candidate what;
  rect label;
  int label_dot = 2;
};

// OCR words on one line whose gap is small beside their height joined into
// one candidate each (a line of a terminal is one mark, not ten), in left to
// right order whichever word the line was found from. Words under 0.25
// confidence are dropped; a line is kept when one of its words reaches 0.5
// and it has a letter or digit, so a doubtful word inside a line of
// believed ones does not split it. Two words are not joined when the edge
// of one of elements (the candidates the other sources found, in the same
// pixels) falls between them on their rows: a line then would span two
// controls, such as a check button's label and the radio button's beside
// it, and its box would be neither's.
std::vector<mark_candidate> ocr_lines(std::vector<mark_candidate> words,
                                      const std::vector<mark_candidate>& elements = {});

// The widest piece of a title bar (bar, one row band) that none of above
// covers, the outer frames of the windows stacked over it; an empty rect
// when they cover all of it. A window over any of the bar's rows takes its
// columns away: a piece of a bar only some rows high is no place to click.
rect uncovered_piece(const rect& bar, const std::vector<rect>& above);

// The map: candidates kept inside within (image pixels; its area must hold
// the box's centre), de-duplicated (an OCR line whose centre an
// accessibility element, a title bar or a control window covers is
// dropped, and names a candidate named_by_text, the lines inside one
// joined left to right by rows; an element
// repeated by another of the same name over the same place is one), sorted
// by position (rows of about a line's height top to bottom, then left to
// right, then role and name, so that numbers do not depend on the order the
// sources answered in) and numbered; at most most of them (*left_out says
// how many more there were). Each mark's label is placed in an image of
// size image, where it covers no text where it can: above the box, right
// of its end, inside its right end, shrunk when none has room.
std::vector<mark> make_marks(std::vector<mark_candidate> candidates, const rect& within,
                             size2 image, size_t most, size_t* left_out);

// The full-size label's size for number n.
size2 label_size(int n);

// Draws each mark (a thin outline of its box, and its numbered label) on
// rgb, an image of size image with rows of image.w * 3 bytes.
void draw_marks(uint8_t* rgb, size2 image, const std::vector<mark>& marks);

}  // namespace cu
