// Owns: the record of the recent looks the marks toolset made: each map's
// number (its look id), the coordinate session it made, the X DAMAGE mark
// taken just before its pixels were grabbed, its marks (boxes in the
// image; the session maps them to the screen), and for the newest two,
// the image's pixels. Acting by mark reads the
// latest map; `since` reads the look it names.
// Thread affinity: the loop thread (the marks room's service; a capture
// worker or the recognizer fills a look_record before its completion is
// posted, and the loop reads it only after).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "capture/pool.h"
#include "toolsets/mark_resolver.h"
#include "toolsets/registry.h"

namespace cu {

// A look kept: its id and what it saw.
struct look {
  uint64_t id = 0;
  std::shared_ptr<const look_record> seen;
};

class looks final : public room_service, public mark_resolver {
 public:
  // How many looks are kept: a `since` or a mark older than that is
  // refused with the reason.
  static constexpr size_t kKept = 16;
  // How many of the newest looks keep their pixels (about 3 MB each at
  // 1366x768) for `since` to compare with; an older look's since answers
  // from the damage record alone.
  static constexpr size_t kKeptPixels = 2;

  // The id the next look will have (ids start at 1 and never repeat in a
  // server's life).
  uint64_t reserve() { return next_++; }

  // Keeps what look id saw (a reserved id whose capture succeeded), and
  // drops the pixels of the looks no longer among the kKeptPixels newest
  // (a capture still reading them holds its own reference).
  void keep(uint64_t id, std::shared_ptr<const look_record> seen);

  // The kept look with this id, or null (never made, failed, or too old).
  const look* find(uint64_t id) const;

  // The latest kept look, or null.
  const look* latest() const;

  // The latest map kept (screenshots in between do not push it out), or
  // null: what a mark number refers to.
  const look* latest_map() const { return latest_map_ ? &*latest_map_ : nullptr; }

  // The ids of the kept looks, oldest first (what a refused `since` lists).
  std::vector<uint64_t> kept_ids() const;

  // Acting by mark (mark_act.cpp): the pointer tools' `mark` against the
  // latest look.
  result<std::vector<mark_aim>> aim(tool_call& call, const std::vector<mark_ref>& marks) override;
  void again(tool_call& call, std::vector<mark_aim> aims, std::vector<bool> stale,
             std::vector<std::string> unreachable, bool by_action,
             std::function<void(tool_call&, std::vector<mark_aim>)> next) override;
  void unreachable(tool_call& call, const mark_aim& aim, const std::string& why,
                   bool by_action) override;

  void cancel(uint64_t) override {}
  void stop() override {}

 private:
  uint64_t next_ = 1;
  std::deque<look> kept_;  // Oldest first.
  std::optional<look> latest_map_;
};

}  // namespace cu
