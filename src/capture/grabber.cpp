#include "capture/grabber.h"

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include <xcb/shm.h>

#include "util/log.h"

namespace cu {
namespace {

// Where red, green and blue sit in a 4-byte pixel of the root window's
// visual; an error when the root is not a byte-aligned 32-bit format.
result<pixel_layout> root_layout(xcb_connection_t* c, xcb_screen_t* screen) {
  const xcb_setup_t* setup = xcb_get_setup(c);
  int bpp = 0;
  for (auto f = xcb_setup_pixmap_formats_iterator(setup); f.rem; xcb_format_next(&f)) {
    if (f.data->depth == screen->root_depth) bpp = f.data->bits_per_pixel;
  }
  const xcb_visualtype_t* visual = nullptr;
  for (auto d = xcb_screen_allowed_depths_iterator(screen); d.rem && !visual;
       xcb_depth_next(&d)) {
    for (auto v = xcb_depth_visuals_iterator(d.data); v.rem; xcb_visualtype_next(&v)) {
      if (v.data->visual_id == screen->root_visual) {
        visual = v.data;
        break;
      }
    }
  }
  if (bpp != 32 || visual == nullptr) {
    return make_error(errc::x_failed, "unsupported root pixel format (depth " +
                                          std::to_string(screen->root_depth) + ", " +
                                          std::to_string(bpp) + " bits per pixel)");
  }
  auto byte_of = [&](uint32_t mask) -> int {
    int shift = __builtin_ctz(mask);
    if ((mask >> shift) != 0xff || shift % 8 != 0) return -1;
    int b = shift / 8;
    return setup->image_byte_order == XCB_IMAGE_ORDER_LSB_FIRST ? b : 3 - b;
  };
  pixel_layout layout{byte_of(visual->red_mask), byte_of(visual->green_mask),
                      byte_of(visual->blue_mask)};
  if (visual->red_mask == 0 || visual->green_mask == 0 || visual->blue_mask == 0 ||
      layout.r < 0 || layout.g < 0 || layout.b < 0) {
    return make_error(errc::x_failed, "unsupported root visual (channels not whole bytes)");
  }
  return layout;
}

}  // namespace

grabber::grabber(std::string display, server_generation& generation)
    : display_(std::move(display)), generations_(generation) {}

grabber::~grabber() { disconnect(); }

const char* grabber::transport() const {
  if (!conn_) return "disconnected";
  if (seg_ != 0) return shm_fd_ ? "MIT-SHM (fd)" : "MIT-SHM (SysV)";
  return "GetImage";
}

result<bool> grabber::ensure_connected() {
  // Reading is how a closed socket shows: a server that went away since
  // the last capture is noticed here, before any request depends on it.
  if (conn_ && x11_alive(conn_.get())) return true;
  if (conn_ && x11_server_gone(conn_.get())) generations_.lost(conn_generation_);
  disconnect();
  conn_generation_ = generations_.current();
  int screen_number = 0;
  auto c = x11_connect(display_, &screen_number);
  if (!c) return c.take_error();
  xcb_screen_t* screen = x11_screen(c->get(), screen_number);
  if (screen == nullptr) return make_error(errc::x_unavailable, "display has no such screen");
  auto layout = root_layout(c->get(), screen);
  if (!layout) return layout.take_error();
  conn_ = std::move(*c);
  screen_ = screen;
  layout_ = *layout;
  shm_present_ = false;
  const xcb_query_extension_reply_t* ext = xcb_get_extension_data(conn_.get(), &xcb_shm_id);
  if (ext && ext->present) {
    reply_ptr<xcb_shm_query_version_reply_t> v(xcb_shm_query_version_reply(
        conn_.get(), xcb_shm_query_version(conn_.get()), nullptr));
    if (v) {
      shm_present_ = true;
      shm_fd_ = v->major_version > 1 || (v->major_version == 1 && v->minor_version >= 2);
    }
  }
  return true;
}

void grabber::disconnect() {
  detach_shm();
  fallback_reply_.reset();
  conn_.reset();
  screen_ = nullptr;
}

error grabber::lost(const char* what) {
  disconnect();
  return make_error(errc::x_unavailable,
                    std::string("lost the connection to X display \"") + display_ + "\" (" +
                        what + ")");
}

bool grabber::attach_shm(size_t bytes) {
  xcb_connection_t* c = conn_.get();
  uint32_t seg = xcb_generate_id(c);
  // Prefer a memfd passed over the socket (SHM 1.2): no SysV limits, and the
  // memory disappears with the last mapping. Fall back to a SysV segment.
  if (shm_fd_) {
    int fd = memfd_create("computer-use-capture", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, off_t(bytes)) == 0) {
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        // xcb closes fd once the request is sent.
        xcb_generic_error_t* err =
            xcb_request_check(c, xcb_shm_attach_fd_checked(c, seg, fd, 0));
        if (err == nullptr) {
          seg_ = seg;
          addr_ = static_cast<uint8_t*>(p);
          size_ = bytes;
          return true;
        }
        free(err);
        munmap(p, bytes);
        fd = -1;
      }
    }
    if (fd >= 0) close(fd);
    shm_fd_ = false;
  }
  int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0) return false;
  void* p = shmat(id, nullptr, 0);
  if (p == reinterpret_cast<void*>(-1)) {
    shmctl(id, IPC_RMID, nullptr);
    return false;
  }
  xcb_generic_error_t* err = xcb_request_check(c, xcb_shm_attach_checked(c, seg, uint32_t(id), 0));
  // Marked for removal now: it goes away when both sides detach, even if we
  // are killed.
  shmctl(id, IPC_RMID, nullptr);
  if (err != nullptr) {
    free(err);
    shmdt(p);
    return false;
  }
  seg_ = seg;
  addr_ = static_cast<uint8_t*>(p);
  size_ = bytes;
  sysv_id_ = id;
  return true;
}

