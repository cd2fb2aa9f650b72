#include "capture/since.h"

#include <algorithm>

#include "capture/png.h"
#include "capture/scale.h"
#include "util/str_cat.h"
#include "vision/look_diff.h"

namespace cu {

since_plan plan_since(const capture_env& env, const look_record& then, uint64_t then_id,
                      const coord_session& now, std::optional<uint64_t> mark) {
  const std::string look = "look " + std::to_string(then_id);
  since_plan p;
  if (then.session.window != 0 || now.window != 0) {
    // DAMAGE on the root sees what reaches the screen, not what a covered
    // window draws, nor where a window moved to.
    p.full = "a window's look is sent whole (the screen's record of changes cannot say what a "
             "window drew)";
  } else if (then.session.generation != now.generation || then.session.root != now.root) {
    p.full = str_cat("the X server or the screen's size changed since ", look);
  } else if (then.session.device != now.device || then.session.image != now.image) {
    p.full = str_cat(look, " showed another area or image size");
  } else if (then.view_epoch != env.view_epoch) {
    // What a capture hides changed with no drawing, so no damage says where.
    p.full = str_cat("the grants changed since ", look, " (what captures hide changed)");
  } else if (!then.damage_mark || !mark || env.damage == nullptr) {
    p.full = "this display does not report what changed (no X DAMAGE)";
  }
  if (!p.full.empty()) return p;
  auto rects = env.damage->rects_changed(*then.damage_mark, now.device, kMostCrops);
  if (!rects) {
    p.full = str_cat("more was drawn since ", look, " than the record of changes holds");
    return p;
  }
  if (then.hidden_print != env.hidden_print) {
    // What the grants hide moved, or a window's identity changed, with no
    // drawing there: every part either look hid may differ.
    for (const auto* hidden : {then.hidden.get(), env.hidden.get()}) {
      if (hidden == nullptr) continue;
      for (const rect& r : *hidden) {
        const rect in = intersect(r, now.device);
        if (in.w > 0 && in.h > 0) rects->push_back(in);
      }
    }
    *rects = merge_rects(std::move(*rects), 0, kMostCrops);
  }
  std::vector<rect> crops;
  for (const rect& r : *rects) {
    const rect c = pad_within(device_rect_to_image(now, r), kCropPadding, now.image);
    if (c.w > 0 && c.h > 0) crops.push_back(c);
  }
  // Padding may make neighbours overlap: each pixel is sent once.
  p.crops = merge_rects(std::move(crops), 0, kMostCrops);
  return p;
}

bool has_pixels(const look_record& then, size2 image) {
  return then.pixels != nullptr &&
         then.pixels->size() == size_t(image.w) * size_t(image.h) * 3;
}

void refine_by_pixels(since_plan& p, const uint8_t* then, const uint8_t* now, size2 image) {
  // Tiles within 4 pixels are one crop, as drawn rectangles are: a line of
  // text changed glyph by glyph stays one crop.
  std::vector<rect> tiles = differing_tiles(then, now, image, p.crops);
  std::vector<rect> crops;
  for (const rect& r : merge_rects(std::move(tiles), 4, kMostCrops)) {
    crops.push_back(pad_within(r, kCropPadding, image));
  }
  p.crops = merge_rects(std::move(crops), 0, kMostCrops);
}

void limit_share(since_plan& p, uint64_t then_id, size2 image) {
  int64_t changed = 0;
  for (const rect& c : p.crops) changed += int64_t(c.w) * c.h;
  const int64_t all = int64_t(image.w) * image.h;
  if (double(changed) <= kMostChangedShare * double(all)) return;
  p.full = str_cat("most of the image changed since look ", std::to_string(then_id), " (",
                   std::to_string(changed * 100 / std::max<int64_t>(all, 1)), "%)");
  p.crops.clear();
}

void scale_rows(const frame& f, size2 image, const std::vector<std::pair<int, int>>& rows,
                std::vector<uint8_t>& rgb, task_runner* runner) {
  // Ranges may overlap (crops side by side): each row is scaled once.
  std::vector<bool> wanted(size_t(std::max(image.h, 0)), false);
  for (const auto& [first, last] : rows) {
    for (int y = std::max(first, 0); y < std::min(last, image.h); ++y) wanted[size_t(y)] = true;
  }
  std::vector<int> ys;
  for (int y = 0; y < image.h; ++y) {
    if (wanted[size_t(y)]) ys.push_back(y);
  }
  const size_t row_bytes = size_t(image.w) * 3;
  // Four parts, as a few strips of an encode: each with its own scaler
  // (its scratch row).
  run_in_parts(runner, ys.size(), 4, [&](size_t from, size_t to) {
    area_scaler scaler(f.area.w, f.area.h, image.w, image.h, f.layout);
    for (size_t i = from; i < to; ++i) {
      scaler.row(f.data, f.stride, ys[i], rgb.data() + size_t(ys[i]) * row_bytes);
    }
  });
}

result<std::vector<std::shared_ptr<const image_payload>>> encode_crops(
    const std::vector<rect>& crops, size2 image,
    const std::function<void(int y, uint8_t* row)>& image_row) {
  std::vector<std::shared_ptr<const image_payload>> out;
  std::vector<uint8_t> whole(size_t(image.w) * 3);
  for (const rect& c : crops) {
    auto png = encode_png_rgb(c.w, c.h, [&](int y, uint8_t* row) {
      image_row(c.y + y, whole.data());
      std::copy_n(whole.data() + size_t(c.x) * 3, size_t(c.w) * 3, row);
    });
    if (!png) return png.take_error();
    out.push_back(make_image_payload(std::move(*png), "image/png"));
  }
  return out;
}

std::string box_text(const rect& r) {
  return str_cat("[", std::to_string(r.x), ",", std::to_string(r.y), ",", std::to_string(r.w),
                 ",", std::to_string(r.h), "]");
}

std::string crops_text(const std::vector<rect>& crops, uint64_t then_id) {
  std::string t = str_cat("changed (", std::to_string(crops.size()),
                          crops.size() == 1 ? " crop" : " crops", ", in order, image pixels):\n");
  for (const rect& c : crops) t += box_text(c) + "\n";
  t += str_cat("the rest is as in look ", std::to_string(then_id));
  return t;
}

void write_changed(json_writer& j, const std::vector<rect>& crops) {
  j.key("changed").begin_array();
  for (const rect& c : crops) {
    j.begin_object().key("box").begin_array();
    for (int v : {c.x, c.y, c.w, c.h}) j.number(int64_t(v));
    j.end_array().end_object();
  }
  j.end_array();
}

}  // namespace cu
