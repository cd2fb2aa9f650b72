#include "vision/marks.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace cu {
namespace {

// The digits 0 to 9, three pixels wide and five tall, one row per element
// (bit 2 the left pixel): the smallest font whose digits no reader confuses.
constexpr uint8_t kDigits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 2, 2, 2}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
};
// Each font pixel drawn as a square this wide: digits 6 by 10 pixels, about
// a screen font's size, so a model reads them as it reads the labels. Where
// no place beside an element has room for that, the label shrinks to one
// pixel a dot (digits 3 by 5), still readable, rather than cover text.
struct label_style {
  int dot;      // A font pixel's side.
  int gap;      // Between two digits.
  int padding;  // Around the digits, inside the outline.
};
constexpr label_style kFull{2, 2, 3};
constexpr label_style kSmall{1, 1, 2};

label_style style_of(int dot) { return dot == kSmall.dot ? kSmall : kFull; }

size2 label_size_of(int n, label_style st) {
  const int count = int(std::to_string(n).size());
  return size2{count * 3 * st.dot + (count - 1) * st.gap + 2 * st.padding,
               5 * st.dot + 2 * st.padding};
}

struct rgb {
  uint8_t r, g, b;
};
constexpr rgb kLabelFill{24, 24, 24};
constexpr rgb kLabelLine{255, 255, 255};
constexpr rgb kDigitColor{255, 255, 255};
// The element's outline: a saturated magenta that reads on white, on black
// and on the usual theme colours, and is rare in applications.
constexpr rgb kBoxColor{230, 30, 200};

bool overlaps(const rect& a, const rect& b) { return intersect(a, b).w > 0; }

int64_t area_of(const rect& r) { return int64_t(r.w) * int64_t(r.h); }

bool holds(const rect& r, point p) {
  return p.x >= r.x && p.x < r.x + r.w && p.y >= r.y && p.y < r.y + r.h;
}

point centre(const rect& r) { return point{r.x + r.w / 2, r.y + r.h / 2}; }

