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

// A PNG's pixels in RGB, whatever its colour type (alpha is dropped).
result<rgb_image> decode_png_color(const std::vector<uint8_t>& png, const char* what,
                                   size2 searched) {
  if (auto e = check_template_header(png, what, searched); !e) return e.take_error();
  auto rgb = decode_png_rgb(png, uint32_t(kMaxTemplateSide));
  if (!rgb) return invalid_template(what, rgb.err().message);
  return rgb_image{int(rgb->w), int(rgb->h), std::move(rgb->rgb)};
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
  const color_view screen{f.data, f.area.w, f.area.h, f.stride,
                          color_layout{4, f.layout.r, f.layout.g, f.layout.b}};

  // The template: cut from the screenshot as it would look now, in its
  // pixels; or a PNG, at whatever scale it was made.
  rgb_image needle;
  if (req.template_region) {
    needle = screenshot_part(screen, s.image, region_rect(*req.template_region));
  } else {
    // The template must fit the part of the screen searched at the screen's
    // own size (it may be an icon file or a zoom crop): a larger one is
    // refused from its header, before it is decoded.
    const size2 within_image = req.region ? size2{(*req.region)[2] - (*req.region)[0],
                                                  (*req.region)[3] - (*req.region)[1]}
                                          : s.image;
    const size2 within{
        std::min(f.area.w, int(std::ceil(double(within_image.w) * f.area.w / s.image.w))),
        std::min(f.area.h, int(std::ceil(double(within_image.h) * f.area.h / s.image.h)))};
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
    auto decoded = decode_png_color(*png, what, within);
    if (!decoded) return tool_result::failure(decoded.err());
    needle = std::move(*decoded);
  }

  screen_search search;
  search.match.threshold = req.threshold;
  search.match.max_results = req.max_results;
  search.cut_from_image = req.template_region.has_value();
  const rect searched = req.region ? region_rect(*req.region) : rect{0, 0, s.image.w, s.image.h};
  if (req.region) search.region = searched;
  // find_on_screen takes the device pixels with their top-left at 0, 0.
  auto found = find_on_screen(screen, s.image, needle.view(), search);
  if (!found) return tool_result::failure(found.err());

  std::string out;
  json_writer j(out);
  std::vector<found_match> typed;
  typed.reserve(found->size());
  j.begin_object().key("matches").begin_array();
  for (const screen_match& m : *found) {
    // In session device coordinates, then in the image.
    const rect device{s.device.x + m.device.x, s.device.y + m.device.y, m.device.w, m.device.h};
    const point center =
        device_to_image(s, point{device.x + device.w / 2, device.y + device.h / 2});
    typed.push_back(found_match{m.image, center});
    j.begin_object().key("x").number(int64_t(m.image.x)).key("y").number(int64_t(m.image.y));
    j.key("width").number(int64_t(m.image.w)).key("height").number(int64_t(m.image.h));
    j.key("center").begin_array().number(int64_t(center.x)).number(int64_t(center.y)).end_array();
    j.key("score").number(m.score);
    j.key("scale").number(std::round(m.scale * 1000) / 1000);
    j.key("device");
    write_rect(j, rect{origin.x + device.x, origin.y + device.y, device.w, device.h});
    j.end_object();
  }
  j.end_array().key("searched");
  write_rect(j, searched);
  j.key("template").begin_object().key("width").number(int64_t(needle.w));
  j.key("height").number(int64_t(needle.h)).end_object();
  j.key("scales").begin_array();
  for (double sc : search_scales({f.area.w, f.area.h}, s.image)) {
    if (search.cut_from_image && sc != 1) break;
    j.number(std::round(sc * 1000) / 1000);
  }
  j.end_array();
  j.key("threshold").number(req.threshold);
  if (job.window != 0) j.key("window").string(window_id_text(job.window));
  j.end_object();
  if (grabbed->established) *established = s;
  tool_result r = tool_result::json(std::move(out));
  r.matches = std::move(typed);
  return r;
}

}  // namespace cu
