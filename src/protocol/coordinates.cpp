#include "protocol/coordinates.h"

#include "util/log.h"

namespace cu {

std::optional<coord_session> coordinates::live() const {
  if (session_ && session_->generation == generation_.current()) return session_;
  return std::nullopt;
}

void coordinates::adopt(const coord_session& s) {
  if (s.generation != generation_.current()) return;  // Of a server that is gone.
  if (!root_size_) root_size_ = s.root;
  if (s.root == *root_size_) {
    session_ = s;
  } else {
    // Captured after a resize the desktop thread has not reported yet (or
    // before one it has): decided when the report comes.
    early_session_ = s;
  }
}

void coordinates::set_area(const std::optional<rect>& area) {
  if (area == area_) return;
  area_ = area;
  session_.reset();
}

bool coordinates::on_screen_report(const screen_report& r) {
  if (r.lost) {
    // A capture may have reconnected to the next server and made a
    // session there before the desktop thread's news of the old one's loss
    // arrived (pending its size report, when the size changed): that one
    // is of the screen as it is now, and stays.
    auto newer = [&](const std::optional<coord_session>& s) {
      return s && s->generation > r.generation;
    };
    std::optional<coord_session> keep = newer(session_)         ? session_
                                        : newer(early_session_) ? early_session_
                                                                : std::nullopt;
    // Every other coordinate the model holds is of a screen that is gone.
    if (!keep && (session_ || area_)) {
      log(log_level::info, "X display %s went away: the coordinate session is void until the "
          "next screenshot", display_.c_str());
    }
    session_.reset();
    early_session_.reset();
    area_.reset();
    root_size_.reset();
    if (keep) {
      root_size_ = keep->root;
      session_ = keep;
    }
    return true;
  }
  if (root_size_ && *root_size_ != r.root) {
    log(log_level::info, "the screen of %s is now %dx%d (was %dx%d): the coordinate session is "
        "void until the next screenshot", display_.c_str(), r.root.w, r.root.h,
        root_size_->w, root_size_->h);
    // A capture already taken at the new size (its report came first)
    // stays; anything else is of the old screen.
    session_ = early_session_ && early_session_->root == r.root ? early_session_ : std::nullopt;
    area_.reset();
  }
  early_session_.reset();
  root_size_ = r.root;
  return false;
}

}  // namespace cu
