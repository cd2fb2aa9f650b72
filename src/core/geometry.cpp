#include "core/geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace cu {

std::string point_text(point p) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "(" + string.
  std::string out = "(";
  out += std::to_string(p.x);
  out += ", ";
  out += std::to_string(p.y);
  out += ')';
  return out;
}

size2 model_resolution_for(size2 device) {
  static constexpr size2 kTargets[] = {{1024, 768}, {1280, 800}, {1366, 768}};
  if (device.w <= 0 || device.h <= 0) return device;
  double ratio = double(device.w) / double(device.h);
  size2 best = device;
  double best_diff = 0.02;
  for (const size2& t : kTargets) {
    double diff = std::fabs(ratio - double(t.w) / double(t.h));
    if (diff <= best_diff && device.w > t.w && device.h > t.h) {
      best = t;
      best_diff = diff;
    }
  }
  return best;
}

size2 image_size_for(size2 device) {
  size2 model = model_resolution_for(device);
  if (model != device) return model;
  const double area = double(device.w) * double(device.h);
  double scale = std::min(std::sqrt(double(kMaxImageArea) / area),
                          double(kMaxImageEdge) / double(std::max(device.w, device.h)));
  if (scale >= 1) return device;
  // Rounded down, so both limits hold; never below one pixel.
  return size2{std::max(1, int(double(device.w) * scale)),
               std::max(1, int(double(device.h) * scale))};
}

rect intersect(const rect& a, const rect& b) {
  int x0 = std::max(a.x, b.x), y0 = std::max(a.y, b.y);
  int x1 = std::min(a.x + a.w, b.x + b.w), y1 = std::min(a.y + a.h, b.y + b.h);
  if (x1 <= x0 || y1 <= y0) return rect{};
  return rect{x0, y0, x1 - x0, y1 - y0};
}

coord_session make_session(rect device) {
  coord_session s;
  s.device = device;
  s.image = image_size_for({device.w, device.h});
  return s;
}

result<point> image_to_device(const coord_session& s, double x, double y) {
  if (!(x >= 0 && y >= 0 && x < s.image.w && y < s.image.h)) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "(%g, %g) is outside the %dx%d screenshot (x from 0 to %d, y from 0 to %d)", x, y,
             s.image.w, s.image.h, s.image.w - 1, s.image.h - 1);
    return make_error(errc::out_of_range, msg);
  }
  auto map = [](double v, int image, int device) {
    // The centre of image pixel floor(v) lies at (floor(v) + 0.5) * scale in
    // device space; fractional inputs keep their offset within the pixel.
    double d = std::floor((v + 0.5) * device / image);
    return d >= device ? device - 1 : int(d);
  };
  return point{s.device.x + map(x, s.image.w, s.device.w),
               s.device.y + map(y, s.image.h, s.device.h)};
}

point device_to_image(const coord_session& s, point device) {
  auto map = [](int v, int image, int dev) {
    if (v < 0) return 0;
    if (v >= dev) return image - 1;
    // Inverse of image_to_device: the image pixel whose footprint holds v.
    long long i = (2LL * v + 1) * image / (2LL * dev);
    return i >= image ? image - 1 : int(i);
  };
  return point{map(device.x - s.device.x, s.image.w, s.device.w),
               map(device.y - s.device.y, s.image.h, s.device.h)};
}

result<rect> region_to_device(const coord_session& s, const std::array<int, 4>& r) {
  int x0 = r[0], y0 = r[1], x1 = r[2], y1 = r[3];
  if (x0 < 0 || y0 < 0 || x1 > s.image.w || y1 > s.image.h || x0 >= x1 || y0 >= y1) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "[%d, %d, %d, %d] must satisfy 0 <= x0 < x1 <= %d and 0 <= y0 < y1 <= %d",
             x0, y0, x1, y1, s.image.w, s.image.h);
    return make_error(errc::out_of_range, msg);
  }
  auto lo = [](int v, int image, int dev) { return int((long long)v * dev / image); };
  auto hi = [](int v, int image, int dev) {
    return int(((long long)v * dev + image - 1) / image);
  };
  int dx0 = lo(x0, s.image.w, s.device.w), dx1 = hi(x1, s.image.w, s.device.w);
  int dy0 = lo(y0, s.image.h, s.device.h), dy1 = hi(y1, s.image.h, s.device.h);
  return rect{s.device.x + dx0, s.device.y + dy0, dx1 - dx0, dy1 - dy0};
}

rect device_rect_to_image(const coord_session& s, const rect& r) {
  auto floor_div = [](long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  auto map = [&](int v, int origin, int image, int dev, bool up) {
    long long n = (long long)(v - origin) * image;
    return int(up ? -floor_div(-n, dev) : floor_div(n, dev));
  };
  int x0 = map(r.x, s.device.x, s.image.w, s.device.w, false);
  int y0 = map(r.y, s.device.y, s.image.h, s.device.h, false);
  int x1 = map(r.x + r.w, s.device.x, s.image.w, s.device.w, true);
  int y1 = map(r.y + r.h, s.device.y, s.image.h, s.device.h, true);
  return rect{x0, y0, x1 - x0, y1 - y0};
}

}  // namespace cu
