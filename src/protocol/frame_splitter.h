// Owns: splitting the stdin byte stream into newline-delimited frames.
// Thread affinity: the loop thread (one splitter per input stream).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace cu {

// Feeds arbitrary chunks of bytes and yields complete lines, however the
// chunks fall: a frame split across reads is joined, many frames in one read
// are all yielded. A trailing "\r" is dropped and blank lines are skipped.
// A line longer than max_frame bytes is reported once through on_oversize
// (as soon as the limit is passed), and its remaining bytes are discarded up
// to the next newline, so the stream carries on with the following frame.
//
// on_frame may return bool: false stops the feed right after that frame
// (backpressure), and feed returns how many bytes it consumed; the caller
// feeds the rest again later.
class frame_splitter {
 public:
  explicit frame_splitter(size_t max_frame) : max_frame_(max_frame) {}

  template <class OnFrame, class OnOversize>
  size_t feed(const char* data, size_t n, OnFrame&& on_frame, OnOversize&& on_oversize) {
    size_t pos = 0;
    while (pos < n) {
      const void* hit = memchr_(data + pos, n - pos);
      size_t end = hit ? static_cast<size_t>(static_cast<const char*>(hit) - data) : n;
      size_t piece = end - pos;
      if (discarding_) {
        // Skip bytes of an oversized line until its newline.
      } else if (buf_.size() + piece > max_frame_) {
        discarding_ = true;
        buf_.clear();
        buf_.shrink_to_fit();
        on_oversize();
      } else if (hit && buf_.empty()) {
        // Fast path: the whole frame is inside this chunk; no copy.
        if (!emit(std::string_view(data + pos, piece), on_frame)) return end + 1;
      } else {
        buf_.append(data + pos, piece);
        if (hit) {
          bool go_on = emit(std::string_view(buf_), on_frame);
          buf_.clear();
          if (!go_on) return end + 1;
        }
      }
      if (hit) {
        discarding_ = false;
        pos = end + 1;
      } else {
        pos = n;
      }
    }
    return n;
  }

  // End of stream: a last line without a newline is still a frame.
  template <class OnFrame>
  void finish(OnFrame&& on_frame) {
    if (!discarding_ && !buf_.empty()) emit(std::string_view(buf_), on_frame);
    buf_.clear();
    discarding_ = false;
  }

  size_t buffered() const { return buf_.size(); }

 private:
  static const void* memchr_(const char* p, size_t n);

  // Whether to go on after the line.
  template <class OnFrame>
  static bool emit(std::string_view line, OnFrame& on_frame) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) return true;
    if constexpr (std::is_same_v<decltype(on_frame(line)), bool>) {
      return on_frame(line);
    } else {
      on_frame(line);
      return true;
    }
  }

  size_t max_frame_;
  std::string buf_;
  bool discarding_ = false;
};

}  // namespace cu
