// screenshot_marks' map as pure functions (vision/marks.h): where the
// numbered labels go, how OCR words become lines. No display.
#include <catch2/catch.hpp>

#include <vector>

#include "vision/marks.h"

using cu::make_marks;
using cu::mark;
using cu::mark_candidate;
using cu::mark_source;
using cu::rect;
using cu::size2;

namespace {

mark_candidate control(std::string role, std::string name, rect box) {
  return mark_candidate{std::move(role), std::move(name), box, mark_source::a11y};
}

bool meet(const rect& a, const rect& b) { return cu::intersect(a, b).w > 0; }

// The middle rows of a control, where its text is drawn.
rect text_rows(const rect& b) { return rect{b.x + 2, b.y + b.h / 4, b.w - 4, b.h - b.h / 2}; }

// A dense part of gtk3-widget-factory as its accessibility tree gives it
// (image pixels of a 1366x768 map): check and radio buttons stacked 4 px
// apart at the window's left edge, buttons 6 px apart, table cells edge to
// edge in rows under a header row.
std::vector<mark_candidate> dense_scene() {
  std::vector<mark_candidate> out;
  for (int k = 0; k < 5; ++k) {
    out.push_back(control("check box", "checkbutton", rect{10, 262 + 20 * k, 78, 16}));
    out.push_back(control("radio button", "radiobutton", rect{100, 262 + 20 * k, 74, 16}));
    out.push_back(control("push button", "togglebutton", rect{278, 262 + 32 * k, 104, 26}));
  }
  const int xs[] = {771, 803, 835, 887}, ws[] = {31, 30, 51, 73};
  for (int row = 0; row < 4; ++row) {
    for (int k = 0; k < 4; ++k) {
      out.push_back(control(row == 0 ? "column header" : "table cell", "Andrea",
                            rect{xs[k], 45 + 17 * row, ws[k], 16}));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a label covers no element's text where the gaps beside the elements have room") {
  const size2 image{1366, 768};
  size_t left_out = 0;
  const std::vector<mark> marks =
      make_marks(dense_scene(), rect{0, 0, image.w, image.h}, image, 150, &left_out);
  REQUIRE(marks.size() == 31);
  for (const mark& m : marks) {
    INFO("mark " << m.n << " at " << m.what.box.x << "," << m.what.box.y << " label "
                 << m.label.x << "," << m.label.y << " " << m.label.w << "x" << m.label.h);
    CHECK(m.label.x >= 0);
    CHECK(m.label.y >= 0);
    CHECK(m.label.x + m.label.w <= image.w);
    CHECK(m.label.y + m.label.h <= image.h);
    // Not over the left part of its own box, where its text starts.
    const rect own = m.what.box;
    CHECK_FALSE(meet(m.label, rect{own.x, own.y, own.w * 3 / 5, own.h}));
    for (const mark& o : marks) {
      if (o.n == m.n) continue;
      CHECK_FALSE(meet(m.label, text_rows(o.what.box)));
      if (o.n < m.n) CHECK_FALSE(meet(m.label, o.label));
    }
  }
}

TEST_CASE("a lone control's label goes above it at full size") {
  const size2 image{800, 600};
  size_t left_out = 0;
  const auto marks = make_marks({control("push button", "OK", rect{100, 100, 80, 24})},
                                rect{0, 0, 800, 600}, image, 10, &left_out);
  REQUIRE(marks.size() == 1);
  CHECK(marks[0].label_dot == 2);
  CHECK(marks[0].label.y + marks[0].label.h == 100);
  CHECK(marks[0].label.x == 100);
}

TEST_CASE("drawing labels of both sizes at the image's edges stays inside the buffer") {
  const size2 image{64, 48};
  std::vector<mark_candidate> cs;
  for (int k = 0; k < 12; ++k) cs.push_back(control("push button", "b", rect{(k % 4) * 16, (k / 4) * 16, 15, 15}));
  size_t left_out = 0;
  const auto marks = make_marks(cs, rect{0, 0, image.w, image.h}, image, 150, &left_out);
  std::vector<uint8_t> px(size_t(image.w) * size_t(image.h) * 3 + 16, 0);
  for (size_t i = size_t(image.w) * size_t(image.h) * 3; i < px.size(); ++i) px[i] = 0xAB;
  cu::draw_marks(px.data(), image, marks);
  for (size_t i = size_t(image.w) * size_t(image.h) * 3; i < px.size(); ++i) CHECK(px[i] == 0xAB);
}

namespace {

mark_candidate word(std::string text, rect box, float confidence) {
  return mark_candidate{"text", std::move(text), box, mark_source::ocr, confidence};
}

}  // namespace

TEST_CASE("a terminal line whose second word sits a pixel higher is one line in reading order") {
  // As Tesseract read an xterm's "second line here" (image pixels).
  const auto lines = cu::ocr_lines({word("second", rect{784, 462, 27, 8}, 0.97f),
                                    word("line", rect{815, 461, 17, 9}, 0.96f),
                                    word("here", rect{835, 462, 18, 8}, 0.96f)});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].name == "second line here");
  CHECK(lines[0].box.x == 784);
  CHECK(lines[0].box.x + lines[0].box.w == 853);
}

TEST_CASE("a doubtful word inside a believed line keeps the line whole; noise alone is dropped") {
  // An xterm's `ls /usr` line with "lib64" read at 0.48, and the noise the
  // same read found on the title bar.
  const auto lines = cu::ocr_lines({word("lib32", rect{900, 452, 20, 9}, 0.74f),
                                    word("lib64", rect{930, 452, 20, 9}, 0.48f),
                                    word("libexec", rect{960, 452, 28, 9}, 0.92f),
                                    word("\xE2\x80\x94", rect{1100, 420, 5, 12}, 0.65f),
                                    word("26S)", rect{790, 428, 170, 7}, 0.04f),
                                    word("a", rect{1000, 428, 130, 7}, 0.20f)});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].name == "lib32 lib64 libexec");
}

