#include "vision/look_diff.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

namespace cu {
namespace {

int64_t area_of(const rect& r) { return int64_t(r.w) * int64_t(r.h); }

rect bounding(const rect& a, const rect& b) {
  const int x0 = std::min(a.x, b.x), y0 = std::min(a.y, b.y);
  const int x1 = std::max(a.x + a.w, b.x + b.w), y1 = std::max(a.y + a.h, b.y + b.h);
  return rect{x0, y0, x1 - x0, y1 - y0};
}

// Whether a and b overlap once one is grown by gap on every side.
bool near(const rect& a, const rect& b, int gap) {
  return a.x - gap < b.x + b.w && b.x - gap < a.x + a.w && a.y - gap < b.y + b.h &&
         b.y - gap < a.y + a.h;
}

// Adds r to out, merged with every rect of out near it (and near what that
// made, and so on).
void absorb(std::vector<rect>& out, rect r, int gap) {
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < out.size(); ++i) {
      if (!near(out[i], r, gap)) continue;
      r = bounding(r, out[i]);
      out.erase(out.begin() + std::ptrdiff_t(i));
      grew = true;
      break;
    }
  }
  out.push_back(r);
}

// Merges the pair that costs the least new area until at most most are left.
void reduce(std::vector<rect>& out, size_t most, int gap) {
  while (out.size() > most) {
    size_t bi = 0, bj = 1;
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < out.size(); ++i) {
      for (size_t j = i + 1; j < out.size(); ++j) {
        const int64_t extra = area_of(bounding(out[i], out[j])) - area_of(out[i]) - area_of(out[j]);
        if (extra < best) best = extra, bi = i, bj = j;
      }
    }
    const rect merged = bounding(out[bi], out[bj]);
    out.erase(out.begin() + std::ptrdiff_t(bj));
    out.erase(out.begin() + std::ptrdiff_t(bi));
    absorb(out, merged, gap);
  }
}

int digits(int n) { return int(std::to_string(n).size()); }

int64_t distance2(const rect& a, const rect& b) {
  const int64_t dx = int64_t(a.x) * 2 + a.w - (int64_t(b.x) * 2 + b.w);
  const int64_t dy = int64_t(a.y) * 2 + a.h - (int64_t(b.y) * 2 + b.h);
  return dx * dx + dy * dy;
}

bool same_thing(const mark& a, const mark& b) {
  return a.what.source == b.what.source && a.what.role == b.what.role &&
         a.what.name == b.what.name;
}

}  // namespace

std::vector<rect> merge_rects(std::vector<rect> rects, int gap, size_t most) {
  most = std::max<size_t>(most, 1);
  std::vector<rect> out;
  for (const rect& r : rects) {
    if (r.w <= 0 || r.h <= 0) continue;
    absorb(out, r, gap);
    // A screen drawn on in many scattered places: the pairwise merge stays
    // cheap because the list never grows far past the bound.
    if (out.size() > 4 * most + 16) reduce(out, most, gap);
  }
  reduce(out, most, gap);
  std::sort(out.begin(), out.end(),
            [](const rect& a, const rect& b) { return std::tie(a.y, a.x) < std::tie(b.y, b.x); });
  return out;
}

std::vector<rect> differing_tiles(const uint8_t* before, const uint8_t* after, size2 image,
                                  const std::vector<rect>& within, int tile) {
  std::vector<rect> out;
  if (image.w <= 0 || image.h <= 0 || tile <= 0) return out;
  const int cols = (image.w + tile - 1) / tile, rows = (image.h + tile - 1) / tile;
  // Tiles already looked at: rectangles of within may overlap.
  std::vector<uint8_t> seen(size_t(cols) * size_t(rows), 0);
  std::vector<size_t> hits;
  const size_t stride = size_t(image.w) * 3;
  for (const rect& w : within) {
    const rect r = intersect(w, rect{0, 0, image.w, image.h});
    if (r.w <= 0 || r.h <= 0) continue;
    for (int ty = r.y / tile; ty <= (r.y + r.h - 1) / tile; ++ty) {
      for (int tx = r.x / tile; tx <= (r.x + r.w - 1) / tile; ++tx) {
        const size_t at = size_t(ty) * size_t(cols) + size_t(tx);
        if (seen[at]) continue;
        seen[at] = 1;
        const int x0 = tx * tile, y0 = ty * tile;
        const int w = std::min(tile, image.w - x0), h = std::min(tile, image.h - y0);
        const size_t offset = size_t(x0) * 3, bytes = size_t(w) * 3;
        for (int y = y0; y < y0 + h; ++y) {
          const size_t row = size_t(y) * stride + offset;
          if (std::memcmp(before + row, after + row, bytes) != 0) {
            hits.push_back(at);
            break;
          }
        }
      }
    }
  }
  std::sort(hits.begin(), hits.end());
  for (size_t at : hits) {
    const int x0 = int(at % size_t(cols)) * tile, y0 = int(at / size_t(cols)) * tile;
    out.push_back(rect{x0, y0, std::min(tile, image.w - x0), std::min(tile, image.h - y0)});
  }
  return out;
}

rect pad_within(const rect& r, int pad, size2 image) {
  return intersect(rect{r.x - pad, r.y - pad, r.w + 2 * pad, r.h + 2 * pad},
                   rect{0, 0, image.w, image.h});
}

marks_diff carry_numbers(std::vector<mark>& now, const std::vector<mark>& before) {
  struct pairing {
    int64_t distance;
    size_t now, before;
  };
  std::vector<pairing> pairs;
  for (size_t i = 0; i < now.size(); ++i) {
    for (size_t j = 0; j < before.size(); ++j) {
      if (same_thing(now[i], before[j])) pairs.push_back({distance2(now[i].what.box, before[j].what.box), i, j});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const pairing& a, const pairing& b) {
    return std::tie(a.distance, a.now, a.before) < std::tie(b.distance, b.now, b.before);
  });
  std::vector<int> match(now.size(), -1);
  std::vector<bool> taken(before.size(), false);
  for (const pairing& p : pairs) {
    if (match[p.now] >= 0 || taken[p.before]) continue;
    match[p.now] = int(p.before);
    taken[p.before] = true;
  }
  int next = 1;
  for (const mark& m : before) next = std::max(next, m.n + 1);
  marks_diff d;
  for (size_t i = 0; i < now.size(); ++i) {
    mark& m = now[i];
    const int was = m.n;
    if (match[i] >= 0) {
      const mark& old = before[size_t(match[i])];
      m.n = old.n;
      if (old.what.box != m.what.box) d.moved.push_back(mark_move{m.n, old.what.box, m.what.box});
    } else {
      m.n = next++;
      d.appeared.push_back(m.n);
    }
    // A digit is three dots and a gap of one dot wide (vision/marks.cpp).
    m.label.w += (digits(m.n) - digits(was)) * 4 * m.label_dot;
  }
  for (size_t j = 0; j < before.size(); ++j) {
    if (!taken[j]) d.gone.push_back(before[j].n);
  }
  std::sort(d.gone.begin(), d.gone.end());
  std::sort(d.moved.begin(), d.moved.end(),
            [](const mark_move& a, const mark_move& b) { return a.n < b.n; });
  std::sort(now.begin(), now.end(), [](const mark& a, const mark& b) { return a.n < b.n; });
  return d;
}

}  // namespace cu
