// Owns: splitting the stdin byte stream into newline-delimited frames.
// Thread affinity: the loop thread (one splitter per input stream).
#pragma once

#include <algorithm>
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
//
// on_frame may take a second argument, bool padded: true when at least
// `padding` readable bytes follow the line in memory, as simdjson needs to
// parse it in place (SIMDJSON_PADDING) instead of copying it. Lines joined
// from several chunks always are, since they sit in the splitter's own
// buffer; a line yielded straight from the caller's chunk is not. A huge
// line therefore costs its size once here, not twice.
//
// The buffer that a line longer than kKeepBytes needed is freed once that
// line has been yielded, so one huge request does not keep its memory.
class frame_splitter {
 public:
  static constexpr size_t kKeepBytes = size_t{1} << 20;

  explicit frame_splitter(size_t max_frame, size_t padding = 0)
      : max_frame_(max_frame), padding_(padding) {}

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
        if (!emit(std::string_view(data + pos, piece), false, on_frame)) return end + 1;
      } else {
        append(data + pos, piece);
        if (hit) {
          bool go_on = emit(std::string_view(buf_), true, on_frame);
          release();
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
    if (!discarding_ && !buf_.empty()) emit(std::string_view(buf_), true, on_frame);
    release();
    discarding_ = false;
  }

  size_t buffered() const { return buf_.size(); }
  // The bytes the buffer holds on to, used or not.
  size_t buffer_capacity() const { return buf_.capacity(); }

 private:
  static const void* memchr_(const char* p, size_t n);

  // Grows the buffer by doubling, keeping padding_ spare bytes past its end.
  void append(const char* p, size_t n) {
    size_t need = buf_.size() + n + padding_;
    if (buf_.capacity() < need) buf_.reserve(std::max(need, buf_.capacity() * 2));
    buf_.append(p, n);
  }

  // Empties the buffer; frees it when a long line made it large.
  void release() {
    buf_.clear();
    if (buf_.capacity() > kKeepBytes) buf_.shrink_to_fit();
  }

  // Whether to go on after the line.
  template <class OnFrame>
  static bool emit(std::string_view line, bool padded, OnFrame& on_frame) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) return true;
    if constexpr (std::is_invocable_v<OnFrame&, std::string_view, bool>) {
      if constexpr (std::is_same_v<decltype(on_frame(line, padded)), bool>) {
        return on_frame(line, padded);
      } else {
        on_frame(line, padded);
        return true;
      }
    } else if constexpr (std::is_same_v<decltype(on_frame(line)), bool>) {
      return on_frame(line);
    } else {
      on_frame(line);
      return true;
    }
  }

  size_t max_frame_;
  size_t padding_;
  std::string buf_;
  bool discarding_ = false;
};

}  // namespace cu
