#include "toolsets/marks/looks.h"

#include <algorithm>

namespace cu {
namespace {

// The record is shared with captures that may still read it: a copy
// without the pixels takes its place.
void drop_pixels(look& l) {
  if (!l.seen->pixels) return;
  auto without = std::make_shared<look_record>(*l.seen);
  without->pixels.reset();
  l.seen = std::move(without);
}

}  // namespace

void looks::keep(uint64_t id, std::shared_ptr<const look_record> seen) {
  if (seen->is_map) latest_map_ = look{id, seen};
  kept_.push_back(look{id, std::move(seen)});
  while (kept_.size() > kKept) kept_.pop_front();
  for (size_t i = 0; i + kKeptPixels < kept_.size(); ++i) drop_pixels(kept_[i]);
  if (!latest_map_) return;
  const size_t newest = kept_.size() - std::min(kept_.size(), kKeptPixels);
  for (size_t i = newest; i < kept_.size(); ++i) {
    if (kept_[i].id == latest_map_->id) return;
  }
  drop_pixels(*latest_map_);
}

const look* looks::find(uint64_t id) const {
  for (const look& l : kept_) {
    if (l.id == id) return &l;
  }
  if (latest_map_ && latest_map_->id == id) return &*latest_map_;
  return nullptr;
}

const look* looks::latest() const { return kept_.empty() ? nullptr : &kept_.back(); }

std::vector<uint64_t> looks::kept_ids() const {
  std::vector<uint64_t> ids;
  for (const look& l : kept_) ids.push_back(l.id);
  return ids;
}

}  // namespace cu
