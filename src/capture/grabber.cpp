#include "capture/grabber.h"

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include <xcb/composite.h>
#include <xcb/shm.h>

#include <algorithm>

#include "util/log.h"
#include "util/str_cat.h"
#include "x11/request.h"
#include "x11/windows.h"

namespace cu {
namespace {

// The most pixels of one window read at once when the screen has fewer:
// 64 MiB of shared memory.
constexpr int64_t kMaxWindowPixels = int64_t(4096) * 4096;

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

// Holds the X server grabbed for one connection while it lives: no other
// client's request (a window moved, mapped or raised, a drawing) is
// processed until it ends, so what a grab reads of the windows' places and
// of the pixels is one moment. It ends on every path, a lost connection
// included (the server ends a closed connection's grab itself).
class server_grab {
 public:
  explicit server_grab(xcb_ptr& conn) : conn_(conn) { xcb_grab_server(conn_.get()); }
  ~server_grab() {
    if (!conn_) return;
    xcb_ungrab_server(conn_.get());
    xcb_flush(conn_.get());
  }
  server_grab(const server_grab&) = delete;
  server_grab& operator=(const server_grab&) = delete;

 private:
  xcb_ptr& conn_;
};

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
  composite_ = false;
  if (keep_window_pixels_) redirect_windows();
  return true;
}

void grabber::redirect_windows() {
  xcb_connection_t* c = conn_.get();
  const xcb_query_extension_reply_t* ext = xcb_get_extension_data(c, &xcb_composite_id);
  if (ext == nullptr || !ext->present) {
    log(log_level::warn, "%s has no Composite extension: a window's screenshot shows what the "
        "screen shows where it is", display_.c_str());
    return;
  }
  // NameWindowPixmap is 0.2.
  reply_ptr<xcb_composite_query_version_reply_t> v(xcb_composite_query_version_reply(
      c, xcb_composite_query_version(c, 0, 4), nullptr));
  if (!v || (v->major_version == 0 && v->minor_version < 2)) return;
  // Automatic: the server keeps painting the screen from the pixmaps, and
  // another client (a compositing manager) may still redirect manually.
  if (x11_error_ptr err = x11_check(c, xcb_composite_redirect_subwindows_checked(
                                           c, screen_->root, XCB_COMPOSITE_REDIRECT_AUTOMATIC))) {
    log(log_level::warn, "Composite refused to redirect the windows of %s (error %d)",
        display_.c_str(), int(err->error_code));
    return;
  }
  composite_ = true;
}

void grabber::disconnect() {
  detach_shm();
  fallback_reply_.reset();
  conn_.reset();
  screen_ = nullptr;
  atoms_.reset();
  ids_.reset();
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
        if (!x11_check(c, xcb_shm_attach_fd_checked(c, seg, fd, 0))) {
          seg_ = seg;
          addr_ = static_cast<uint8_t*>(p);
          size_ = bytes;
          return true;
        }
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
  x11_error_ptr err = x11_check(c, xcb_shm_attach_checked(c, seg, uint32_t(id), 0));
  // Marked for removal now: it goes away when both sides detach, even if we
  // are killed.
  shmctl(id, IPC_RMID, nullptr);
  if (err) {
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
  if (!filtering()) return get_image(screen_->root, area);
  server_grab held(conn_);
  auto shown = layout();
  if (!shown) return shown.take_error();
  auto f = get_image(screen_->root, area);
  if (!f) return f.take_error();
  hide(*f, *shown, point{area.x, area.y});
  note_hidden(*shown);
  return f;
}

result<uint64_t> grabber::hidden_print() {
  auto ok = ensure_connected();
  if (!ok) return ok.take_error();
  if (!filtering()) return uint64_t{0};
  server_grab held(conn_);
  auto shown = layout();
  if (!shown) return shown.take_error();
  note_hidden(*shown);
  return last_print_;
}

void grabber::note_hidden(const std::vector<shown_window>& shown) {
  // FNV-1a over the hidden rectangles of the whole screen, in order.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= uint64_t(v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  // All a root can be (RandR may have grown it since the connection).
  const rect everywhere{0, 0, 32767, 32767};
  last_hidden_ = hidden_rects(shown, *view_, everywhere);
  for (const rect& r : last_hidden_) mix(r.x), mix(r.y), mix(r.w), mix(r.h);
  last_print_ = h == 0 ? 1 : h;
}

result<std::vector<shown_window>> grabber::layout() {
  if (!ids_) ids_.emplace(conn_.get(), screen_->root);
  auto shown = ids_->layout();
  if (!shown && shown.err().code == errc::x_unavailable) return lost("reading the windows failed");
  return shown;
}

void grabber::hide(frame& f, const std::vector<shown_window>& shown, point on_root) const {
  const rect there{on_root.x, on_root.y, f.area.w, f.area.h};
  // The buffer is this grabber's (its SHM segment or its GetImage reply),
  // handed out read-only; it is written only here, before anyone reads it.
  uint8_t* data = const_cast<uint8_t*>(f.data);
  for (const rect& r : hidden_rects(shown, *view_, there)) {
    const int x0 = r.x - there.x, y0 = r.y - there.y;
    for (int y = y0; y < y0 + r.h; ++y) {
      std::fill_n(data + size_t(y) * f.stride + size_t(x0) * 4, size_t(r.w) * 4, uint8_t{0});
    }
  }
}

result<frame> grabber::get_image(xcb_drawable_t drawable, const rect& area) {
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
    auto r = x11_await(c,
                       xcb_shm_get_image(c, drawable, int16_t(area.x), int16_t(area.y),
                                         uint16_t(area.w), uint16_t(area.h), ~0u,
                                         XCB_IMAGE_FORMAT_Z_PIXMAP, seg_, 0),
                       xcb_shm_get_image_reply, "ShmGetImage");
    if (r) return frame{addr_, size_t(area.w) * 4, area, layout_};
    if (r.err().code == errc::x_unavailable) return lost("ShmGetImage failed");
    return r.take_error();
  }
  fallback_reply_.reset();
  auto r = x11_await(c,
                     xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, drawable, int16_t(area.x),
                                   int16_t(area.y), uint16_t(area.w), uint16_t(area.h), ~0u),
                     xcb_get_image_reply, "GetImage");
  if (!r) {
    if (r.err().code == errc::x_unavailable) return lost("GetImage failed");
    return r.take_error();
  }
  fallback_reply_ = std::move(*r);
  return frame{xcb_get_image_data(fallback_reply_.get()), size_t(area.w) * 4, area, layout_};
}

