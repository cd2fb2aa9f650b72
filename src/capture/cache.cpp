#include "capture/cache.h"

#include <algorithm>

namespace cu {

std::optional<capture_memory> capture_cache::find(const capture_key& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, m] : entries_) {
    if (k == key) return m;
  }
  return std::nullopt;
}

void capture_cache::store(const capture_key& key, capture_memory memory) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const auto& e) { return e.first == key; });
  if (it != entries_.end()) entries_.erase(it);
  entries_.insert(entries_.begin(), {key, std::move(memory)});
  if (entries_.size() > kEntries) entries_.pop_back();
}

}  // namespace cu
