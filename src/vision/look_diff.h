// Owns: what changed between two looks, as pure functions: the rectangles
// drawn on since the earlier look merged into a few crops, and the marks of
// a new map matched with the earlier map's by identity, so that a mark the
// model has seen keeps its number.
// Thread affinity: none (pure functions over plain values).
#pragma once

#include <cstdint>
#include <vector>

#include "core/geometry.h"
#include "vision/marks.h"

namespace cu {

// rects merged: two that overlap or lie within gap pixels of each other
// become their bounding box (again until none do), and while more than most
// are left the pair whose bounding box adds the least area is merged. Empty
// rects are dropped. The result is sorted top to bottom, then left to right.
std::vector<rect> merge_rects(std::vector<rect> rects, int gap, size_t most);

// The edge of the tiles two looks' pixels are compared in: small enough
// that a changed glyph or spinner stays a small crop, large enough that the
// merge afterwards sees few rectangles.
constexpr int kDiffTile = 8;

// Where two images of the same size differ, within rects: the tiles (tile
// by tile image pixels on a grid from (0, 0), clipped to the image) that
// any of within touches and in which before and after (RGB, image.w * 3
// bytes a row) differ in some byte, each tile once, top to bottom, then
// left to right. The scaler is deterministic, so equal screen pixels give
// equal bytes: no tolerance is needed.
std::vector<rect> differing_tiles(const uint8_t* before, const uint8_t* after, size2 image,
                                  const std::vector<rect>& within, int tile = kDiffTile);

// rect r grown by pad on every side and clamped to [0, image): empty when
// nothing of it is in the image.
rect pad_within(const rect& r, int pad, size2 image);

// A mark whose box changed between two looks.
struct mark_move {
  int n = 0;
  rect from;
  rect to;
};

// How a new map relates to an earlier one of the same image space.
struct marks_diff {
  std::vector<int> appeared;     // New numbers, in position order.
  std::vector<mark_move> moved;  // By number.
  std::vector<int> gone;         // Numbers of the earlier map, ascending.
};

// Renumbers now (a map numbered by position) against before: a mark of now
// with the same source, role and name as one of before takes that one's
// number (each of before once; among several alike the nearest box pairs
// first); the others get numbers after the highest of before, in now's
// order. now ends sorted by number; the diff says what appeared, moved and
// went away. A label grown by a longer number is widened where it stands.
marks_diff carry_numbers(std::vector<mark>& now, const std::vector<mark>& before);

}  // namespace cu
