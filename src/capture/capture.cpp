#include "capture/capture.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "capture/find.h"
#include "capture/find_text.h"
#include "capture/marks_capture.h"
#include "capture/jpeg.h"
#include "capture/png.h"
#include "capture/scale.h"
#include "capture/since.h"
#include "core/json_writer.h"
#include "util/save_file.h"
#include "util/str_cat.h"
#include "x11/windows.h"

namespace cu {
namespace {

// A look record's epoch that no capture has: its pixels and mark are not
// reused.
constexpr uint64_t kStaleEpoch = ~uint64_t{0};

// The lowest JPEG quality tried to fit the budget; below it text turns to
// mush, and a screen that needs less than this is sent over the budget.
constexpr int kJpegWorstQuality = 30;

// auto goes back to trying PNG when the PNG it expects is this far under
// the budget (some margin, or a screen near the edge would flip formats
// every frame).
constexpr double kPngRetryShare = 0.8;

// Image rows [first, last) whose area-averaging footprint may include
// device rows [a, b) of an area dev_h tall shown dst_h tall.
std::pair<int, int> image_rows(int a, int b, int dev_h, int dst_h) {
  int first = int(int64_t(a) * dst_h / dev_h) - 1;
  int last = int((int64_t(b) * dst_h + dev_h - 1) / dev_h) + 1;
  return {std::max(0, first), std::min(dst_h, last)};
}

// Encodes one grabbed frame as the image a client gets, in the format the
// configuration and the budget call for, using and updating mem.
class frame_encoder {
 public:
  // The length of the whole result line an image would make.
  using line_size_fn = std::function<size_t(const std::shared_ptr<const image_payload>&)>;

  // rgb, when not null, is the frame already scaled (out.w * 3 bytes a
  // row): rows are copied from it instead of scaled again.
  frame_encoder(const frame& f, size2 out, const capture_env& env, capture_memory& mem,
                std::optional<uint64_t> mark, line_size_fn line_size,
                const uint8_t* rgb = nullptr)
      : f_(f), out_(out), env_(env), mem_(mem), mark_(mark), line_size_(std::move(line_size)),
        // The image bytes whose base64 alone would fill the budget: no
        // PNG larger can fit.
        max_image_bytes_(env.max_result_bytes / 4 * 3), rgb_(rgb) {}

  result<std::shared_ptr<const image_payload>> encode() {
    switch (env_.format) {
      case image_format::png: {
        auto png = encode_png(SIZE_MAX);
        if (!png) return png.take_error();
        return make_image_payload((*png)->shared_pieces(), "image/png");
      }
      case image_format::jpeg: return jpeg();
      case image_format::automatic: break;
    }
    if (mem_.prefer_jpeg) {
      auto j = jpeg();
      // When the screen got simpler, PNG may fit again: try it next time.
      if (j && double((*j)->size) * mem_.png_per_jpeg <
                   kPngRetryShare * double(max_image_bytes_)) {
        mem_.prefer_jpeg = false;
      }
      return j;
    }
    auto png = encode_png(max_image_bytes_);
    if (!png) return png.take_error();
    double png_bytes = png_estimate();
    if (*png) {
      auto image = make_image_payload((*png)->shared_pieces(), "image/png");
      if (line_size_(image) <= env_.max_result_bytes) return image;
      png_bytes = double(image->size);
    }
    // Too big as PNG: JPEG this time, and first from now on.
    auto j = jpeg();
    if (j) {
      mem_.prefer_jpeg = true;
      mem_.png_per_jpeg = png_bytes / double(std::max<size_t>(1, (*j)->size));
    }
    return j;
  }

 private:
  // Each strip of an encode gets its own scaler (its scratch row); the
  // frame itself is only read.
  row_filler make_filler() const {
    if (rgb_ != nullptr) {
      const uint8_t* rgb = rgb_;
      const size_t row_bytes = size_t(out_.w) * 3;
      return [rgb, row_bytes](int y, uint8_t* row) {
        std::copy_n(rgb + size_t(y) * row_bytes, row_bytes, row);
      };
    }
    auto scaler = std::make_shared<area_scaler>(f_.area.w, f_.area.h, out_.w, out_.h, f_.layout);
    const frame* f = &f_;
    return [scaler, f](int y, uint8_t* row) { scaler->row(f->data, f->stride, y, row); };
  }

