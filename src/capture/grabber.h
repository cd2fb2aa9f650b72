// Owns: one capture worker's X connection and its MIT-SHM segment, attached
// once and reused for every grab; xcb_get_image when SHM is unavailable.
// Thread affinity: the capture worker thread that created it, only.
#pragma once

#include <xcb/xcb.h>

#include <cstdint>
#include <string>

#include "core/geometry.h"
#include "capture/scale.h"
#include "util/result.h"
#include "x11/connection.h"
#include "core/generation.h"

namespace cu {

// Pixels of one grab: 4 bytes per pixel, rows stride bytes apart. Valid until
// the next grab on the same grabber.
struct frame {
  const uint8_t* data = nullptr;
  size_t stride = 0;
  rect area;
  pixel_layout layout;
};

class grabber {
 public:
  grabber(std::string display, server_generation& generation);
  ~grabber();
  grabber(const grabber&) = delete;
  grabber& operator=(const grabber&) = delete;

  // The root window's current area, connecting first when not connected
  // (so a display that was down is tried again on every call). A
  // connection whose server went away since the last call is replaced at
  // once, so the first capture after an X server restart succeeds.
  result<rect> screen_rect();

  // The server generation of the last successful screen_rect(): what a
  // session captured now belongs to.
  uint64_t generation() const { return generation_now_; }

  // Copies area (inside the root window) into the reused buffer.
  result<frame> grab(const rect& area);

  bool connected() const { return conn_ != nullptr; }
  const char* transport() const;

 private:
  result<bool> ensure_connected();
  error lost(const char* what);
  void disconnect();
  bool attach_shm(size_t bytes);
  void detach_shm();

  std::string display_;
  server_generation& generations_;
  uint64_t conn_generation_ = 0;  // When conn_ was made.
  uint64_t generation_now_ = 0;
  xcb_ptr conn_;
  xcb_screen_t* screen_ = nullptr;
  pixel_layout layout_;
  bool shm_present_ = false;
  bool shm_fd_ = false;
  uint32_t seg_ = 0;
  uint8_t* addr_ = nullptr;
  size_t size_ = 0;
  int sysv_id_ = -1;
  reply_ptr<xcb_get_image_reply_t> fallback_reply_;
};

}  // namespace cu
