#include "vision/phrase.h"

#include <algorithm>

#include "util/ascii.h"
#include "util/utf8.h"

namespace cu {
namespace {

bool is_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
         c == 0xA0 || c == 0x2007 || c == 0x202F || c == 0x3000 || (c >= 0x2000 && c <= 0x200A);
}

// One code point as compared: ASCII lower case, and what OCR reads for
// what a model types (curly quotes, dashes, ligatures) in ASCII.
void append_folded(std::string& out, char32_t c, std::string_view raw) {
  switch (c) {
    case 0x2018: case 0x2019: case 0x201A: case 0x2032: out += '\''; return;
    case 0x201C: case 0x201D: case 0x201E: case 0x2033: out += '"'; return;
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2212: out += '-'; return;
    case 0xFB01: out += "fi"; return;
    case 0xFB02: out += "fl"; return;
    default: break;
  }
  if (c < 0x80) {
    out += ascii_lower(char(c));
  } else {
    out.append(raw);
  }
}

// A word folded as phrase_tokens folds, with each folded byte's code point
// index in the original word (to place a part of the word in its box).
struct folded_word {
  std::string text;
  std::vector<int> index;  // Per byte of text.
  int code_points = 0;
};

folded_word fold_word(std::string_view s) {
  folded_word f;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    char32_t c = 0;
    if (!next_code_point(s, &i, &c)) {
      i = start + 1;
      c = 0xFFFD;
    }
    append_folded(f.text, c, s.substr(start, i - start));
    f.index.resize(f.text.size(), f.code_points);
    ++f.code_points;
  }
  return f;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool starts_with(std::string_view s, std::string_view head) {
  return s.size() >= head.size() && s.substr(0, head.size()) == head;
}

// Whether b may follow a in one phrase: on the same line (their heights
// overlap by half the smaller one), to its right, and near.
bool may_follow(const ocr_word& a, const ocr_word& b) {
  if (b.box.x <= a.box.x) return false;
  const int overlap = std::min(a.box.y + a.box.h, b.box.y + b.box.h) - std::max(a.box.y, b.box.y);
  if (2 * overlap < std::min(a.box.h, b.box.h)) return false;
  const int gap = b.box.x - (a.box.x + a.box.w);
  return gap <= 3 * std::max(a.box.h, b.box.h);
}

// For each word, the word that follows it on its line (the nearest that
// may follow), or -1. Tesseract's own lines are not used: in its sparse
// text mode, which reads screens best, every few words are a line of
// their own.
std::vector<int> next_words(const std::vector<ocr_word>& words) {
  std::vector<int> next(words.size(), -1);
  for (size_t i = 0; i < words.size(); ++i) {
    int best = -1;
    for (size_t j = 0; j < words.size(); ++j) {
      if (j == i || !may_follow(words[i], words[j])) continue;
      if (best < 0 || words[j].box.x < words[size_t(best)].box.x) best = int(j);
    }
    next[i] = best;
  }
  return next;
}

// The x range [x0, x1) of code points [from, to) of a word of n code
// points, spread evenly over its box.
std::pair<int, int> part_of(const rect& box, int from, int to, int n) {
  if (n <= 0) return {box.x, box.x + box.w};
  return {box.x + box.w * from / n, box.x + (box.w * to + n - 1) / n};
}

}  // namespace

std::vector<std::string> phrase_tokens(std::string_view phrase) {
  std::vector<std::string> tokens;
  std::string current;
  size_t i = 0;
  while (i < phrase.size()) {
    const size_t start = i;
    char32_t c = 0;
    if (!next_code_point(phrase, &i, &c)) {
      i = start + 1;
      c = 0xFFFD;
    }
    if (is_space(c)) {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
    } else {
      append_folded(current, c, phrase.substr(start, i - start));
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::vector<phrase_match> find_phrase(const std::vector<ocr_word>& words, std::string_view phrase,
                                      bool exact, size_t max_results) {
  const std::vector<std::string> tokens = phrase_tokens(phrase);
  std::vector<phrase_match> whole, partial;
  if (tokens.empty() || max_results == 0) return whole;
  std::vector<folded_word> folded;
  folded.reserve(words.size());
  for (const ocr_word& w : words) folded.push_back(fold_word(w.text));
  const size_t n = tokens.size();
  const std::vector<int> next = next_words(words);

  for (size_t i = 0; i < words.size(); ++i) {
    // The n words from word i along its line.
    std::vector<size_t> run{i};
    while (run.size() < n && next[run.back()] >= 0) run.push_back(size_t(next[run.back()]));
    if (run.size() < n) continue;
    bool ok = true;
    // Where the match starts in the first word and ends in the last, as
    // byte offsets in their folded text.
    size_t first_from = 0, last_to = folded[run[n - 1]].text.size();
    bool all_whole = true;
    for (size_t k = 0; k < n && ok; ++k) {
      const std::string& w = folded[run[k]].text;
      const std::string& t = tokens[k];
      if (w == t) continue;
      all_whole = false;
      if (exact) {
        ok = false;
      } else if (n == 1) {
        const size_t at = w.find(t);
        ok = at != std::string::npos;
        first_from = at;
        last_to = at + t.size();
      } else if (k == 0) {
        ok = ends_with(w, t);
        first_from = w.size() - t.size();
      } else if (k == n - 1) {
        ok = starts_with(w, t);
        last_to = t.size();
      } else {
        ok = false;
      }
    }
    if (!ok) continue;

    phrase_match m;
    m.whole_words = all_whole;
    m.confidence = 1;
    int x0 = words[i].box.x, y0 = words[i].box.y;
    int x1 = x0 + words[i].box.w, y1 = y0 + words[i].box.h;
    for (size_t k = 0; k < n; ++k) {
      const ocr_word& w = words[run[k]];
      if (k > 0) m.text += ' ';
      m.text += w.text;
      m.confidence = std::min(m.confidence, w.confidence);
      x0 = std::min(x0, w.box.x);
      y0 = std::min(y0, w.box.y);
      x1 = std::max(x1, w.box.x + w.box.w);
      y1 = std::max(y1, w.box.y + w.box.h);
    }
    // Narrowed to the matched characters of the first and last words.
    const folded_word& first = folded[run[0]];
    const folded_word& last = folded[run[n - 1]];
    if (first_from > 0 && first_from < first.index.size()) {
      x0 = part_of(words[run[0]].box, first.index[first_from], first.code_points, first.code_points)
               .first;
    }
    if (last_to > 0 && last_to < last.index.size()) {
      x1 = part_of(words[run[n - 1]].box, 0, last.index[last_to], last.code_points).second;
    }
    m.box = rect{x0, y0, std::max(1, x1 - x0), y1 - y0};
    (all_whole ? whole : partial).push_back(std::move(m));
  }
  for (phrase_match& m : partial) whole.push_back(std::move(m));
  if (whole.size() > max_results) whole.resize(max_results);
  return whole;
}

}  // namespace cu