  // The PNG, reusing the strips of the last one that nothing was drawn on
  // since; nothing when it would pass give_up_above bytes.
  result<std::optional<png_pieces>> encode_png(size_t give_up_above) {
    std::vector<png_strip> strips = png_strip_layout(out_.h);
    if (mark_ && env_.damage != nullptr && mem_.strips.size() == strips.size() &&
        !strips.empty()) {
      if (auto rows = env_.damage->rows_changed(mem_.strips_mark, f_.area)) {
        strips = mem_.strips;
        invalidate(strips, *rows);
      }
    }
    auto png = encode_png_strips(out_.w, out_.h, strips, [this] { return make_filler(); },
                                 env_.runner, give_up_above);
    // The strips show the frame grabbed after mark_ (those not redone were
    // not drawn on since): the next encode starts from them.
    if (mark_) {
      mem_.strips = std::move(strips);
      mem_.strips_mark = *mark_;
    } else {
      mem_.strips.clear();
    }
    return png;
  }

  // What the whole PNG would have weighed, from the strips it got to.
  double png_estimate() const {
    size_t bytes = 0;
    int rows = 0;
    for (const png_strip& s : mem_.strips) {
      if (!s.deflated) continue;
      bytes += s.deflated->size;
      rows += s.y1 - s.y0;
    }
    if (rows == 0) return double(max_image_bytes_);
    return std::max(double(max_image_bytes_), double(bytes) * out_.h / rows);
  }

  // The JPEG at quality, reusing the strips of the last one (at the same
  // quality) that nothing was drawn on since.
  result<byte_buffer> encode_jpeg(int quality) {
    jpeg_strips strips = jpeg_strip_layout(out_.w, out_.h, quality);
    if (mark_ && env_.damage != nullptr && mem_.jpeg.quality == quality &&
        mem_.jpeg.strips.size() == strips.strips.size() && mem_.jpeg.header) {
      if (auto rows = env_.damage->rows_changed(mem_.jpeg_mark, f_.area)) {
        strips = mem_.jpeg;
        invalidate(strips.strips, *rows);
      }
    }
    auto j = encode_jpeg_strips(strips, [this] { return make_filler(); }, env_.runner);
    if (mark_ && j) {
      mem_.jpeg = std::move(strips);
      mem_.jpeg_mark = *mark_;
    }
    return j;
  }

  // Drops the strips that device rows (area-relative ranges) drawn on
  // since may show in.
  void invalidate(std::vector<png_strip>& strips,
                  const std::vector<std::pair<int, int>>& rows) const {
    for (const auto& [a, b] : rows) {
      auto [first, last] = image_rows(a, b, f_.area.h, out_.h);
      for (png_strip& s : strips) {
        if (s.y0 < last && first < s.y1) s.deflated.reset();
      }
    }
  }

  // The JPEG at the best quality that fits (from the last one that did).
  result<std::shared_ptr<const image_payload>> jpeg() {
    int quality = mem_.jpeg_quality;
    for (;;) {
      auto j = encode_jpeg(quality);
      if (!j) return j.take_error();
      auto image = make_image_payload(std::move(*j), "image/jpeg");
      const size_t line = line_size_(image);
      if (line > env_.max_result_bytes && quality > kJpegWorstQuality) {
        quality = std::max(kJpegWorstQuality, quality - 15);
        continue;
      }
      // Plenty of room: a better quality next time.
      mem_.jpeg_quality = line * 2 < env_.max_result_bytes
                              ? std::min(kJpegBestQuality, quality + 10)
                              : quality;
      return image;
    }
  }

