#include "capture/marks_capture.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "capture/damage.h"
#include "capture/find.h"
#include "capture/find_text.h"
#include "capture/jpeg.h"
#include "capture/png.h"
#include "capture/scale.h"
#include "capture/since.h"
#include "core/json_writer.h"
#include "util/str_cat.h"
#include "vision/look_diff.h"
#include "x11/windows.h"

namespace cu {
namespace {

// What the finish needs, wherever it runs: the scaled image (the grab's
// buffer is the worker's, reused by its next grab), the candidates in image
// pixels, and the request.
struct marks_work {
  std::shared_ptr<const marks_request> request;
  coord_session session;
  std::vector<uint8_t> rgb;  // session.image.w * 3 bytes a row.
  std::vector<mark_candidate> found;
  rect within;       // The region, in image pixels.
  point part;        // Where the OCR's pixels start in the session's device area.
  uint32_t window = 0;
  point origin;  // The session's device (0, 0) on the root.
  std::optional<uint64_t> damage_mark;
  uint64_t view_epoch = 0;  // capture_env::view_epoch of the grab.
  uint64_t hidden_print = 0;  // capture_env::hidden_print and hidden.
  std::shared_ptr<const std::vector<rect>> hidden;
  // What the image's format is chosen by, as for a screenshot: the
  // configured format, and for automatic, whether the whole line fits.
  image_format format = image_format::automatic;
  size_t max_result_bytes = 0;
  reply_to reply;
  // With since: the crops to send, or why the whole map is sent.
  std::optional<since_plan> plan;
  // rgb before the marks are drawn on it: what the look keeps for a later
  // since to compare with (the screen, not the marks).
  std::shared_ptr<const std::vector<uint8_t>> undrawn;
};

// The lowest JPEG quality tried to fit the bound, as for screenshots: below
// it the controls' text turns to mush.
constexpr int kWorstQuality = 30;

// The drawn map encoded as a screenshot would be (capture.cpp's
// frame_encoder, without its reuse of strips: a map is drawn afresh each
// time): PNG when configured or when its whole line fits the bound, else
// JPEG at the best quality from 90 down in steps of 15 to 30 that fits.
// line_size says how long the result line would be with a given image.
result<std::shared_ptr<const image_payload>> encode_map(
    const marks_work& w,
    const std::function<size_t(const std::shared_ptr<const image_payload>&)>& line_size) {
  const size2 image = w.session.image;
  const size_t row_bytes = size_t(image.w) * 3;
  auto fill = [&](int y, uint8_t* row) {
    std::copy_n(w.rgb.data() + size_t(y) * row_bytes, row_bytes, row);
  };
  if (w.format != image_format::jpeg) {
    auto png = encode_png_rgb(image.w, image.h, fill);
    if (!png) return png.take_error();
    auto payload = make_image_payload(std::move(*png), "image/png");
    if (w.format == image_format::png || line_size(payload) <= w.max_result_bytes) return payload;
  }
  for (int quality = kJpegBestQuality;; quality = std::max(kWorstQuality, quality - 15)) {
    auto j = encode_jpeg_rgb(image.w, image.h, fill, quality);
    if (!j) return j.take_error();
    auto payload = make_image_payload(std::move(*j), "image/jpeg");
    if (quality == kWorstQuality || line_size(payload) <= w.max_result_bytes) return payload;
  }
}

// One mark's line: number, role, name, box, source.
std::string mark_line(const mark& m) {
  return str_cat(std::to_string(m.n), " ", m.what.role, " \"", m.what.name, "\" ",
                 box_text(m.what.box), " ", mark_source_name(m.what.source), "\n");
}

void write_box(json_writer& j, const rect& b) {
  j.begin_array();
  for (int v : {b.x, b.y, b.w, b.h}) j.number(int64_t(v));
  j.end_array();
}

// Whether look `then` was of the same image space as session s: the same
// screen, area (or window) and image size, so its numbers and boxes mean
// the same here.
bool same_space(const look_record& then, const coord_session& s) {
  return then.session == s;
}

// The map, drawn and listed: the tool's result.
tool_result finish(marks_work& w, std::vector<ocr_word> words, const std::string& no_ocr) {
  const coord_session& s = w.session;
  std::vector<mark_candidate> read;
  for (const ocr_word& word : words) {
    // Noise (a border read as "|") is dropped by ocr_lines, line by line.
    const rect device{s.device.x + w.part.x + word.box.x, s.device.y + w.part.y + word.box.y,
                      word.box.w, word.box.h};
    read.push_back(mark_candidate{"text", word.text, device_rect_to_image(s, device),
                                  mark_source::ocr, float(word.confidence)});
  }
  // The other sources' boxes keep a line from running across two controls.
  for (mark_candidate& line : ocr_lines(std::move(read), w.found)) w.found.push_back(std::move(line));
  size_t left_out = 0;
  std::vector<mark> marks =
      make_marks(std::move(w.found), w.within, s.image, w.request->max_marks, &left_out);
  // With since, the marks the model saw keep their numbers.
  const std::optional<since_look>& since = w.request->since;
  std::optional<marks_diff> diff;
  if (since && same_space(*since->seen, s)) diff = carry_numbers(marks, since->seen->marks);
  draw_marks(w.rgb.data(), s.image, marks);
  const size_t row_bytes = size_t(s.image.w) * 3;
  auto image_row = [&](int y, uint8_t* row) {
    std::copy_n(w.rgb.data() + size_t(y) * row_bytes, row_bytes, row);
  };
  // The crops of what changed, when since asked and most is as it was.
  std::optional<std::vector<std::shared_ptr<const image_payload>>> crops;
  std::string why_full;
  if (w.plan) {
    why_full = w.plan->full;
    if (why_full.empty()) {
      auto encoded = encode_crops(w.plan->crops, s.image, image_row);
      if (!encoded) return tool_result::failure(encoded.err());
      size_t bytes = 0;
      for (const auto& c : *encoded) bytes += c->size;
      // Base64 makes four bytes of three; the list is small beside it.
      if (bytes / 3 * 4 > w.max_result_bytes) {
        why_full = "its crops would pass CU_MAX_RESULT_BYTES";
      } else {
        crops = std::move(*encoded);
      }
    }
  }

  tool_result r;
  const std::string id = std::to_string(w.request->look_id);
  std::string list;
  if (crops && crops->empty() && diff && diff->appeared.empty() && diff->moved.empty() &&
      diff->gone.empty()) {
    list = str_cat("look ", id, ": nothing changed since look ", std::to_string(since->id),
                   " (", std::to_string(marks.size()), marks.size() == 1 ? " mark" : " marks",
                   ", numbered as there)\n");
  } else {
    list = str_cat("look ", id, ": ", std::to_string(marks.size()),
                   marks.size() == 1 ? " mark" : " marks");
    if (diff) {
      list += str_cat("; since look ", std::to_string(since->id), ": ",
                      std::to_string(diff->appeared.size()), " appeared, ",
                      std::to_string(diff->moved.size()), " moved, ",
                      std::to_string(diff->gone.size()), " gone");
    }
    list += "\n";
  }
  if (crops) {
    if (!crops->empty()) list += crops_text(w.plan->crops, since->id) + "\n";
  } else if (since) {
    list += "the whole image: " + why_full + "\n";
  }
  std::string structured;
  json_writer j(structured);
  j.begin_object().key("look").number(int64_t(w.request->look_id)).key("image").begin_object().key("width").number(int64_t(s.image.w));
  j.key("height").number(int64_t(s.image.h)).end_object();
  if (w.request->record) {
    look_record& seen = *w.request->record;
    seen.session = s;
    seen.origin = w.origin;
    seen.damage_mark = w.damage_mark;
    seen.view_epoch = w.view_epoch;
    seen.hidden_print = w.hidden_print;
    seen.hidden = w.hidden;
    seen.marks = marks;
    seen.is_map = true;
    seen.pixels = std::move(w.undrawn);
  }
  auto appeared = [&](const mark& m) {
    return diff && std::find(diff->appeared.begin(), diff->appeared.end(), m.n) !=
                       diff->appeared.end();
  };
  // With crops, only what changed is listed (the rest is as the model saw
  // it); a whole image lists every mark.
  auto listed = [&](const mark& m) {
    if (!crops || !diff || appeared(m)) return true;
    return std::any_of(diff->moved.begin(), diff->moved.end(),
                       [&](const mark_move& mv) { return mv.n == m.n; });
  };
  if (diff && crops) {
    if (!diff->appeared.empty()) list += "appeared:\n";
    for (const mark& m : marks) {
      if (appeared(m)) list += mark_line(m);
    }
  } else {
    for (const mark& m : marks) list += mark_line(m);
  }
  if (diff) {
    if (!diff->moved.empty()) list += "moved:\n";
    for (const mark_move& mv : diff->moved) {
      list += str_cat(std::to_string(mv.n), " ", box_text(mv.from), " -> ", box_text(mv.to), "\n");
    }
    if (!diff->gone.empty()) {
      list += "gone:";
      for (int n : diff->gone) list += str_cat(" ", std::to_string(n));
      list += "\n";
    }
  }
  j.key("marks").begin_array();
  for (const mark& m : marks) {
    if (!listed(m)) continue;
    j.begin_object().key("n").number(int64_t(m.n)).key("role").string(m.what.role);
    j.key("name").string(m.what.name).key("box");
    write_box(j, m.what.box);
    j.key("source").string(mark_source_name(m.what.source)).end_object();
  }
  j.end_array();
  if (left_out > 0) {
    j.key("truncated").number(int64_t(left_out));
    list += str_cat("(", std::to_string(left_out), " more past max_marks)\n");
  }
  std::vector<std::string> unavailable = w.request->unavailable;
  if (!no_ocr.empty()) unavailable.push_back("ocr: " + no_ocr);
  if (!unavailable.empty()) {
    j.key("unavailable").begin_array();
    for (const std::string& u : unavailable) {
      j.string(u);
      list += "unavailable: " + u + "\n";
    }
    j.end_array();
  }
  if (w.window != 0) j.key("window").string(window_id_text(w.window));
  if (since) {
    j.key("since").number(int64_t(since->id)).key("full").boolean(!crops);
    if (crops) write_changed(j, w.plan->crops);
  }
  if (diff) {
    j.key("appeared").begin_array();
    for (int n : diff->appeared) j.number(int64_t(n));
    j.end_array().key("moved").begin_array();
    for (const mark_move& mv : diff->moved) {
      j.begin_object().key("n").number(int64_t(mv.n)).key("from");
      write_box(j, mv.from);
      j.key("box");
      write_box(j, mv.to);
      j.end_object();
    }
    j.end_array().key("gone").begin_array();
    for (int n : diff->gone) j.number(int64_t(n));
    j.end_array();
  }
  j.end_object();
  if (crops) {
    // The list first: it says where each crop goes.
    r.add_text(std::move(list));
    for (const auto& c : *crops) r.add_image(c);
  } else {
    auto line_size = [&](const std::shared_ptr<const image_payload>& image) {
      tool_result t;
      t.add_image(image);
      t.add_text(list);
      t.structured = structured;
      return tool_response_size(w.reply.id_json, t, w.reply.era);
    };
    auto image = encode_map(w, line_size);
    if (!image) return tool_result::failure(image.err());
    r.add_image(std::move(*image));
    r.add_text(std::move(list));
  }
  r.structured = std::move(structured);
  return r;
}

}  // namespace

std::optional<tool_result> run_marks(grabber& g, const capture_job& job, const capture_env& env,
                                     coord_session stamp,
                                     std::optional<coord_session>* established) {
  const marks_request& req = *job.marks;
  capture_job fresh = job;
  fresh.session.reset();  // A map is a screenshot: it makes a session of its own.
  // Everything drawn before this is in the grab below.
  const std::optional<uint64_t> damage_mark =
      env.damage != nullptr ? env.damage->sync_mark() : std::nullopt;
  auto grabbed = grab_session_pixels(g, fresh, stamp);
  if (!grabbed) return tool_result::failure(grabbed.err());
  const frame& f = grabbed->pixels;
  const coord_session& s = grabbed->session;

  auto work = std::make_shared<marks_work>();
  work->request = job.marks;
  work->session = s;
  work->window = job.window;
  work->origin = grabbed->origin;
  work->damage_mark = damage_mark;
  work->view_epoch = g.last_print() == env.hidden_print ? env.view_epoch : ~uint64_t{0};
  work->hidden_print = env.hidden_print;
  work->hidden = env.hidden;
  work->format = env.format;
  work->max_result_bytes = env.max_result_bytes;
  work->reply = job.reply;
  work->within = rect{0, 0, s.image.w, s.image.h};
  rect part{0, 0, f.area.w, f.area.h};  // In the grabbed frame.
  if (req.region) {
    const auto& r = *req.region;
    if (r[2] > s.image.w || r[3] > s.image.h) {
      return tool_result::failure(str_cat("Invalid argument \"region\": [", std::to_string(r[0]),
                                          ", ", std::to_string(r[1]), ", ", std::to_string(r[2]),
                                          ", ", std::to_string(r[3]), "] is outside the ",
                                          std::to_string(s.image.w), "x",
                                          std::to_string(s.image.h), " image"));
    }
    work->within = rect{r[0], r[1], r[2] - r[0], r[3] - r[1]};
    auto device = region_to_device(s, r);
    if (!device) return tool_result::failure("Invalid argument \"region\": " + device.err().message);
    part = intersect(rect{device->x - s.device.x, device->y - s.device.y, device->w, device->h},
                     part);
  }
  work->part = point{part.x, part.y};
  // Root pixels to the session's device pixels (a window's own), then to
  // the image's.
  for (const mark_candidate& c : req.on_root) {
    mark_candidate m = c;
    m.box = device_rect_to_image(
        s, rect{c.box.x - grabbed->origin.x, c.box.y - grabbed->origin.y, c.box.w, c.box.h});
    work->found.push_back(std::move(m));
  }
  work->rgb.resize(size_t(s.image.w) * size_t(s.image.h) * 3);
  area_scaler scaler(f.area.w, f.area.h, s.image.w, s.image.h, f.layout);
  for (int y = 0; y < s.image.h; ++y) {
    scaler.row(f.data, f.stride, y, work->rgb.data() + size_t(y) * size_t(s.image.w) * 3);
  }
  // A window's look is sent whole with since (capture/since.h): it keeps
  // no pixels.
  if (req.record && job.window == 0) {
    work->undrawn = std::make_shared<const std::vector<uint8_t>>(work->rgb);
  }
  if (req.since) {
    // The crops must hold everything the grab shows that the earlier look
    // did not, and what was drawn between the mark and the grab may not be
    // read yet: the record is brought up to the grab first (the look keeps
    // the earlier mark, so that drawing is also in the next look's crops).
    const std::optional<uint64_t> after_grab =
        damage_mark && env.damage != nullptr ? env.damage->sync_mark() : std::nullopt;
    const look_record& then = *req.since->seen;
    work->plan = plan_since(env, then, req.since->id, s, after_grab);
    if (work->plan->full.empty() && has_pixels(then, s.image)) {
      refine_by_pixels(*work->plan, then.pixels->data(), work->rgb.data(), s.image);
    }
    limit_share(*work->plan, req.since->id, s.image);
  }
  if (!req.ocr || env.recognizer == nullptr || part.w <= 0 || part.h <= 0) {
    *established = s;
    return finish(*work, {}, req.ocr ? "no recognizer in this server" : "");
  }
  text_job t;
  t.seq = job.seq;
  t.reply = job.reply;
  // Grey now, on the worker: the frame is this worker's SHM segment.
  t.pixels = to_gray(f.data + size_t(part.y) * f.stride + size_t(part.x) * 4, part.w, part.h,
                     f.stride, color_layout{4, f.layout.r, f.layout.g, f.layout.b});
  t.session = s;
  t.established = s;
  t.window = job.window;
  t.with_words = [work](std::vector<ocr_word> words, std::string why) {
    return finish(*work, std::move(words), why);
  };
  env.recognizer->post(std::move(t));
  return std::nullopt;
}

}  // namespace cu