void grabber::detach_shm() {
  if (seg_ == 0) return;
  if (conn_ && !xcb_connection_has_error(conn_.get())) {
    xcb_shm_detach(conn_.get(), seg_);
    xcb_flush(conn_.get());
  }
  if (sysv_id_ >= 0) {
    shmdt(addr_);
  } else {
    munmap(addr_, size_);
  }
  seg_ = 0;
  addr_ = nullptr;
  size_ = 0;
  sysv_id_ = -1;
}

result<rect> grabber::screen_rect() {
  // A server that died since the check in ensure_connected (or whose
  // socket had not shown it yet) fails the round trip: try once more on a
  // new connection.
  for (int attempt = 0;; ++attempt) {
    auto ok = ensure_connected();
    if (!ok) return ok.take_error();
    // Read before the round trip: if the round trip succeeds, the server
    // was alive after this, so it is this generation's.
    uint64_t generation = generations_.current();
    // Ask every time: RandR may have resized the root since the last capture.
    reply_ptr<xcb_get_geometry_reply_t> g(xcb_get_geometry_reply(
        conn_.get(), xcb_get_geometry(conn_.get(), screen_->root), nullptr));
    if (g) {
      generation_now_ = generation;
      return rect{0, 0, g->width, g->height};
    }
    bool gone = x11_server_gone(conn_.get());
    if (gone) generations_.lost(conn_generation_);
    if (!gone || attempt > 0) return lost("GetGeometry failed");
    disconnect();
  }
}

result<frame> grabber::grab(const rect& area) {
  auto ok = ensure_connected();
  if (!ok) return ok.take_error();
  xcb_connection_t* c = conn_.get();
  const size_t bytes = size_t(area.w) * size_t(area.h) * 4;
  if (shm_present_ && bytes > size_) {
    detach_shm();
    // Size the segment for the whole screen, so later grabs of any region
    // reuse it.
    size_t want = bytes;
    if (screen_) want = std::max(want, size_t(screen_->width_in_pixels) *
                                           size_t(screen_->height_in_pixels) * 4);
    if (!attach_shm(want)) {
      log(log_level::warn, "MIT-SHM unavailable on %s; using GetImage", display_.c_str());
      shm_present_ = false;
    }
  }
  if (seg_ != 0) {
    xcb_generic_error_t* err = nullptr;
    reply_ptr<xcb_shm_get_image_reply_t> r(xcb_shm_get_image_reply(
        c,
        xcb_shm_get_image(c, screen_->root, int16_t(area.x), int16_t(area.y), uint16_t(area.w),
                          uint16_t(area.h), ~0u, XCB_IMAGE_FORMAT_Z_PIXMAP, seg_, 0),
        &err));
    if (r) return frame{addr_, size_t(area.w) * 4, area, layout_};
    if (xcb_connection_has_error(c)) return lost("ShmGetImage failed");
    int code = err ? err->error_code : 0;
    free(err);
    return make_error(errc::x_failed,
                      "the X server refused ShmGetImage (error " + std::to_string(code) + ")");
  }
  xcb_generic_error_t* err = nullptr;
  fallback_reply_.reset(xcb_get_image_reply(
      c,
      xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, screen_->root, int16_t(area.x),
                    int16_t(area.y), uint16_t(area.w), uint16_t(area.h), ~0u),
      &err));
  if (!fallback_reply_) {
    if (xcb_connection_has_error(c)) return lost("GetImage failed");
    int code = err ? err->error_code : 0;
    free(err);
    return make_error(errc::x_failed,
                      "the X server refused GetImage (error " + std::to_string(code) + ")");
  }
  return frame{xcb_get_image_data(fallback_reply_.get()), size_t(area.w) * 4, area, layout_};
}

}  // namespace cu