  const frame& f_;
  size2 out_;
  const capture_env& env_;
  capture_memory& mem_;
  std::optional<uint64_t> mark_;
  line_size_fn line_size_;
  size_t max_image_bytes_;
  const uint8_t* rgb_;
};

// The tool result for image: the image block, a save_to_disk text block
// (saved: the file's path; save_error: why it was not written), and the
// structured geometry and format.
// Of a window's capture: which window, and where its pixels came from.
struct window_note {
  uint32_t id;
  const char* source;
};

// A screenshot that is a look (the marks toolset): its id, and with
// `since`, the look named and why the whole image is sent.
struct look_note {
  uint64_t id = 0;
  uint64_t since = 0;  // Zero: no since.
  std::string why_full;
};

// The members a look adds to a screenshot's structuredContent.
void write_look(json_writer& j, const look_note& look) {
  j.key("look").number(int64_t(look.id));
  if (look.since == 0) return;
  j.key("since").number(int64_t(look.since)).key("full").boolean(true);
}

tool_result make_result(const std::shared_ptr<const image_payload>& image, const rect& area,
                        size2 out, bool unchanged, const std::array<int, 4>* region,
                        bool save_to_disk, const std::string& saved,
                        const std::string& save_error, const window_note* window = nullptr,
                        const look_note* look = nullptr) {
  tool_result r;
  r.add_image(image);
  // The look's id in text only where the reference result has text already
  // (save_to_disk), or where the caller asked for since and reads why.
  const std::string look_line =
      look == nullptr ? std::string() : "\nlook " + std::to_string(look->id);
  if (!save_error.empty()) {
    // The capture itself worked: the model still gets the image, and an
    // error block says the file was not written.
    r.is_error = true;
    r.add_text("save_to_disk failed (the image above was captured, but not saved): " +
               save_error + look_line);
  } else if (save_to_disk) {
    r.add_text("Saved to disk: " + saved + look_line);
  }
  if (look != nullptr && look->since != 0) {
    r.add_text(str_cat("look ", std::to_string(look->id), ": the whole image: ",
                       look->why_full));
  }
  json_writer j(r.structured);
  j.begin_object().key("image").begin_object().key("width").number(int64_t(out.w));
  j.key("height").number(int64_t(out.h)).end_object();
  j.key("device").begin_object().key("x").number(int64_t(area.x));
  j.key("y").number(int64_t(area.y)).key("width").number(int64_t(area.w));
  j.key("height").number(int64_t(area.h)).end_object();
  j.key("scale").number(double(area.w) / double(out.w));
  j.key("format").string(image->format());
  j.key("bytes").number(int64_t(image->size));
  j.key("unchanged").boolean(unchanged);
  if (region != nullptr) {
    j.key("region").begin_array();
    for (int v : *region) j.number(int64_t(v));
    j.end_array();
  }
  if (!saved.empty()) j.key("saved_to").string(saved);
  if (window != nullptr) {
    j.key("window").string(window_id_text(window->id)).key("source").string(window->source);
  }
  if (look != nullptr) write_look(j, *look);
  j.end_object();
  return r;
}

// Writes the image to save_dir when the job asks: the file's path, or why
// it was not written.
void save_if_asked(const capture_job& job, const capture_env& env, const image_payload& image,
                   const char* prefix, std::string& saved, std::string& save_error) {
  if (!job.save_to_disk) return;
  const char* extension = std::string_view(image.mime_type) == "image/jpeg" ? "jpg" : "png";
  // The file's own bytes, as the encoder made them.
  std::vector<std::span<const uint8_t>> file;
  file.reserve(image.file.size());
  for (const auto& piece : image.file) file.emplace_back(piece->data.get(), piece->size);
  auto path = save_image_file(env.save_dir, prefix, extension, file);
  if (path) {
    saved = std::move(*path);
  } else {
    save_error = path.err().message;
  }
}

// The save_to_disk path a result line is sized with: about its length.
std::string path_guess(const capture_job& job, const capture_env& env) {
  return job.save_to_disk ? env.save_dir + "/screenshot-20260101-000000.000-1234567-12.png"
                          : std::string();
}

using shared_pixels = std::shared_ptr<const std::vector<uint8_t>>;

// f scaled to out as RGB: mem's pixels (of the grab after mem.image_mark)
// with only the rows drawn on since rescaled, or every row when those are
// not known.
shared_pixels scaled_pixels(const frame& f, size2 out, const capture_env& env,
                            const capture_memory& mem) {
  auto rgb = std::make_shared<std::vector<uint8_t>>();
  std::optional<std::vector<std::pair<int, int>>> drawn;
  if (env.damage != nullptr && mem.pixels &&
      mem.pixels->size() == size_t(out.w) * size_t(out.h) * 3) {
    drawn = env.damage->rows_changed(mem.image_mark, f.area);
  }
  std::vector<std::pair<int, int>> rows;
  if (drawn) {
    *rgb = *mem.pixels;
    for (const auto& [a, b] : *drawn) rows.push_back(image_rows(a, b, f.area.h, out.h));
  } else {
    rgb->resize(size_t(out.w) * size_t(out.h) * 3);
    rows.push_back({0, out.h});
  }
  scale_rows(f, out, rows, *rgb, &env.runner);
  return rgb;
}

// Captures device area at image size out: the image the last capture of
// the same area made when nothing was drawn on it since, else a new one.
// pixels, when not null (a look), gets the image's RGB pixels.
tool_result capture_image(grabber& g, const capture_job& job, const capture_env& env,
                          const rect& area, size2 out, const char* prefix,
                          const std::array<int, 4>* region, const look_note* look = nullptr,
                          std::optional<uint64_t>* grab_mark = nullptr,
                          shared_pixels* pixels = nullptr) {
  const capture_key key{area, out, env.view_epoch, env.hidden_print};
  capture_memory mem = env.cache.find(key).value_or(capture_memory{});
  // Everything drawn before this is in the grab below.
  std::optional<uint64_t> mark = env.damage != nullptr ? env.damage->sync_mark() : std::nullopt;
  if (grab_mark != nullptr) *grab_mark = mark;
  std::shared_ptr<const image_payload> image;
  bool unchanged = false;
  if (mark && mem.image && !env.damage->touched(mem.image_mark, area)) {
    image = mem.image;
    unchanged = true;
    if (pixels != nullptr && !mem.pixels) {
      // The image was not a look's (a zoom of the same area and size):
      // its pixels once more, as they still are.
      auto f = g.grab(area);
      if (!f) return tool_result::failure(f.err());
      mem.pixels = scaled_pixels(*f, out, env, capture_memory{});
    }
  } else {
    auto f = g.grab(area);
    if (!f) return tool_result::failure(f.err());
    // A look keeps its pixels: scaled once, and encoded from there.
    shared_pixels rgb;
    if (pixels != nullptr) rgb = scaled_pixels(*f, out, env, mem);
    // The line an image would make.
    const std::string guess = path_guess(job, env);
    auto line_size = [&](const std::shared_ptr<const image_payload>& candidate) {
      return tool_response_size(job.reply.id_json,
                                make_result(candidate, area, out, false, region,
                                            job.save_to_disk, guess, {}, nullptr, look),
                                job.reply.era);
    };
    frame_encoder enc(*f, out, env, mem, mark, line_size, rgb ? rgb->data() : nullptr);
    auto encoded = enc.encode();
    if (!encoded) return tool_result::failure(encoded.err());
    image = std::move(*encoded);
    mem.pixels = std::move(rgb);
  }
  if (pixels != nullptr) *pixels = mem.pixels;
  // Kept only when the grab hid what the key's print says it hid.
  if (mark && g.last_print() == env.hidden_print) {
    mem.image = image;
    mem.image_mark = *mark;
    env.cache.store(key, std::move(mem));
  }

  std::string saved;
  std::string save_error;
  save_if_asked(job, env, *image, prefix, saved, save_error);
  return make_result(image, area, out, unchanged, region, job.save_to_disk, saved, save_error,
                     nullptr, look);
}

// A screenshot or zoom of one window (job.window). Never from the cache or
// from earlier strips: what was drawn in a covered window, or where a
// window moved, is not in the screen's record of changes.
tool_result capture_window(grabber& g, const capture_job& job, const capture_env& env,
                           coord_session stamp, std::optional<coord_session>* established,
                           const look_note* look = nullptr, point* origin = nullptr) {
  std::optional<coord_session> session;
  if (job.what == capture_job::kind::zoom && job.session && job.session->window == job.window) {
    session = *job.session;
    if (session->generation != g.generation()) {
      return tool_result::failure(
          "no screenshot session yet: the X server restarted after the screenshot this "
          "region refers to; take a new screenshot");
    }
  }
  std::optional<rect> part;
  if (session) {
    auto device = region_to_device(*session, job.region);
    if (!device) {
      return tool_result::failure("Invalid argument \"region\": " + device.err().message);
    }
    part = *device;
  }
  auto grabbed = g.grab_window(job.window, part);
  if (!grabbed) return tool_result::failure(grabbed.err());
  frame f = grabbed->pixels;
  if (origin != nullptr) *origin = grabbed->origin;
  if (!session) {
    // The session a screenshot of the window makes now: its whole inside
    // (or, read from the screen, the part on screen).
    stamp.device = f.area;
    stamp.image = image_size_for({f.area.w, f.area.h});
    stamp.window = job.window;
    session = stamp;
    if (job.what == capture_job::kind::screenshot) {
      // Set below, once there is an image.
    } else {
      *established = session;
      auto device = region_to_device(*session, job.region);
      if (!device) {
        return tool_result::failure("Invalid argument \"region\": " + device.err().message);
      }
      // The zoom's part of what was grabbed.
      const rect cut = intersect(*device, f.area);
      f.data += size_t(cut.y - f.area.y) * f.stride + size_t(cut.x - f.area.x) * 4;
      f.area = cut;
    }
  }
  const bool zoom = job.what == capture_job::kind::zoom;
  const size2 out = zoom ? image_size_for({f.area.w, f.area.h}) : session->image;
  const rect on_root{grabbed->origin.x + f.area.x, grabbed->origin.y + f.area.y, f.area.w,
                     f.area.h};
  const window_note note{job.window, grabbed->source};
  const std::array<int, 4>* region = zoom ? &job.region : nullptr;
  const std::string guess = path_guess(job, env);
  auto line_size = [&](const std::shared_ptr<const image_payload>& candidate) {
    return tool_response_size(job.reply.id_json,
                              make_result(candidate, on_root, out, false, region,
                                          job.save_to_disk, guess, {}, &note, look),
                              job.reply.era);
  };
  capture_memory mem;
  frame_encoder enc(f, out, env, mem, std::nullopt, line_size);
  auto encoded = enc.encode();
  if (!encoded) return tool_result::failure(encoded.err());
  std::string saved;
  std::string save_error;
  save_if_asked(job, env, **encoded, zoom ? "zoom" : "screenshot", saved, save_error);
  if (!zoom) *established = session;
  return make_result(*encoded, on_root, out, false, region, job.save_to_disk, saved, save_error,
                     &note, look);
}

// A screenshot with since answered with what changed: no image when
// nothing did, else a crop of the session's image for each changed place.
// plan's crops are where the damage record says the screen was drawn on;
// when look L's pixels are kept they are narrowed to where the pixels
// differ. kept gets the new look's pixels. Nothing when the crops would
// pass the result budget or most of the image: note.why_full then says
// why, and the caller sends the whole image.
std::optional<tool_result> answer_changes(grabber& g, const capture_job& job,
                                          const capture_env& env, const rect& area,
                                          const coord_session& s, since_plan plan,
                                          look_note& note, shared_pixels& kept) {
  const look_record& then = *job.since->seen;
  const size2 image = s.image;
  if (has_pixels(then, image)) {
    if (plan.crops.empty()) {
      // Nothing was drawn since the mark before L's grab: the screen is
      // what L's pixels show.
      kept = then.pixels;
    } else {
      auto f = g.grab(area);
      if (!f) return tool_result::failure(f.err());
      // Only the rows drawn on can differ from L's pixels.
      auto rgb = std::make_shared<std::vector<uint8_t>>(*then.pixels);
      std::vector<std::pair<int, int>> rows;
      for (const rect& c : plan.crops) rows.push_back({c.y, c.y + c.h});
      scale_rows(*f, image, rows, *rgb, &env.runner);
      refine_by_pixels(plan, then.pixels->data(), rgb->data(), image);
      kept = std::move(rgb);
    }
    limit_share(plan, note.since, image);
  } else {
    limit_share(plan, note.since, image);
    if (plan.full.empty()) {
      auto f = g.grab(area);
      if (!f) return tool_result::failure(f.err());
      auto rgb = std::make_shared<std::vector<uint8_t>>(size_t(image.w) * size_t(image.h) * 3);
      scale_rows(*f, image, {{0, image.h}}, *rgb, &env.runner);
      kept = std::move(rgb);
    }
  }
  if (!plan.full.empty()) {
    note.why_full = std::move(plan.full);
    kept.reset();
    return std::nullopt;
  }
  const std::vector<rect>& crops = plan.crops;
  std::vector<std::shared_ptr<const image_payload>> images;
  if (!crops.empty()) {
    const size_t row_bytes = size_t(image.w) * 3;
    auto encoded = encode_crops(crops, image, [&](int y, uint8_t* row) {
      std::copy_n(kept->data() + size_t(y) * row_bytes, row_bytes, row);
    });
    if (!encoded) return tool_result::failure(encoded.err());
    images = std::move(*encoded);
  }
  const std::string id = std::to_string(note.id), since = std::to_string(note.since);
  tool_result r;
  size_t bytes = 0;
  if (crops.empty()) {
    r.add_text(str_cat("look ", id, ": nothing changed since look ", since));
  } else {
    r.add_text(str_cat("look ", id, ": ", crops_text(crops, note.since)));
    for (const auto& image : images) {
      bytes += image->size;
      r.add_image(image);
    }
  }
  json_writer j(r.structured);
  j.begin_object().key("image").begin_object().key("width").number(int64_t(s.image.w));
  j.key("height").number(int64_t(s.image.h)).end_object();
  j.key("device").begin_object().key("x").number(int64_t(area.x));
  j.key("y").number(int64_t(area.y)).key("width").number(int64_t(area.w));
  j.key("height").number(int64_t(area.h)).end_object();
  j.key("scale").number(double(area.w) / double(s.image.w));
  j.key("format").string("png").key("bytes").number(int64_t(bytes));
  j.key("unchanged").boolean(crops.empty());
  j.key("look").number(int64_t(note.id)).key("since").number(int64_t(note.since));
  j.key("full").boolean(false);
  write_changed(j, crops);
  j.end_object();
  if (tool_response_size(job.reply.id_json, r, job.reply.era) > env.max_result_bytes) {
    note.why_full = "its crops would pass CU_MAX_RESULT_BYTES";
    kept.reset();
    return std::nullopt;
  }
  return r;
}

// What a look saw, for the look's record.
void keep_look(const grabber& g, const capture_job& job, const capture_env& env,
               const coord_session& s,
               point origin, std::optional<uint64_t> mark, shared_pixels pixels = nullptr) {
  if (!job.record) return;
  // A grab that hid by another print than the job's: no later look may
  // take this one's pixels, or its mark, for what the screen showed.
  job.record->view_epoch = g.last_print() == env.hidden_print ? env.view_epoch : kStaleEpoch;
  job.record->hidden_print = env.hidden_print;
  job.record->hidden = env.hidden;
  job.record->session = s;
  job.record->origin = origin;
  job.record->damage_mark = mark;
  job.record->pixels = std::move(pixels);
}

}  // namespace

std::optional<tool_result> run_capture(grabber& g, const capture_job& job,
                                       const capture_env& given,
                                       std::optional<coord_session>* established) {
  auto screen = g.screen_rect();
  if (!screen) return tool_result::failure(screen.err());
  capture_env env = given;
  if (g.filtering()) {
    auto print = g.hidden_print();
    if (!print) return tool_result::failure(print.err());
    env.hidden_print = *print;
    env.hidden = std::make_shared<const std::vector<rect>>(g.last_hidden());
  }
  // Which screen a session made now belongs to.
  auto stamp = [&](coord_session s) {
    s.generation = g.generation();
    s.root = size2{screen->w, screen->h};
    return s;
  };

  if (job.what == capture_job::kind::find) {
    return run_find(g, job, env, stamp(coord_session{}), established);
  }
  if (job.what == capture_job::kind::find_text) {
    if (env.recognizer == nullptr) return tool_result::failure("find_text has no recognizer here");
    return run_find_text(g, job, *env.recognizer, stamp(coord_session{}));
  }
  if (job.what == capture_job::kind::marks) {
    return run_marks(g, job, env, stamp(coord_session{}), established);
  }
  // With the marks toolset on, a screenshot is a look.
  look_note note;
  const look_note* look = nullptr;
  if (job.what == capture_job::kind::screenshot && job.look_id != 0) {
    note.id = job.look_id;
    look = &note;
    if (job.since) note.since = job.since->id;
  }
  if (job.window != 0) {
    if (note.since != 0) {
      coord_session of_window;
      of_window.window = job.window;
      note.why_full = plan_since(env, *job.since->seen, note.since, of_window, std::nullopt).full;
    }
    point origin;
    tool_result r =
        capture_window(g, job, env, stamp(coord_session{}), established, look, &origin);
    if (look != nullptr && r.has_image() && *established) {
      keep_look(g, job, env, **established, origin, std::nullopt);
    }
    return r;
  }

  if (job.what == capture_job::kind::screenshot) {
    rect area = job.area ? intersect(*job.area, *screen) : *screen;
    if (area.w == 0) return tool_result::failure("the selected display area is not on screen");
    coord_session session = stamp(make_session(area));
    if (note.since != 0) {
      // Everything drawn before this mark is in the crops' grab.
      const std::optional<uint64_t> mark =
          env.damage != nullptr ? env.damage->sync_mark() : std::nullopt;
      since_plan plan = plan_since(env, *job.since->seen, note.since, session, mark);
      if (plan.full.empty() && job.save_to_disk) plan.full = "save_to_disk saves the whole image";
      if (plan.full.empty()) {
        shared_pixels kept;
        auto r = answer_changes(g, job, env, area, session, std::move(plan), note, kept);
        if (r && r->is_error) return r;
        if (r) {
          *established = session;
          keep_look(g, job, env, session, point{}, mark, std::move(kept));
          return r;
        }
      } else {
        note.why_full = std::move(plan.full);
      }
    }
    std::optional<uint64_t> mark;
    shared_pixels pixels;
    tool_result r = capture_image(g, job, env, area, session.image, "screenshot", nullptr, look,
                                  &mark, job.record ? &pixels : nullptr);
    // The model sees the image whenever there is one (a failed save_to_disk
    // included), so coordinates refer to it from now on.
    if (r.has_image()) {
      *established = session;
      keep_look(g, job, env, session, point{}, mark, std::move(pixels));
    }
    return r;
  }

  coord_session session;
  if (job.session) {
    session = *job.session;
    if (session.generation != g.generation()) {
      return tool_result::failure(
          "no screenshot session yet: the X server restarted after the screenshot this "
          "region refers to; take a new screenshot");
    }
  } else {
    session = stamp(make_session(job.area ? intersect(*job.area, *screen) : *screen));
    *established = session;
  }
  auto device = region_to_device(session, job.region);
  if (!device) return tool_result::failure("Invalid argument \"region\": " + device.err().message);
  // The screen may have shrunk since the session was made.
  rect area = intersect(*device, *screen);
  if (area.w == 0) return tool_result::failure("the zoom region is no longer on screen");
  // Full device resolution, within the same caps as a screenshot.
  size2 out = image_size_for({area.w, area.h});
  return capture_image(g, job, env, area, out, "zoom", &job.region);
}

}  // namespace cu
