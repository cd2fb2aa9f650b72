// find_text's matching over a list of words (vision/phrase.h), and the
// polarity fix and enlargement before OCR (vision/ocr.h's prepare_for_ocr):
// pure functions, no Tesseract.
#include <catch2/catch.hpp>

#include "vision/ocr.h"
#include "vision/phrase.h"

using cu::find_phrase;
using cu::ocr_word;
using cu::rect;

namespace {

// A line of words at y, each 6 px per character with one 6 px space.
std::vector<ocr_word> line_of(std::vector<std::string> texts, int x, int y, double conf = 0.9) {
  std::vector<ocr_word> out;
  for (std::string& t : texts) {
    const int w = int(t.size()) * 6;
    out.push_back(ocr_word{std::move(t), rect{x, y, w, 10}, conf});
    x += w + 6;
  }
  return out;
}

std::vector<ocr_word> screen() {
  auto words = line_of({"HELLO", "WORLD", "42"}, 10, 10);
  auto second = line_of({"second", "line", "Quux"}, 10, 23, 0.8);
  auto save = line_of({"Save\xE2\x80\xA6", "Autosave", "Save"}, 10, 36);
  // A window beside the first, its line at the same height, far away.
  auto beside = line_of({"world", "peace"}, 600, 10);
  for (auto* more : {&second, &save, &beside}) words.insert(words.end(), more->begin(), more->end());
  return words;
}

}  // namespace

TEST_CASE("a phrase is found across the words of one line, case and spaces folded") {
  auto m = find_phrase(screen(), "  second\tLINE   quux ", false, 10);
  REQUIRE(m.size() == 1);
  CHECK(m[0].text == "second line Quux");
  CHECK(m[0].box == rect{10, 23, 16 * 6, 10});
  CHECK(m[0].whole_words);
  CHECK(m[0].confidence == Approx(0.8));
}

TEST_CASE("words of another line or of a window far to the right do not join a phrase") {
  CHECK(find_phrase(screen(), "42 second", false, 10).empty());
  CHECK(find_phrase(screen(), "42 world", false, 10).empty());
  CHECK(find_phrase(screen(), "world peace", false, 10).size() == 1);
}

TEST_CASE("a word matches inside a longer word unless exact, whole words first") {
  auto m = find_phrase(screen(), "save", false, 10);
  REQUIRE(m.size() == 3);
  // The whole word first, then "Save…" and "Autosave" in the order read.
  CHECK(m[0].text == "Save");
  CHECK(m[0].whole_words);
  CHECK(m[1].text == "Save\xE2\x80\xA6");
  CHECK_FALSE(m[1].whole_words);
  // Narrowed to the four characters of five ("Save…" is 5 code points).
  CHECK(m[1].box.x == 10);
  CHECK(m[1].box.w < 7 * 6);
  CHECK(m[2].text == "Autosave");
  CHECK(m[2].box.x > m[1].box.x + m[1].box.w);

  auto exact = find_phrase(screen(), "save", true, 10);
  REQUIRE(exact.size() == 1);
  CHECK(exact[0].text == "Save");
}

TEST_CASE("a phrase may begin inside its first word and end inside its last") {
  auto m = find_phrase(screen(), "ond line Qu", false, 10);
  REQUIRE(m.size() == 1);
  CHECK(m[0].text == "second line Quux");
  CHECK(m[0].box.x == 10 + 3 * 6);
  CHECK(m[0].box.x + m[0].box.w == 10 + 14 * 6);
  // The middle word must match whole.
  CHECK(find_phrase(screen(), "second lin Quux", false, 10).empty());
  CHECK(find_phrase(screen(), "ond line Qu", true, 10).empty());
}

TEST_CASE("max_results cuts the list, and a blank phrase finds nothing") {
  CHECK(find_phrase(screen(), "save", false, 2).size() == 2);
  CHECK(find_phrase(screen(), " \t ", false, 10).empty());
  CHECK(cu::phrase_tokens(" \xC2\xA0 ").empty());
}

