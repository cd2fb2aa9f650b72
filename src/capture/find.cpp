#include "capture/find.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "capture/png.h"
#include "core/json_writer.h"
#include "util/str_cat.h"
#include "vision/match.h"
#include "x11/windows.h"

namespace cu {
namespace {

// The longest template file read (a template is a part of a screen; its
// pixels are bounded by vision/match.h's kMaxTemplateSide).
constexpr size_t kMaxTemplateFileBytes = 32u << 20;

error invalid_template(const char* what, const std::string& why) {
  return error{errc::invalid_argument, str_cat("Invalid argument \"", what, "\": ", why)};
}

// Whether a PNG's header declares a template that can be searched for in
// an image of size searched: read before anything is decoded or allocated.
status check_template_header(std::span<const uint8_t> png, const char* what, size2 searched) {
  auto size = png_header_size(png);
  if (!size) return invalid_template(what, size.err().message);
  if (auto e = check_template_size(size->w, size->h); !e) {
    return invalid_template(what, e.err().message);
  }
  if (size->w > searched.w || size->h > searched.h) {
    return invalid_template(what, str_cat("the template (", std::to_string(size->w), "x",
                                          std::to_string(size->h),
                                          ") is larger than the image searched (",
                                          std::to_string(searched.w), "x",
                                          std::to_string(searched.h), ")"));
  }
  return {};
}

// A PNG's pixels in grey, whatever its colour type (alpha is dropped).
result<gray_image> decode_png_gray(const std::vector<uint8_t>& png, const char* what,
                                   size2 searched) {
  if (auto e = check_template_header(png, what, searched); !e) return e.take_error();
  auto rgb = decode_png_rgb(png, uint32_t(kMaxTemplateSide));
  if (!rgb) return invalid_template(what, rgb.err().message);
  return to_gray(rgb->rgb.data(), rgb->w, rgb->h, size_t(rgb->w) * 3, kLayoutRgb);
}

// The file's bytes, once its header has passed check_template_header: a
// file declaring an image too large is refused before the rest is read.
result<std::vector<uint8_t>> read_template_file(const std::string& path, size2 searched) {
  // Non-blocking, so that a FIFO or a device named here cannot hold the
  // worker: only a regular file is read.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return make_error(errc::invalid_argument,
                      str_cat("Invalid argument \"template_path\": cannot read ", path, ": ",
                              strerror(errno)));
  }
  struct closer {
    int fd;
    ~closer() { close(fd); }
  } closing{fd};
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      uint64_t(st.st_size) > kMaxTemplateFileBytes) {
    return make_error(errc::invalid_argument,
                      str_cat("Invalid argument \"template_path\": ", path,
                              " is not a regular file of at most 32 MiB"));
  }
  uint8_t header[24];
  const ssize_t head = pread(fd, header, sizeof header, 0);
  const std::span<const uint8_t> start(header, size_t(std::max<ssize_t>(head, 0)));
  if (auto e = check_template_header(start, "template_path", searched); !e) return e.take_error();
  std::vector<uint8_t> bytes(size_t(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(errc::io, str_cat("cannot read ", path));
    got += size_t(n);
  }
  return bytes;
}

rect region_rect(const std::array<int, 4>& r) { return rect{r[0], r[1], r[2] - r[0], r[3] - r[1]}; }

// Whether r lies inside an image of this size, as region_to_device says.
std::optional<std::string> bad_region(const std::array<int, 4>& r, size2 image) {
  if (r[0] < 0 || r[1] < 0 || r[2] > image.w || r[3] > image.h || r[0] >= r[2] || r[1] >= r[3]) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "[%d, %d, %d, %d] must satisfy 0 <= x0 < x1 <= %d and 0 <= y0 < y1 <= %d", r[0],
             r[1], r[2], r[3], image.w, image.h);
    return std::string(msg);
  }
  return std::nullopt;
}

}  // namespace

result<session_pixels> grab_session_pixels(grabber& g, const capture_job& job,
                                           coord_session stamp) {
  const std::string gone_size =
      "changed size since the screenshot its coordinates refer to; take a new screenshot";
  auto fail = [](std::string why) { return error{errc::x_failed, std::move(why)}; };
  session_pixels out;
  std::optional<coord_session> session = job.session;
  if (session && session->generation != g.generation()) {
    return fail(
        "no screenshot session yet: the X server restarted after the screenshot this search "
        "refers to; take a new screenshot");
  }
  if (job.window != 0) {
    auto grabbed = g.grab_window(job.window, std::nullopt);
    if (!grabbed) return fail(grabbed.err().message);
    out.pixels = grabbed->pixels;
    out.origin = grabbed->origin;
    if (session && session->device != out.pixels.area) {
      return fail(str_cat("window ", window_id_text(job.window), " ", gone_size));
    }
  } else {
    auto screen = g.screen_rect();
    if (!screen) return fail(screen.err().message);
    rect area = session ? session->device : job.area ? intersect(*job.area, *screen) : *screen;
    if (area.w == 0) return fail("the selected display area is not on screen");
    if (intersect(area, *screen) != area) return fail(str_cat("the screen ", gone_size));
    auto grabbed = g.grab(area);
    if (!grabbed) return fail(grabbed.err().message);
    out.pixels = *grabbed;
  }
  if (!session) {
    const rect& a = out.pixels.area;
    stamp.device = a;
    stamp.image = image_size_for({a.w, a.h});
    stamp.window = job.window;
    session = stamp;
    out.established = true;
  }
  out.session = *session;
  return out;
}

