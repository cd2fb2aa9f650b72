// Owns: the part of a look's `since` answer that runs on a capture worker:
// from X DAMAGE's record, which rectangles of the session's image changed
// since the look named (merged into a few crops, in image pixels), narrowed
// to where the look's kept pixels differ from the new ones, or why the
// whole image must be sent instead; the crops encoded as PNGs; and the
// lines and JSON that place them.
// Thread affinity: plan_since on a capture worker (it asks the damage
// monitor), scale_rows on the worker that owns the frame (its helpers only
// read it); the rest anywhere (pure, or encoding buffers the caller owns).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "capture/grabber.h"
#include "capture/task_runner.h"
#include "core/json_writer.h"

namespace cu {

// At most this many crops: past it the closest are merged.
constexpr size_t kMostCrops = 8;
// Each changed rectangle's crop reaches this many image pixels past it, so
// an edge the downscale blurred across is inside.
constexpr int kCropPadding = 2;
// Past this share of the image changed, the whole image is sent.
constexpr double kMostChangedShare = 0.5;

// What a since answer sends: crops of what changed (empty: nothing did),
// or, when full is not empty, the whole image, and why.
struct since_plan {
  std::vector<rect> crops;  // Image pixels, padded and clamped.
  std::string full;
};

// What may have changed in session now's image since look `then` (id
// then_id), from the damage record: the crops are every image pixel drawn
// on since (padded, clamped, merged), not yet checked against the pixels
// nor against kMostChangedShare. mark is the mark taken just now, before
// this look's grab (nothing: changes are not recorded).
since_plan plan_since(const capture_env& env, const look_record& then, uint64_t then_id,
                      const coord_session& now, std::optional<uint64_t> mark);

// Whether look then's pixels are kept and are of an image of size image.
bool has_pixels(const look_record& then, size2 image);

// Narrows the crops of a plan to where the pixels differ: the tiles inside
// them in which then's and now's images (RGB, image.w * 3 bytes a row)
// differ, merged as drawn rectangles are, then padded and clamped. A place
// drawn with the pixels it had (a redraw of the same frame) drops out.
void refine_by_pixels(since_plan& p, const uint8_t* then, const uint8_t* now, size2 image);

// Turns a plan into the whole image, saying why, when its crops cover more
// than kMostChangedShare of the image.
void limit_share(since_plan& p, uint64_t then_id, size2 image);

// Rows [first, last) of an image of size image scaled from f into rgb
// (image.w * 3 bytes a row, already image.h rows long), for each range of
// rows, spread over runner.
void scale_rows(const frame& f, size2 image, const std::vector<std::pair<int, int>>& rows,
                std::vector<uint8_t>& rgb, task_runner* runner);

// Each crop of an image of size image as a PNG; image_row fills row y of
// the whole image (image.w * 3 bytes of RGB).
result<std::vector<std::shared_ptr<const image_payload>>> encode_crops(
    const std::vector<rect>& crops, size2 image,
    const std::function<void(int y, uint8_t* row)>& image_row);

// "[x,y,w,h]".
std::string box_text(const rect& r);

// The text of a since answer with crops: each crop's place, and that the
// rest is as in look then_id.
std::string crops_text(const std::vector<rect>& crops, uint64_t then_id);

// Writes "changed": [{"box": [x, y, w, h]}, ...] into the open object.
void write_changed(json_writer& j, const std::vector<rect>& crops);

}  // namespace cu
