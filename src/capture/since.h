// Owns: the part of a look's `since` answer that runs on a capture worker:
// from X DAMAGE's record, which rectangles of the session's image changed
// since the look named (merged into a few crops, in image pixels) or why
// the whole image must be sent instead; the crops encoded as PNGs; and the
// lines and JSON that place them.
// Thread affinity: plan_since on a capture worker (it asks the damage
// monitor); the rest anywhere (pure, or encoding buffers the caller owns).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
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

// What changed in session now's image since look `then` (id then_id), from
// the damage record. mark is the mark taken just now, before this look's
// grab (nothing: changes are not recorded).
since_plan plan_since(const capture_env& env, const look_record& then, uint64_t then_id,
                      const coord_session& now, std::optional<uint64_t> mark);

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