void put(uint8_t* px, size2 image, int x, int y, rgb c) {
  if (x < 0 || y < 0 || x >= image.w || y >= image.h) return;
  uint8_t* p = px + (size_t(y) * size_t(image.w) + size_t(x)) * 3;
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

void fill(uint8_t* px, size2 image, const rect& r, rgb c) {
  for (int y = r.y; y < r.y + r.h; ++y) {
    for (int x = r.x; x < r.x + r.w; ++x) put(px, image, x, y, c);
  }
}

// A one-pixel outline of r.
void outline(uint8_t* px, size2 image, const rect& r, rgb c) {
  for (int x = r.x; x < r.x + r.w; ++x) {
    put(px, image, x, r.y, c);
    put(px, image, x, r.y + r.h - 1, c);
  }
  for (int y = r.y; y < r.y + r.h; ++y) {
    put(px, image, r.x, y, c);
    put(px, image, r.x + r.w - 1, y, c);
  }
}

// The label: a dark box with its corners cut (rounded), a light outline,
// and the number in light digits; light on dark inside a light line reads
// on a dark background and on a light one alike.
void draw_label(uint8_t* px, size2 image, const rect& at, int n, label_style st) {
  fill(px, image, rect{at.x + 1, at.y + 1, at.w - 2, at.h - 2}, kLabelFill);
  for (int x = at.x + 1; x < at.x + at.w - 1; ++x) {
    put(px, image, x, at.y, kLabelLine);
    put(px, image, x, at.y + at.h - 1, kLabelLine);
  }
  for (int y = at.y + 1; y < at.y + at.h - 1; ++y) {
    put(px, image, at.x, y, kLabelLine);
    put(px, image, at.x + at.w - 1, y, kLabelLine);
  }
  int x = at.x + st.padding;
  const int y = at.y + st.padding;
  for (char ch : std::to_string(n)) {
    const uint8_t* glyph = kDigits[ch - '0'];
    for (int row = 0; row < 5; ++row) {
      for (int col = 0; col < 3; ++col) {
        if ((glyph[row] >> (2 - col)) & 1) {
          fill(px, image, rect{x + col * st.dot, y + row * st.dot, st.dot, st.dot}, kDigitColor);
        }
      }
    }
    x += 3 * st.dot + st.gap;
  }
}

// Where an element's own text most likely is: all of an OCR line; the
// middle rows of a control's box (a control pads its text above and below,
// so a label over its top or bottom edge covers only padding).
rect text_zone(const mark_candidate& c) {
  if (c.source == mark_source::ocr || c.box.h < 8) return c.box;
  return rect{c.box.x + 2, c.box.y + c.box.h / 4, std::max(c.box.w - 4, 1), c.box.h - c.box.h / 2};
}

// Whether a label at `at` covers c's own text. Inside the right end of a
// control's box (its right two fifths) it does not: text starts at the
// left or sits centred, and the right end holds at most an arrow or
// nothing; but a check or radio button's box ends where its text does.
bool covers_own_text(const rect& at, const mark_candidate& c) {
  if (!overlaps(at, text_zone(c))) return false;
  if (c.source == mark_source::ocr || c.role == "check box" || c.role == "radio button") return true;
  const bool inside = at.x >= c.box.x && at.y >= c.box.y && at.x + at.w <= c.box.x + c.box.w &&
                      at.y + at.h <= c.box.y + c.box.h;
  return !(inside && (at.x - c.box.x) * 5 >= c.box.w * 3);
}

struct place {
  rect at;
  label_style style;
};

// Where the label for number n may go beside box, best first when nothing
// is in the way: in the gap above the box (off the element) at its left
// and at its right end, then right of the box's end, full size and then
// small (a small label in a gap covers nothing; a full one over a control
// covers some of it); then inside the box's right end; then, as the last
// resorts, left of it, inside its top-left corner, below it.
std::vector<place> label_places(const rect& box, int n) {
  auto outside = [&](label_style st) {
    const size2 s = label_size_of(n, st);
    const int mid = box.y + (box.h - s.h) / 2;
    return std::vector<place>{{rect{box.x, box.y - s.h, s.w, s.h}, st},
                              {rect{box.x + box.w - s.w, box.y - s.h, s.w, s.h}, st},
                              {rect{box.x + box.w, std::max(mid, box.y - s.h / 2), s.w, s.h}, st}};
  };
  auto inside_end = [&](label_style st) {
    const size2 s = label_size_of(n, st);
    return place{rect{box.x + box.w - s.w - 1, box.y + (box.h - s.h) / 2, s.w, s.h}, st};
  };
  std::vector<place> places = outside(kFull);
  for (const place& p : outside(kSmall)) places.push_back(p);
  places.push_back(inside_end(kFull));
  places.push_back(inside_end(kSmall));
  const size2 s = label_size_of(n, kFull);
  places.push_back({rect{box.x - s.w, box.y, s.w, s.h}, kFull});
  places.push_back({rect{box.x, box.y, s.w, s.h}, kFull});
  places.push_back({rect{box.x, box.y + box.h, s.w, s.h}, kFull});
  return places;
}

// Whether an element's left or right edge falls in the gap between the
// line so far and the word beside it (give or take half a character, since
// a control's box starts a few pixels before its text, at its indicator or
// padding), on rows both share.
bool edge_between(const rect& line, const rect& word, const std::vector<mark_candidate>& elements) {
  const bool right = word.x >= line.x;
  const int slack = std::max(line.h, word.h) / 2;
  const int lo = right ? line.x + line.w - slack : word.x + word.w - slack;
  const int hi = right ? word.x + slack : line.x + slack;
  const int top = std::max(line.y, word.y);
  const int bottom = std::min(line.y + line.h, word.y + word.h);
  for (const mark_candidate& e : elements) {
    if (e.source == mark_source::ocr || e.box.y >= bottom || e.box.y + e.box.h <= top) continue;
    for (int x : {e.box.x, e.box.x + e.box.w}) {
      if (x > lo && x < hi) return true;
    }
  }
  return false;
}

}  // namespace

rect uncovered_piece(const rect& bar, const std::vector<rect>& above) {
  // The covered columns as intervals, sorted; the widest gap between them.
  std::vector<std::pair<int, int>> covered;
  for (const rect& a : above) {
    const rect both = intersect(a, bar);
    if (both.w > 0 && both.h > 0) covered.emplace_back(both.x, both.x + both.w);
  }
  std::sort(covered.begin(), covered.end());
  rect best{bar.x, bar.y, 0, 0};
  int from = bar.x;
  auto consider = [&](int to) {
    if (to - from > best.w) best = rect{from, bar.y, to - from, bar.h};
  };
  for (const auto& [a, b] : covered) {
    consider(a);
    from = std::max(from, b);
  }
  consider(bar.x + bar.w);
  return best;
}

