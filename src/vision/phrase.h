// Owns: finding a phrase among the words read on a screen (find_text's
// matching): case- and whitespace-insensitive, across consecutive words of
// one line, whole words or part of them, and the box of what matched; and
// the words read nearest to a phrase not found.
// Thread affinity: none; pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/geometry.h"
#include "vision/ocr.h"

namespace cu {

// The longest phrase find_text takes, in bytes.
inline constexpr size_t kMaxPhraseBytes = 256;

// One place the phrase was found.
struct phrase_match {
  std::string text;  // The words read that hold it, joined by single spaces.
  // What matched, in the words' pixels: the words' boxes joined, narrowed
  // to the matched characters where only part of the first or last word
  // matched (estimated from the characters' positions in the word, as if
  // all were equally wide).
  rect box;
  double confidence = 0;  // The least confident of the words, 0 to 1.
  bool whole_words = false;  // Every word matched whole.
};

// The phrase folded for comparison: ASCII letters to lower case, typographic
// quotes, dashes and the fi/fl ligatures to their ASCII forms, split at runs
// of whitespace. Empty when the phrase is only whitespace.
std::vector<std::string> phrase_tokens(std::string_view phrase);

// Where phrase is among words (in the order read). The phrase's tokens
// match consecutive words of one line: each next word is the nearest to
// the right of the last whose height overlaps it by half, no farther from
// it than three times the taller one's height (so that columns far apart,
// or two windows side by side, do not join into a phrase).
// exact: each token equals its word. Otherwise the phrase may also begin
// inside its first word and end inside its last ("Save" finds "Save…" and
// "Autosave"; "line Qu" finds "line Quux"); a one-token phrase may lie
// anywhere inside a word.
// Whole words are also the phrase read with its spaces lost ("Press Me"
// read as "PressMe") and words read with marks glued to their ends ("|Save",
// "[Cancel]": a frame's edge, a bracket); those count for exact too.
// At most max_results matches, in three groups, each in the order read (of
// its first word): whole words; parts of words a person sees as words of
// their own (where the part ends at a capital after a small letter, as
// "Press" in "PressMe", or between letters and digits); other parts ("Press"
// in "pressed").
std::vector<phrase_match> find_phrase(const std::vector<ocr_word>& words, std::string_view phrase,
                                      bool exact, size_t max_results);

// What was read nearest to a phrase not found, so that the one who asked
// sees what the recognizer saw.
struct near_text {
  std::string text;  // One to as many words as the phrase has, of one line.
  rect box;          // Their boxes joined.
  double similarity = 0;  // 1 minus the edit distance over the longer length, 0 to 1.
};

// The most words (or runs of up to as many words as the phrase has, along
// a line, as find_phrase joins them; at most one run from each word) most
// like the phrase once folded and without marks at their ends, most alike
// first, ties in the order read.
std::vector<near_text> nearest_words(const std::vector<ocr_word>& words, std::string_view phrase,
                                     size_t most);

}  // namespace cu