result<grabber::window_frame> grabber::grab_window(uint32_t window,
                                                   const std::optional<rect>& part) {
  auto ok = ensure_connected();
  if (!ok) return ok.take_error();
  // Filtering: the window's application, its place and its pixels are read
  // as one moment.
  std::optional<server_grab> held;
  if (filtering()) held.emplace(conn_);
  xcb_connection_t* c = conn_.get();
  const xcb_window_t root = screen_->root;
  // Everything about the window in one round trip.
  auto geometry_cookie = xcb_get_geometry(c, window);
  auto attributes_cookie = xcb_get_window_attributes(c, window);
  auto origin_cookie = xcb_translate_coordinates(c, window, root, 0, 0);
  auto tree_cookie = xcb_query_tree(c, window);
  auto screen_cookie = xcb_get_geometry(c, root);
  // The window's X error (BadWindow: it was closed) is taken here, off the
  // event queue; the test below names the window instead.
  auto geometry = x11_await(c, geometry_cookie, xcb_get_geometry_reply, "GetGeometry");
  reply_ptr<xcb_get_window_attributes_reply_t> attributes(
      xcb_get_window_attributes_reply(c, attributes_cookie, nullptr));
  reply_ptr<xcb_translate_coordinates_reply_t> origin(
      xcb_translate_coordinates_reply(c, origin_cookie, nullptr));
  reply_ptr<xcb_query_tree_reply_t> tree(xcb_query_tree_reply(c, tree_cookie, nullptr));
  reply_ptr<xcb_get_geometry_reply_t> screen_geometry(
      xcb_get_geometry_reply(c, screen_cookie, nullptr));
  if (xcb_connection_has_error(c)) return lost("reading a window's geometry failed");
  if (!geometry || !attributes || !origin || !tree) {
    return make_error(errc::x_failed, str_cat("window ", window_id_text(window),
                                              " no longer exists (it was closed); "
                                              "list_windows gives the windows there are"));
  }
  if (window == root) {
    return make_error(errc::x_failed, "the root window is the screen: take a screenshot "
                                      "without `window`");
  }
  if (!atoms_) {
    auto a = intern_atoms(c);
    if (!a) return a.take_error();
    atoms_ = *a;
  }
  if (auto why = client_window_refusal(c, *atoms_, root, window)) {
    return make_error(errc::invalid_argument, std::move(*why));
  }
  if (attributes->map_state != XCB_MAP_STATE_VIEWABLE) {
    return make_error(errc::x_failed,
                      str_cat("window ", window_id_text(window),
                              " is not on screen (minimized or unmapped); set_window_state "
                              "normal or focus_window brings it back"));
  }
  if (filtering()) {
    if (!ids_) ids_.emplace(c, root);
    auto app = ids_->of_window(window);
    if (!app) {
      if (app.err().code == errc::x_unavailable) return lost("reading a window's application failed");
      return app.take_error();
    }
    const grant_view::verdict v = view_->judge(*app);
    if (v != grant_view::verdict::allowed) {
      const std::string id = window_id_text(window);
      return make_error(errc::refused,
                        view_->refusal(str_cat("a capture of window ", id),
                                       str_cat("window ", id, " is"), *app, v));
    }
  }
  const size2 size{(*geometry)->width, (*geometry)->height};
  rect want{0, 0, size.w, size.h};
  if (part) want = intersect(*part, want);
  if (want.w == 0) {
    return make_error(errc::x_failed,
                      str_cat("the region is outside window ", window_id_text(window),
                              ", which is now ", std::to_string(size.w), "x",
                              std::to_string(size.h), "; take a new screenshot of it"));
  }
  const point at{origin->dst_x, origin->dst_y};
  // The screen now, in the window's coordinates.
  rect screen{0, 0, screen_->width_in_pixels, screen_->height_in_pixels};
  if (screen_geometry) screen = rect{0, 0, screen_geometry->width, screen_geometry->height};
  const rect screen_here{screen.x - at.x, screen.y - at.y, screen.w, screen.h};
  // A window far larger than the screen (X allows 32767 pixels a side)
  // is read where it is on screen: the whole would need gigabytes.
  const int64_t most = std::max<int64_t>(int64_t(screen.w) * screen.h, kMaxWindowPixels);
  if (int64_t(want.w) * want.h > most) {
    want = intersect(want, screen_here);
    if (want.w == 0) {
      return make_error(errc::x_failed,
                        str_cat("window ", window_id_text(window), " (", std::to_string(size.w),
                                "x", std::to_string(size.h),
                                ") is too large to read whole and is off the screen; move it "
                                "on screen with set_window_geometry"));
    }
  }

  if (composite_) {
    // The top-level window holding it (itself without a window manager, its
    // frame with one): that is the window with a pixmap of its own.
    xcb_window_t top = window;
    xcb_window_t parent = tree->parent;
    for (int depth = 0; parent != root && parent != XCB_NONE && depth < 64; ++depth) {
      top = parent;
      reply_ptr<xcb_query_tree_reply_t> up(
          xcb_query_tree_reply(c, xcb_query_tree(c, top), nullptr));
      parent = up ? up->parent : XCB_NONE;
    }
    auto top_geometry_cookie = xcb_get_geometry(c, top);
    auto inside_cookie = xcb_translate_coordinates(c, window, top, 0, 0);
    reply_ptr<xcb_get_geometry_reply_t> top_geometry(
        xcb_get_geometry_reply(c, top_geometry_cookie, nullptr));
    reply_ptr<xcb_translate_coordinates_reply_t> inside(
        xcb_translate_coordinates_reply(c, inside_cookie, nullptr));
    // The pixmap holds the top-level's border too, and is only read at a
    // depth whose pixels are 4 bytes like the root's.
    if (parent == root && top_geometry && inside &&
        (top_geometry->depth == 24 || top_geometry->depth == 32)) {
      const int border = top_geometry->border_width;
      xcb_pixmap_t pixmap = xcb_generate_id(c);
      xcb_composite_name_window_pixmap(c, top, pixmap);
      auto f = get_image(pixmap, rect{border + inside->dst_x + want.x,
                                      border + inside->dst_y + want.y, want.w, want.h});
      xcb_free_pixmap(c, pixmap);
      if (f) {
        f->area = want;
        return window_frame{*f, at, size, "composite"};
      }
      if (!conn_) return f.take_error();  // The connection was lost.
      // Not redirected after all (the window was unmapped in between):
      // read the screen as without Composite.
    }
  }

  // What the screen shows of it.
  const rect on_screen = intersect(rect{at.x + want.x, at.y + want.y, want.w, want.h}, screen);
  if (on_screen.w == 0) {
    return make_error(errc::x_failed,
                      str_cat("window ", window_id_text(window),
                              " is off the screen, and without the Composite extension only "
                              "what the screen shows can be read; move it on screen with "
                              "set_window_geometry"));
  }
  std::vector<shown_window> shown;
  if (filtering()) {
    auto l = layout();
    if (!l) return l.take_error();
    shown = std::move(*l);
  }
  auto f = get_image(root, on_screen);
  if (!f) return f.take_error();
  // What other windows the view does not allow cover of it.
  if (filtering()) hide(*f, shown, point{on_screen.x, on_screen.y});
  f->area = rect{on_screen.x - at.x, on_screen.y - at.y, on_screen.w, on_screen.h};
  return window_frame{*f, at, size, "screen"};
}

}  // namespace cu
