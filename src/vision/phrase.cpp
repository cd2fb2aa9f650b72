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

// What a person reads as the word when OCR glues a frame's edge or a
// bracket to it: the folded text without the marks at its ends that are
// not letters or digits (a button's border reads "|" or "[", "Save" in
// quotes keeps its quotes). Empty when the word is only such marks.
std::string_view core_of(std::string_view w) {
  auto mark = [](char c) { return std::string_view("|[](){}<>'\"`.,:;!?*_~").find(c) !=
                                  std::string_view::npos; };
  size_t a = 0, b = w.size();
  while (a < b && mark(w[a])) ++a;
  while (b > a && mark(w[b - 1])) --b;
  return w.substr(a, b - a);
}

// Whether a word read is the token whole: equal, or equal once the marks
// at both ends are set aside.
bool same_word(std::string_view word, std::string_view token) {
  if (word == token) return true;
  const std::string_view c = core_of(word);
  return !c.empty() && c == core_of(token);
}

// Whether code point boundary at byte i of a folded word starts or ends a
// part a person sees as a word of its own: the ends of its core, a change
// from a lower case letter to a capital in the word as read ("PressMe"),
// or between letters and digits.
bool word_boundary(std::string_view read, std::string_view folded, size_t i) {
  const std::string_view c = core_of(folded);
  const size_t begin = size_t(c.data() - folded.data()), end = begin + c.size();
  if (i <= begin || i >= end) return true;
  if (read.size() != folded.size()) return false;
  const char a = read[i - 1], b = read[i];
  const bool a_digit = a >= '0' && a <= '9', b_digit = b >= '0' && b <= '9';
  if (a_digit != b_digit) return true;
  return a >= 'a' && a <= 'z' && b >= 'A' && b <= 'Z';
}

// The Levenshtein distance between a and b, in bytes.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
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
  // By rank: whole words; parts of words that a person would see as words
  // of their own ("Press" in "PressMe"); other parts ("Press" in "pressed").
  std::vector<phrase_match> ranked[3];
  if (tokens.empty() || max_results == 0) return {};
  std::vector<folded_word> folded;
  folded.reserve(words.size());
  for (const ocr_word& w : words) folded.push_back(fold_word(w.text));
  const size_t n = tokens.size();
  const std::vector<int> next = next_words(words);
  std::string glued_tokens;
  for (const std::string& t : tokens) glued_tokens += core_of(t);

  auto add = [&](const std::vector<size_t>& run, int rank, size_t first_from, size_t last_to) {
    phrase_match m;
    m.whole_words = rank == 0;
    m.confidence = 1;
    int x0 = words[run[0]].box.x, y0 = words[run[0]].box.y;
    int x1 = x0 + words[run[0]].box.w, y1 = y0 + words[run[0]].box.h;
    for (size_t k = 0; k < run.size(); ++k) {
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
    const folded_word& first = folded[run.front()];
    const folded_word& last = folded[run.back()];
    if (first_from > 0 && first_from < first.index.size()) {
      x0 = part_of(words[run.front()].box, first.index[first_from], first.code_points,
                   first.code_points)
               .first;
    }
    if (last_to > 0 && last_to < last.index.size()) {
      x1 = part_of(words[run.back()].box, 0, last.index[last_to], last.code_points).second;
    }
    m.box = rect{x0, y0, std::max(1, x1 - x0), y1 - y0};
    ranked[rank].push_back(std::move(m));
  };

  for (size_t i = 0; i < words.size(); ++i) {
    // The n words from word i along its line.
    std::vector<size_t> run{i};
    while (run.size() < n && next[run.back()] >= 0) run.push_back(size_t(next[run.back()]));

    // The phrase's words read as fewer words, their spaces lost ("Press
    // Me" read "|PressMe|": a button's narrow space next to its border):
    // whole words, as a person reads them.
    if (n > 1) {
      std::string glued;
      bool found = false;
      for (size_t k = 0; k < run.size() && k + 1 < n && !found; ++k) {
        glued += core_of(folded[run[k]].text);
        if (glued == glued_tokens) {
          add(std::vector<size_t>(run.begin(), run.begin() + std::ptrdiff_t(k + 1)), 0, 0,
              folded[run[k]].text.size());
          found = true;
        }
      }
      if (found) continue;
    }
    if (run.size() < n) continue;
    bool ok = true;
    // Where the match starts in the first word and ends in the last, as
    // byte offsets in their folded text.
    size_t first_from = 0, last_to = folded[run[n - 1]].text.size();
    bool all_whole = true;
    for (size_t k = 0; k < n && ok; ++k) {
      const std::string& w = folded[run[k]].text;
      const std::string& t = tokens[k];
      if (same_word(w, t)) continue;
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
    int rank = 0;
    if (!all_whole) {
      const ocr_word& fw = words[run.front()];
      const ocr_word& lw = words[run.back()];
      const bool bounded = word_boundary(fw.text, folded[run.front()].text, first_from) &&
                           word_boundary(lw.text, folded[run.back()].text, last_to);
      rank = bounded ? 1 : 2;
    }
    add(run, rank, all_whole ? 0 : first_from, all_whole ? folded[run.back()].text.size() : last_to);
  }
  std::vector<phrase_match> out;
  for (auto& group : ranked) {
    for (phrase_match& m : group) {
      if (out.size() == max_results) return out;
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<near_text> nearest_words(const std::vector<ocr_word>& words, std::string_view phrase,
                                     size_t most) {
  const std::vector<std::string> tokens = phrase_tokens(phrase);
  std::vector<near_text> out;
  if (tokens.empty() || most == 0) return out;
  std::string want;
  for (const std::string& t : tokens) want += core_of(t);
  if (want.empty()) want = tokens.front();
  const std::vector<int> next = next_words(words);
  std::vector<std::pair<double, size_t>> order;  // (similarity, index into out)
  for (size_t i = 0; i < words.size(); ++i) {
    // The best of the runs of 1 to n words from word i along its line.
    std::vector<size_t> run;
    std::string glued;
    double best = -1;
    size_t best_len = 0;
    for (size_t k = i; run.size() < std::min<size_t>(tokens.size(), 8);) {
      run.push_back(k);
      glued += core_of(fold_word(words[k].text).text);
      const size_t longer = std::max(glued.size(), want.size());
      const double similar =
          longer == 0 ? 0 : 1.0 - double(edit_distance(glued, want)) / double(longer);
      if (similar > best) {
        best = similar;
        best_len = run.size();
      }
      if (next[k] < 0 || glued.size() > kMaxPhraseBytes) break;
      k = size_t(next[k]);
    }
    near_text t;
    t.similarity = std::max(0.0, best);
    int x0 = words[i].box.x, y0 = words[i].box.y;
    int x1 = x0 + words[i].box.w, y1 = y0 + words[i].box.h;
    for (size_t k = 0; k < best_len; ++k) {
      const ocr_word& w = words[run[k]];
      if (k > 0) t.text += ' ';
      t.text += w.text;
      x0 = std::min(x0, w.box.x);
      y0 = std::min(y0, w.box.y);
      x1 = std::max(x1, w.box.x + w.box.w);
      y1 = std::max(y1, w.box.y + w.box.h);
    }
    t.box = rect{x0, y0, x1 - x0, y1 - y0};
    order.emplace_back(t.similarity, out.size());
    out.push_back(std::move(t));
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<near_text> best;
  for (const auto& [similar, index] : order) {
    if (best.size() == most) break;
    best.push_back(std::move(out[index]));
  }
  return best;
}

}  // namespace cu
