#include "x11/connection.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace cu {
namespace {

// xcb_connect reads the X authority file through libXau, whose XauFileName
// keeps its result in a static buffer that it frees and reallocates on every
// call: two threads connecting at once corrupt the heap (AddressSanitizer
// caught the capture workers doing exactly that at start-up). Connections
// are rare, so they are simply serialized.
std::mutex g_connect_mutex;

// The resource-id ranges of the open connections: X gives each client a base
// and a mask, and every id the client makes (xcb_generate_id) is the base
// with bits of the mask. A range is dropped when its connection closes, since
// the X server then hands it to the next client.
struct own_range {
  const xcb_connection_t* conn;
  uint32_t base, mask;
};
std::mutex g_own_mutex;
std::vector<own_range> g_own;

}  // namespace

void x11_disconnect(xcb_connection_t* c) {
  {
    std::lock_guard<std::mutex> lock(g_own_mutex);
    std::erase_if(g_own, [c](const own_range& r) { return r.conn == c; });
  }
  xcb_disconnect(c);
}

bool x11_ours(uint32_t id) {
  std::lock_guard<std::mutex> lock(g_own_mutex);
  return std::any_of(g_own.begin(), g_own.end(), [id](const own_range& r) {
    return (id & ~r.mask) == r.base;
  });
}

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
  const xcb_setup_t* setup = xcb_get_setup(c);
  {
    std::lock_guard<std::mutex> lock(g_own_mutex);
    g_own.push_back(own_range{c, setup->resource_id_base, setup->resource_id_mask});
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

}  // namespace cu
