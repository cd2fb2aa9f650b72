// Owns: what the last capture of an area left behind for the next one: the
// image sent (an unchanged screen gets the same bytes again) and, for a
// look, its pixels, the PNG's strips (a changed screen redoes only the
// strips drawn on), and what `auto` learned about the screen's size as PNG and as JPEG. Each entry
// carries the damage marks (capture/damage.h) that say what it shows.
// Thread affinity: any thread; entries are copied in and out under a lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "capture/jpeg.h"
#include "capture/png.h"
#include "core/geometry.h"
#include "core/tool_result.h"

namespace cu {

// A capture's device area and image size, the grants' epoch its grab hid
// by (capture_env::view_epoch) and the print of what they hid
// (capture_env::hidden_print): an entry serves only captures with all four
// the same. A change of grants, or of a window's identity, draws nothing,
// so X DAMAGE cannot say that an image made before it is stale; the epoch
// and the print do.
struct capture_key {
  rect device;
  size2 image;
  uint64_t view_epoch = 0;
  uint64_t hidden_print = 0;  // capture_env::hidden_print.
  bool operator==(const capture_key&) const = default;
};

struct capture_memory {
  // The image last sent, and the damage mark taken before its grab.
  std::shared_ptr<const image_payload> image;
  uint64_t image_mark = 0;
  // With the marks toolset on, that image's pixels as RGB before encoding
  // (capture/since.h compares looks by them): the next look of the area
  // shares them when nothing was drawn, or rescales only the rows drawn
  // on. Null when the image was not a look's.
  std::shared_ptr<const std::vector<uint8_t>> pixels;
  // The PNG strips of the last PNG encode (some may be empty), and the
  // mark taken before the grab they were made from.
  std::vector<png_strip> strips;
  uint64_t strips_mark = 0;
  // auto: the last PNG did not fit the budget, so JPEG goes first; and how
  // many PNG bytes one JPEG byte stood for then, to tell when it may fit
  // again.
  bool prefer_jpeg = false;
  double png_per_jpeg = 0;
  // The JPEG quality that fit last (the best is tried again when there is
  // room).
  int jpeg_quality = kJpegBestQuality;
  // The strips of the last JPEG, and the mark taken before their grab.
  jpeg_strips jpeg;
  uint64_t jpeg_mark = 0;
};

class capture_cache {
 public:
  // Entries kept: the screenshot's, and a zoom's or two.
  static constexpr size_t kEntries = 3;

  std::optional<capture_memory> find(const capture_key& key) const;
  void store(const capture_key& key, capture_memory memory);

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<capture_key, capture_memory>> entries_;  // Newest first.
};

}  // namespace cu