tool_result run_find(grabber& g, const capture_job& job, const capture_env&,
                     coord_session stamp, std::optional<coord_session>* established) {
  const find_request& req = *job.find;
  auto grabbed = grab_session_pixels(g, job, stamp);
  if (!grabbed) return tool_result::failure(grabbed.err());
  const frame& f = grabbed->pixels;
  const point origin = grabbed->origin;
  const coord_session& s = grabbed->session;
  for (const auto* r : {&req.region, &req.template_region}) {
    if (!*r) continue;
    if (auto why = bad_region(**r, s.image)) {
      return tool_result::failure(str_cat("Invalid argument \"",
                                          r == &req.region ? "region" : "template_region",
                                          "\": ", *why));
    }
  }
  const gray_image haystack = to_gray(f.data, f.area.w, f.area.h, f.stride,
                                      color_layout{4, f.layout.r, f.layout.g, f.layout.b});

  // The screen at the screenshot's size, when the template is cut from it:
  // the search reuses it rather than downscaling the screen again.
  gray_image image;
  // The template, in the session's image pixels.
  gray_image needle;
  if (req.template_region) {
    // The screenshot as it would look now, and the part asked for.
    image = area_downscale(haystack.view(), s.image.w, s.image.h);
    const rect r = region_rect(*req.template_region);
    needle.w = r.w;
    needle.h = r.h;
    needle.pixels.resize(size_t(r.w) * size_t(r.h));
    const gray_view part = image.view().crop(r);
    for (int y = 0; y < r.h; ++y) {
      std::copy_n(part.data + size_t(y) * part.stride, size_t(r.w),
                  needle.pixels.data() + size_t(y) * size_t(r.w));
    }
  } else {
    // The template must fit the part of the image searched: a larger one
    // is refused from its header, before it is decoded.
    const size2 within = req.region ? size2{(*req.region)[2] - (*req.region)[0],
                                            (*req.region)[3] - (*req.region)[1]}
                                    : s.image;
    std::vector<uint8_t> file;
    const std::vector<uint8_t>* png = &req.template_png;
    const char* what = "template";
    if (!req.template_path.empty()) {
      auto bytes = read_template_file(req.template_path, within);
      if (!bytes) return tool_result::failure(bytes.err());
      file = std::move(*bytes);
      png = &file;
      what = "template_path";
    }
    auto decoded = decode_png_gray(*png, what, within);
    if (!decoded) return tool_result::failure(decoded.err());
    needle = std::move(*decoded);
  }

  match_options options;
  options.threshold = req.threshold;
  options.max_results = req.max_results;
  const rect searched = req.region ? region_rect(*req.region) : rect{0, 0, s.image.w, s.image.h};
  // find_template_scaled takes the device pixels with their top-left at 0, 0.
  auto found = find_template_scaled(haystack.view(), s.image, needle.view(), options,
                                    req.region ? searched : rect{},
                                    req.template_region ? &image : nullptr);
  if (!found) return tool_result::failure(found.err());

  std::string out;
  json_writer j(out);
  std::vector<found_match> typed;
  typed.reserve(found->size());
  j.begin_object().key("matches").begin_array();
  for (const match& m : *found) {
    // In session device coordinates, then in the image.
    const rect device{s.device.x + m.x, s.device.y + m.y, m.w, m.h};
    // Where the template lies in the image: its top-left to the nearest
    // image pixel, its own size (it is in image pixels). Rounding the
    // device rectangle outwards would put it a pixel early.
    const double sx = double(s.image.w) / s.device.w, sy = double(s.image.h) / s.device.h;
    const rect image{std::min(int(std::lround(m.x * sx)), s.image.w - needle.w),
                     std::min(int(std::lround(m.y * sy)), s.image.h - needle.h), needle.w,
                     needle.h};
    const point center = device_to_image(s, point{device.x + m.w / 2, device.y + m.h / 2});
    typed.push_back(found_match{image, center});
    j.begin_object().key("x").number(int64_t(image.x)).key("y").number(int64_t(image.y));
    j.key("width").number(int64_t(image.w)).key("height").number(int64_t(image.h));
    j.key("center").begin_array().number(int64_t(center.x)).number(int64_t(center.y)).end_array();
    j.key("score").number(m.score);
    j.key("device");
    write_rect(j, rect{origin.x + device.x, origin.y + device.y, device.w, device.h});
    j.end_object();
  }
  j.end_array().key("searched");
  write_rect(j, searched);
  j.key("template").begin_object().key("width").number(int64_t(needle.w));
  j.key("height").number(int64_t(needle.h)).end_object();
  j.key("threshold").number(req.threshold);
  if (job.window != 0) j.key("window").string(window_id_text(job.window));
  j.end_object();
  if (grabbed->established) *established = s;
  tool_result r = tool_result::json(std::move(out));
  r.matches = std::move(typed);
  return r;
}

}  // namespace cu