TEST_CASE("curly quotes, dashes and ligatures read by OCR match what a model types") {
  std::vector<ocr_word> words = line_of({"don\xE2\x80\x99t", "\xEF\xAC\x81le", "a\xE2\x80\x94" "b"}, 0, 0);
  CHECK(find_phrase(words, "don't file a-b", true, 10).size() == 1);
}

TEST_CASE("prepare_for_ocr makes a dark background light and keeps a light one, enlarging") {
  // Left half: black with a white bar (dark theme); right half: white with
  // a black bar.
  cu::gray_image img;
  img.w = 128;
  img.h = 64;
  img.pixels.assign(size_t(img.w * img.h), 0);
  for (int y = 0; y < img.h; ++y) {
    for (int x = 64; x < 128; ++x) img.pixels[size_t(y * img.w + x)] = 255;
  }
  for (int y = 30; y < 34; ++y) {
    for (int x = 20; x < 40; ++x) img.pixels[size_t(y * img.w + x)] = 255;
    for (int x = 84; x < 104; ++x) img.pixels[size_t(y * img.w + x)] = 0;
  }
  cu::ocr_options o;
  o.scale = 2;
  const cu::gray_image out = cu::prepare_for_ocr(img.view(), o);
  REQUIRE(out.w == 256);
  REQUIRE(out.h == 128);
  auto at = [&](int x, int y) { return int(out.pixels[size_t(y * out.w + x)]); };
  CHECK(at(10, 10) == 255);   // The dark background, made light.
  CHECK(at(60, 64) == 0);     // Its light bar, now dark.
  CHECK(at(200, 10) == 255);  // The light background as it was.
  CHECK(at(188, 64) == 0);    // Its dark bar as it was.
  o.fix_polarity = false;
  CHECK(cu::prepare_for_ocr(img.view(), o).pixels[size_t(10 * 256 + 10)] == 0);
}

TEST_CASE("a phrase read without its spaces or with a frame's edge glued to it matches whole") {
  // A button's border read as "|", its narrow space lost: "|PressMe|".
  auto words = line_of({"|PressMe|", "[Cancel]"}, 10, 10);
  auto found = find_phrase(words, "Press Me", true, 10);
  REQUIRE(found.size() == 1);
  CHECK(found[0].text == "|PressMe|");
  CHECK(found[0].whole_words);
  CHECK(found[0].box == words[0].box);
  auto cancel = find_phrase(words, "cancel", true, 10);
  REQUIRE(cancel.size() == 1);
  CHECK(cancel[0].box == words[1].box);
}

TEST_CASE("a whole word comes first, then a word the text begins at a capital, then one holding it") {
  // "pressed" is read first (higher on the screen).
  auto words = line_of({"pressed"}, 10, 10);
  auto glued = line_of({"PressMe"}, 10, 40);
  auto whole = line_of({"Press"}, 10, 70);
  words.insert(words.end(), glued.begin(), glued.end());
  words.insert(words.end(), whole.begin(), whole.end());
  auto found = find_phrase(words, "Press", false, 10);
  REQUIRE(found.size() == 3);
  CHECK(found[0].text == "Press");
  CHECK(found[1].text == "PressMe");
  CHECK(found[2].text == "pressed");
  CHECK(find_phrase(words, "Press", true, 10).size() == 1);
}

TEST_CASE("the words nearest to a phrase not found come most alike first, at most as asked") {
  auto words = line_of({"Fre", "eat", "View", "Hep"}, 10, 10);
  auto more = line_of({"openrile", "settings"}, 10, 40);
  words.insert(words.end(), more.begin(), more.end());
  CHECK(find_phrase(words, "Open File", false, 10).empty());
  auto near = cu::nearest_words(words, "Open File", 3);
  REQUIRE(near.size() == 3);
  CHECK(near[0].text == "openrile");
  CHECK(near[0].box == more[0].box);
  CHECK(near[0].similarity > 0.8);
  CHECK(near[0].similarity >= near[1].similarity);
  CHECK(near[1].similarity >= near[2].similarity);
  // A two-word phrase may be nearest to two words of a line.
  auto two = cu::nearest_words(line_of({"Opem", "Flle"}, 10, 70), "Open File", 10);
  REQUIRE(two.size() == 2);
  CHECK(two[0].text == "Opem Flle");
  CHECK(cu::nearest_words(words, "Help", 0).empty());
}

