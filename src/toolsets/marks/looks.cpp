#include "toolsets/marks/looks.h"

namespace cu {

void looks::keep(uint64_t id, std::shared_ptr<const look_record> seen) {
  if (seen->is_map) latest_map_ = look{id, seen};
  kept_.push_back(look{id, std::move(seen)});
  while (kept_.size() > kKept) kept_.pop_front();
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
