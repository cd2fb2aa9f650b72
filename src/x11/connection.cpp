#include "x11/connection.h"

#include <cstdlib>
#include <mutex>

namespace cu {
namespace {

// xcb_connect reads the X authority file through libXau, whose XauFileName
// keeps its result in a static buffer that it frees and reallocates on every
// call: two threads connecting at once corrupt the heap (AddressSanitizer
// caught the capture workers doing exactly that at start-up). Connections
// are rare, so they are simply serialized.
std::mutex g_connect_mutex;

}  // namespace

result<xcb_ptr> x11_connect(const std::string& display, int* screen_number) {
  xcb_connection_t* c;
  {
    std::lock_guard<std::mutex> lock(g_connect_mutex);
    c = xcb_connect(display.c_str(), screen_number);
  }
  if (int err = xcb_connection_has_error(c)) {
    xcb_disconnect(c);
    const char* why = err == XCB_CONN_CLOSED_PARSE_ERR ? "the display name is malformed"
                      : err == XCB_CONN_CLOSED_INVALID_SCREEN ? "no such screen"
                                                               : "is the X server running?";
    return make_error(errc::x_unavailable,
                      "cannot connect to X display \"" + display + "\" (" + why + ")");
  }
  return xcb_ptr(c);
}

bool x11_alive(xcb_connection_t* c, void (*on_event)(void* ctx, xcb_generic_event_t* ev),
               void* ctx) {
  if (xcb_connection_has_error(c)) return false;
  while (xcb_generic_event_t* ev = xcb_poll_for_event(c)) {
    if (on_event != nullptr) on_event(ctx, ev);
    free(ev);
  }
  return xcb_connection_has_error(c) == 0;
}

bool x11_server_gone(xcb_connection_t* c) {
  return xcb_connection_has_error(c) == XCB_CONN_ERROR;
}

xcb_screen_t* x11_screen(xcb_connection_t* c, int screen_number) {
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(c));
  for (int i = 0; it.rem; xcb_screen_next(&it), ++i) {
    if (i == screen_number) return it.data;
  }
  return nullptr;
}

result<pixel_layout> x11_root_layout(xcb_connection_t* c, xcb_screen_t* screen) {
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

}  // namespace cu