TEST_CASE("white text near the edge of a narrow dark band is made dark with its band") {
  // A menu bar: a 20-pixel band of dark blue (grey 73) across white, with a
  // white line of "text" 3 rows below its top, where a square around the
  // pixel is mostly white page: the band's own rows decide.
  cu::gray_image img;
  img.w = 200;
  img.h = 80;
  img.pixels.assign(size_t(img.w * img.h), 255);
  for (int y = 30; y < 50; ++y) {
    for (int x = 0; x < img.w; ++x) img.pixels[size_t(y * img.w + x)] = 73;
  }
  for (int x = 50; x < 150; x += 3) img.pixels[size_t(33 * img.w + x)] = 255;
  cu::ocr_options o;
  o.scale = 1;
  const cu::gray_image out = cu::prepare_for_ocr(img.view(), o);
  auto at = [&](int x, int y) { return int(out.pixels[size_t(y * out.w + x)]); };
  CHECK(at(50, 33) == 0);     // The white text, now dark,
  CHECK(at(51, 33) == 255);   // on its band made white.
  CHECK(at(100, 10) == 255);  // The page above as it was.
}

TEST_CASE("a grey button face around dark text is made white, the text staying dark") {
  // A face of grey 200 (GTK's, or a band of colour made light) on a white
  // page, with a dark stroke of text (grey 40) in it.
  cu::gray_image img;
  img.w = 120;
  img.h = 60;
  img.pixels.assign(size_t(img.w * img.h), 255);
  for (int y = 15; y < 45; ++y) {
    for (int x = 20; x < 100; ++x) img.pixels[size_t(y * img.w + x)] = 200;
  }
  for (int y = 25; y < 35; ++y) img.pixels[size_t(y * img.w + 60)] = 40;
  cu::ocr_options o;
  o.scale = 1;
  const cu::gray_image out = cu::prepare_for_ocr(img.view(), o);
  auto at = [&](int x, int y) { return int(out.pixels[size_t(y * out.w + x)]); };
  CHECK(at(40, 30) == 255);  // The face, white.
  CHECK(at(60, 30) < 60);    // The stroke, still dark.
  CHECK(at(5, 5) == 255);    // The page as it was.
}

TEST_CASE("a thin frame around text is erased, the text's own strokes kept") {
  // A one-pixel frame of 60x30 on white, a short dark stroke (a letter's
  // stem, 10 pixels) inside it.
  cu::gray_image img;
  img.w = 100;
  img.h = 60;
  img.pixels.assign(size_t(img.w * img.h), 255);
  for (int x = 20; x < 80; ++x) {
    img.pixels[size_t(15 * img.w + x)] = 0;
    img.pixels[size_t(44 * img.w + x)] = 0;
  }
  for (int y = 15; y < 45; ++y) {
    img.pixels[size_t(y * img.w + 20)] = 0;
    img.pixels[size_t(y * img.w + 79)] = 0;
  }
  for (int y = 25; y < 35; ++y) img.pixels[size_t(y * img.w + 50)] = 0;
  cu::ocr_options o;
  o.scale = 1;
  const cu::gray_image out = cu::prepare_for_ocr(img.view(), o);
  auto at = [&](int x, int y) { return int(out.pixels[size_t(y * out.w + x)]); };
  CHECK(at(50, 15) == 255);  // The frame's top,
  CHECK(at(20, 30) == 255);  // and its side, erased.
  CHECK(at(50, 30) == 0);    // The stem kept.
}

