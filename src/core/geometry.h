// Owns: the coordinate session and all pure geometry: which model resolution
// a screen is downscaled to, image<->device point mapping, region mapping.
// Thread affinity: none; pure functions over plain values.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "util/result.h"

namespace cu {

struct size2 {
  int w = 0;
  int h = 0;
  bool operator==(const size2&) const = default;
};

struct rect {
  int x = 0;
  int y = 0;
  int w = 0;
  int h = 0;
  bool operator==(const rect&) const = default;
};

struct point {
  int x = 0;
  int y = 0;
  bool operator==(const point&) const = default;
};

// "(x, y)", as messages write a point.
std::string point_text(point p);

// What the last screenshot established: the device area it showed (origin
// and size in root-window pixels) and the size of the image the model saw.
// Every image<->device mapping goes through this one basis.
struct coord_session {
  rect device;
  size2 image;
  // Which screen the capture was of: the X server's generation (see
  // core/generation.h) and the root window's size then. A session is void
  // once the server is another or the root was resized.
  uint64_t generation = 0;
  size2 root;
  // A window's session (screenshot with `window`): nonzero, the window's
  // id, and device is in that window's own coordinates (its top-left
  // inside corner at 0, 0), so the session follows the window wherever it
  // moves. Zero: device is in root coordinates.
  uint32_t window = 0;
  bool operator==(const coord_session&) const = default;
};

// Where a gesture puts the pointer: a device pixel in root coordinates, or,
// with window set (a window's session), in that window's own coordinates,
// placed on the root when the gesture runs, so it follows the window.
struct device_target {
  point p;
  uint32_t window = 0;
};

// The image size a device area of this size is captured at: the model
// resolution (XGA 1024x768, WXGA 1280x800, FWXGA 1366x768) whose aspect ratio
// is within 0.02 of the device's and which is smaller than it; the closest
// ratio wins. Otherwise the device size itself (no scaling).
size2 model_resolution_for(size2 device);

// The most pixels an image is sent with: 1366x768's area, and this long
// edge. Clients refuse bigger images (or bill them heavily), and a
// screenshot this size reads well.
constexpr int64_t kMaxImageArea = 1366 * 768;
constexpr int kMaxImageEdge = 1568;

// The image size a device area is captured at: its model resolution when
// its aspect has one (model_resolution_for); otherwise its own size when
// that fits kMaxImageArea and kMaxImageEdge, else scaled down, aspect kept,
// to fit both.
size2 image_size_for(size2 device);

// The overlap of two rectangles; empty (all zero) when they do not meet.
rect intersect(const rect& a, const rect& b);

// The session a capture of this device area establishes (image_size_for).
coord_session make_session(rect device);

// Maps an image-space point to the device pixel at the centre of its
// footprint in the downscale, in root coordinates. A point outside
// [0, image.w) x [0, image.h) is an out_of_range error whose message starts
// with the point (the caller names the argument).
result<point> image_to_device(const coord_session& s, double x, double y);

// Maps a root-coordinate device pixel back to image space (clamped to the
// image), so cursor_position and clicks agree.
point device_to_image(const coord_session& s, point device);

// Maps a device rectangle (root coordinates) to the image pixels it covers,
// rounding outwards and not clamped: a window partly off the captured area
// reaches past the image's edges.
rect device_rect_to_image(const coord_session& s, const rect& r);

// Maps an image-space region [x0, y0, x1, y1] (x1 and y1 exclusive, at most
// the image size) to the device rectangle it covers, in root coordinates,
// rounding outwards so the crop contains every pixel the region touched. A
// region out of bounds is an out_of_range error whose message starts with
// the region (the caller names the argument).
result<rect> region_to_device(const coord_session& s, const std::array<int, 4>& region);

}  // namespace cu
