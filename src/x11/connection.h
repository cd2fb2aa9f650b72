// Owns: opening an xcb connection to the configured display with a clear
// error, and reading what every user of the connection needs from the setup.
// Thread affinity: a connection belongs to the one thread that opened it.
#pragma once

#include <xcb/xcb.h>

#include <memory>
#include <string>

#include "capture/scale.h"
#include "util/result.h"

namespace cu {

struct xcb_disconnector {
  void operator()(xcb_connection_t* c) const { xcb_disconnect(c); }
};
using xcb_ptr = std::unique_ptr<xcb_connection_t, xcb_disconnector>;

// Connects to display (e.g. ":10"). On failure the error names the display.
// Safe to call from any thread: connections are serialized (see the .cpp).
result<xcb_ptr> x11_connect(const std::string& display, int* screen_number);

// The screen with this number in the connection's setup, or null.
xcb_screen_t* x11_screen(xcb_connection_t* c, int screen_number);

// Where red, green and blue sit in a 4-byte pixel of the root window's
// visual; an error when the root is not a byte-aligned 32-bit format.
result<pixel_layout> x11_root_layout(xcb_connection_t* c, xcb_screen_t* screen);

// A reply-owning pointer for any xcb reply.
struct free_deleter_x {
  void operator()(void* p) const { free(p); }
};
template <class T>
using reply_ptr = std::unique_ptr<T, free_deleter_x>;

}  // namespace cu