TEST_CASE("an OCR line does not run across the edge of a control between two words") {
  // gtk3-widget-factory's "checkbutton" beside a radio button whose
  // accessible box starts at its indicator, read as "QO": without the
  // radio button's box these are one line of words 6 px apart.
  const std::vector<mark_candidate> words = {word("checkbutton", rect{27, 264, 62, 12}, 0.9f),
                                             word("QO", rect{95, 264, 10, 12}, 0.6f),
                                             word("radiobutton", rect{110, 264, 61, 12}, 0.9f)};
  REQUIRE(cu::ocr_lines(words).size() == 1);
  const auto lines =
      cu::ocr_lines(words, {control("radio button", "radiobutton", rect{94, 262, 80, 16})});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].name == "checkbutton");
  CHECK(lines[1].name == "QO radiobutton");
}

TEST_CASE("a control's box around a line's words leaves the line whole") {
  const auto lines =
      cu::ocr_lines({word("Remove", rect{108, 206, 40, 11}, 0.9f),
                     word("Apply", rect{152, 206, 30, 11}, 0.9f)},
                    {control("push button", "Remove Apply", rect{100, 200, 90, 24})});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].name == "Remove Apply");
}

TEST_CASE("a title bar covered in its middle keeps its widest uncovered piece") {
  const rect bar{100, 80, 500, 20};
  // A window over columns 250 to 760 of the bar's rows, another wholly
  // below it (it covers nothing of the bar).
  const rect piece = cu::uncovered_piece(bar, {rect{250, 60, 510, 200}, rect{0, 100, 800, 50}});
  CHECK(piece.x == 100);
  CHECK(piece.w == 150);
  CHECK(piece.y == 80);
  CHECK(piece.h == 20);
  // Covered at its left end and in its middle: the right piece is wider.
  const rect right = cu::uncovered_piece(bar, {rect{50, 70, 100, 40}, rect{300, 90, 100, 5}});
  CHECK(right.x == 400);
  CHECK(right.w == 200);
  // Covered everywhere: nothing.
  CHECK(cu::uncovered_piece(bar, {rect{0, 0, 1000, 1000}}).w == 0);
}

TEST_CASE("an OCR line inside an X control window names its mark and makes none of its own") {
  // Two of xcalc's Xaw buttons side by side: "sin" read inside the first,
  // nothing inside the second; a line outside both stays a mark.
  mark_candidate sin_button{"control", "", rect{350, 213, 40, 26}, mark_source::windows};
  sin_button.named_by_text = true;
  mark_candidate blank_button{"control", "WM name", rect{394, 213, 40, 26}, mark_source::windows};
  blank_button.named_by_text = true;
  size_t left_out = 0;
  const auto marks = make_marks({sin_button, blank_button, word("sin", rect{360, 220, 18, 9}, 0.9f),
                                 word("Result 42", rect{320, 150, 60, 10}, 0.9f)},
                                rect{0, 0, 800, 600}, size2{800, 600}, 150, &left_out);
  REQUIRE(marks.size() == 3);
  CHECK(marks[0].what.name == "Result 42");
  CHECK(marks[0].what.source == mark_source::ocr);
  CHECK(marks[1].what.name == "sin");
  CHECK(marks[1].what.source == mark_source::windows);
  // No text inside: the window's own name stays.
  CHECK(marks[2].what.name == "WM name");
}

TEST_CASE("several OCR lines inside one X control window are joined in reading order") {
  mark_candidate button{"control", "", rect{100, 100, 80, 40}, mark_source::windows};
  button.named_by_text = true;
  size_t left_out = 0;
  const auto marks = make_marks({word("down", rect{110, 122, 30, 9}, 0.9f), button,
                                 word("page", rect{110, 104, 30, 9}, 0.9f)},
                                rect{0, 0, 800, 600}, size2{800, 600}, 150, &left_out);
  REQUIRE(marks.size() == 1);
  CHECK(marks[0].what.name == "page down");
}

TEST_CASE("a title bar is not renamed by the text read on it") {
  size_t left_out = 0;
  const auto marks =
      make_marks({mark_candidate{"title bar", "Calculator", rect{0, 0, 300, 20}, mark_source::windows},
                  word("Calculatar", rect{120, 5, 60, 10}, 0.9f)},
                 rect{0, 0, 800, 600}, size2{800, 600}, 150, &left_out);
  REQUIRE(marks.size() == 1);
  CHECK(marks[0].what.name == "Calculator");
}