const char* mark_source_name(mark_source s) {
  switch (s) {
    case mark_source::a11y:
      return "a11y";
    case mark_source::windows:
      return "windows";
    case mark_source::ocr:
      return "ocr";
  }
  return "a11y";
}

size2 label_size(int n) { return label_size_of(n, kFull); }

std::vector<mark_candidate> ocr_lines(std::vector<mark_candidate> words,
                                      const std::vector<mark_candidate>& elements) {
  // Words Tesseract barely believes are noise (a border, an icon), unless
  // they sit in a line with words it does believe: a terminal's "lib64" at
  // 0.48 beside "lib32" at 0.74 is text, and dropping it cut the line.
  std::erase_if(words, [](const mark_candidate& w) { return w.confidence < 0.25f || w.name.empty(); });
  std::sort(words.begin(), words.end(), [](const mark_candidate& a, const mark_candidate& b) {
    return std::tie(a.box.y, a.box.x) < std::tie(b.box.y, b.box.x);
  });
  std::vector<mark_candidate> lines;
  std::vector<bool> used(words.size(), false);
  for (size_t i = 0; i < words.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    std::vector<size_t> members{i};
    rect box = words[i].box;
    // Words on the same line (their middles within the line's rows) on
    // either side, each within a gap of about a character and a half: a
    // line's first word may sit a pixel lower than a later one, so the
    // word the sort met first is not always the leftmost.
    for (bool grew = true; grew;) {
      grew = false;
      size_t best = words.size();
      int best_gap = 0;
      for (size_t k = 0; k < words.size(); ++k) {
        if (used[k]) continue;
        const rect& w = words[k].box;
        const int mid = w.y + w.h / 2;
        const int h = std::max(box.h, w.h);
        const int gap = w.x >= box.x ? w.x - (box.x + box.w) : box.x - (w.x + w.w);
        if (mid < box.y || mid > box.y + box.h || gap < -2 || gap > h * 3 / 2) continue;
        if (edge_between(box, w, elements)) continue;
        if (best == words.size() || gap < best_gap) {
          best = k;
          best_gap = gap;
        }
      }
      if (best != words.size()) {
        used[best] = true;
        members.push_back(best);
        const rect& w = words[best].box;
        const int x0 = std::min(box.x, w.x);
        const int x1 = std::max(box.x + box.w, w.x + w.w);
        const int y0 = std::min(box.y, w.y);
        const int y1 = std::max(box.y + box.h, w.y + w.h);
        box = rect{x0, y0, x1 - x0, y1 - y0};
        grew = true;
      }
    }
    std::sort(members.begin(), members.end(),
              [&](size_t a, size_t b) { return words[a].box.x < words[b].box.x; });
    mark_candidate line = words[i];
    line.box = box;
    line.name.clear();
    bool believed = false;
    bool legible = false;
    for (size_t k : members) {
      if (!line.name.empty()) line.name += ' ';
      line.name += words[k].name;
      line.confidence = std::max(line.confidence, words[k].confidence);
      believed = believed || words[k].confidence >= 0.5f;
      for (unsigned char ch : words[k].name) {
        // A letter or digit: ASCII ones, or a character of two or more UTF-8
        // bytes other than those led by E2 (U+2000 to U+2FFF: punctuation,
        // arrows, box drawing and other symbols).
        legible = legible || std::isalnum(ch) || (ch >= 0xC2 && ch != 0xE2);
      }
    }
    // A line with no word Tesseract believes, or with no letter or digit
    // (a rule read as a dash), is not text to act on.
    if (believed && legible) lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<mark> make_marks(std::vector<mark_candidate> candidates, const rect& within,
                             size2 image, size_t most, size_t* left_out) {
  // Inside, and big enough to act on.
  std::erase_if(candidates, [&](const mark_candidate& c) {
    return c.box.w < 2 || c.box.h < 2 || !holds(within, centre(c.box));
  });
  // A control window's name is the text read inside it, in reading order
  // (the OCR lines themselves are dropped below, as inside any element).
  for (mark_candidate& c : candidates) {
    if (!c.named_by_text) continue;
    std::vector<const mark_candidate*> inside;
    for (const mark_candidate& t : candidates) {
      if (t.source == mark_source::ocr && holds(c.box, centre(t.box))) inside.push_back(&t);
    }
    if (inside.empty()) continue;
    std::sort(inside.begin(), inside.end(), [](const mark_candidate* a, const mark_candidate* b) {
      return std::make_tuple(a->box.y / 8, a->box.x) < std::make_tuple(b->box.y / 8, b->box.x);
    });
    c.name.clear();
    for (const mark_candidate* t : inside) {
      if (!c.name.empty()) c.name += ' ';
      c.name += t->name;
    }
  }
  // By position: rows of 8 pixels (less than any control's height, so two
  // controls side by side share a row however their tops differ by a
  // pixel), then left to right; the rest of the key only orders what sits
  // at the same place, so that the order never depends on arrival.
  auto key = [](const mark_candidate& c) {
    return std::make_tuple(c.box.y / 8, c.box.x, c.box.y, c.box.w, c.box.h, int(c.source), c.role,
                           c.name);
  };
  std::sort(candidates.begin(), candidates.end(),
            [&](const mark_candidate& a, const mark_candidate& b) { return key(a) < key(b); });
  std::vector<const mark_candidate*> kept;
  for (const mark_candidate& c : candidates) {
    bool repeated = false;
    for (const mark_candidate* k : kept) {
      if (c.source == mark_source::ocr) {
        // Text an element or a title bar already marks.
        if (k->source != mark_source::ocr && holds(k->box, centre(c.box))) repeated = true;
      } else if (k->source == c.source || k->source != mark_source::ocr) {
        // The same place twice (a menu and its item, a combo box and its
        // button): most of each box is the other's.
        const int64_t both = area_of(intersect(k->box, c.box));
        if (both * 10 >= area_of(c.box) * 8 && both * 10 >= area_of(k->box) * 8) repeated = true;
      }
      if (repeated) break;
    }
    if (!repeated) kept.push_back(&c);
  }
  // An OCR line the elements sorted after it cover is dropped as well.
  std::vector<const mark_candidate*> map;
  for (const mark_candidate* c : kept) {
    bool covered = false;
    if (c->source == mark_source::ocr) {
      for (const mark_candidate* k : kept) {
        if (k->source != mark_source::ocr && holds(k->box, centre(c->box))) covered = true;
      }
    }
    if (!covered) map.push_back(c);
  }
  *left_out = map.size() > most ? map.size() - most : 0;
  if (map.size() > most) map.resize(most);

  std::vector<mark> out;
  out.reserve(map.size());
  for (size_t i = 0; i < map.size(); ++i) {
    mark m;
    m.n = int(i) + 1;
    m.what = *map[i];
    out.push_back(std::move(m));
  }
  // Labels placed in number order, each where it covers least, in this
  // order of weight: the image's edge, another label, text (another
  // element's or its own), another element's box at all; among equals the
  // first in label_places' order.
  const rect frame{0, 0, image.w, image.h};
  for (mark& m : out) {
    int64_t best_cost = INT64_MAX;
    int64_t rank = 0;
    for (const place& p : label_places(m.what.box, m.n)) {
      const rect& at = p.at;
      int64_t cost = rank++;
      const rect in = intersect(at, frame);
      if (in.w != at.w || in.h != at.h) cost += int64_t(1) << 40;
      for (const mark& o : out) {
        if (&o == &m) continue;
        if (o.n < m.n && overlaps(o.label, at)) cost += int64_t(1) << 30;
        if (overlaps(text_zone(o.what), at)) cost += int64_t(1) << 20;
        if (overlaps(o.what.box, at)) cost += int64_t(1) << 10;
      }
      if (covers_own_text(at, m.what)) cost += int64_t(1) << 20;
      if (cost < best_cost) {
        best_cost = cost;
        m.label = at;
        m.label_dot = p.style.dot;
      }
    }
  }
  return out;
}

void draw_marks(uint8_t* rgb, size2 image, const std::vector<mark>& marks) {
  for (const mark& m : marks) outline(rgb, image, m.what.box, kBoxColor);
  for (const mark& m : marks) draw_label(rgb, image, m.label, m.n, style_of(m.label_dot));
}

}  // namespace cu