TEST_CASE("white text on a small coloured button turns dark with the whole face, its ends too") {
  // GTK's blue "Apply": a face of grey 115 (60x28) with a darker rim (96)
  // and rounded corners on a light page (245); a white stroke of text 3
  // pixels from its left end, where a square or strip around a pixel holds
  // mostly page, and a white ring (an "o") whose counter is the face's own
  // blue, cut off from the rest of the face by the ring.
  cu::gray_image img;
  img.w = 160;
  img.h = 80;
  img.pixels.assign(size_t(img.w * img.h), 245);
  auto px = [&](int x, int y) -> uint8_t& { return img.pixels[size_t(y * img.w + x)]; };
  for (int y = 26; y < 54; ++y) {
    for (int x = 50; x < 110; ++x) {
      const bool rim = y == 26 || y == 53 || x == 50 || x == 109;
      const bool corner = (y < 28 || y > 51) && (x < 52 || x > 107);
      if (!corner) px(x, y) = rim ? 96 : 115;
    }
  }
  for (int y = 34; y < 46; ++y) px(54, y) = 255;
  for (int y = 36; y < 44; ++y) {
    for (int x = 78; x < 84; ++x) {
      if (y == 36 || y == 43 || x == 78 || x == 83) px(x, y) = 255;
    }
  }
  cu::ocr_options o;
  o.scale = 1;
  const cu::gray_image out = cu::prepare_for_ocr(img.view(), o);
  auto at = [&](int x, int y) { return int(out.pixels[size_t(y * out.w + x)]); };
  CHECK(at(53, 40) == 255);  // The face at its left end, white,
  CHECK(at(80, 30) == 255);  // and in its middle.
  CHECK(at(54, 40) < 60);    // The stroke at the end, dark.
  CHECK(at(78, 40) < 60);    // The ring, dark,
  CHECK(at(80, 40) == 255);  // its counter white, not a filled blot read "e".
  CHECK(at(10, 10) == 255);  // The page, white.
}

TEST_CASE("dark text at a window's corner beside the black desktop stays dark on white") {
  // A white window from (40, 30) on a black desktop; a dark stem of text 2
  // pixels from its left edge and its top, where a square around a pixel is
  // mostly desktop. The desktop turns white and the window stays: no edge
  // is left between them to glue to the first letter ("Veotal" for
  // "total").
  cu::gray_image img;
  img.w = 120;
  img.h = 100;
  img.pixels.assign(size_t(img.w * img.h), 0);
  for (int y = 30; y < img.h; ++y) {
    for (int x = 40; x < img.w; ++x) img.pixels[size_t(y * img.w + x)] = 255;
  }
  for (int y = 32; y < 42; ++y) img.pixels[size_t(y * img.w + 42)] = 0;
  cu::ocr_options o;
  o.scale = 1;
  const cu::gray_image out = cu::prepare_for_ocr(img.view(), o);
  auto at = [&](int x, int y) { return int(out.pixels[size_t(y * out.w + x)]); };
  CHECK(at(42, 35) < 60);    // The stem, dark.
  CHECK(at(41, 33) == 255);  // The window beside it, white.
  for (int x = 30; x < 50; ++x) CHECK(at(x, 60) == 255);  // No edge left.
  CHECK(at(5, 5) == 255);    // The desktop, white.
}

TEST_CASE("a screen of more regions than the table holds keeps its pixels, and one of fewer is turned") {
  // A dark panel with a white bar, beside a field of one-pixel dots: light
  // dots touch only at corners, so each is a region of its own.
  auto make = [](bool noise) {
    cu::gray_image img;
    img.w = 1024;
    img.h = 600;
    img.pixels.assign(size_t(img.w) * size_t(img.h), 255);
    for (int y = 0; y < img.h; ++y) {
      for (int x = 0; x < img.w; ++x) {
        if (x < 128 && y < 64) {
          img.pixels[size_t(y * img.w + x)] = (y >= 30 && y < 34 && x >= 20 && x < 40) ? 255 : 0;
        } else if (noise && ((x + y) % 2) == 0) {
          img.pixels[size_t(y * img.w + x)] = 0;
        }
      }
    }
    return img;
  };
  cu::ocr_options o;
  o.scale = 1;
  const cu::gray_image plain = make(false);
  CHECK(int(cu::prepare_for_ocr(plain.view(), o).pixels[size_t(10 * 1024 + 10)]) == 255);
  // About 300,000 dots: over the 2^18 regions the table holds.
  const cu::gray_image dots = make(true);
  CHECK(int(cu::prepare_for_ocr(dots.view(), o).pixels[size_t(10 * 1024 + 10)]) == 0);
}
