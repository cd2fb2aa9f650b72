// Owns: opening an xcb connection to the configured display with a clear
// error, reading what every user of the connection needs from the setup, and
// knowing which X resources (windows above all) belong to this process's own
// connections.
// Thread affinity: a connection belongs to the one thread that opened it;
// x11_ours may be asked from any thread.
#pragma once

#include <xcb/xcb.h>

#include <memory>
#include <string>

#include "util/result.h"

namespace cu {

// Closes a connection made by x11_connect (its resources stop being ours).
void x11_disconnect(xcb_connection_t* c);

struct xcb_disconnector {
  void operator()(xcb_connection_t* c) const { x11_disconnect(c); }
};
using xcb_ptr = std::unique_ptr<xcb_connection_t, xcb_disconnector>;

// Connects to display (e.g. ":10"). On failure the error names the display.
// Safe to call from any thread: connections are serialized (see the .cpp).
result<xcb_ptr> x11_connect(const std::string& display, int* screen_number);

// Whether the X resource id belongs to one of this process's open
// connections (its resource-id base, from the connection setup): a window the
// server made itself, such as the desktop thread's clipboard window, which no
// tool may treat as an application's window whatever another client claims.
bool x11_ours(uint32_t id);

// Whether c's X server is still there. Reading is the only way to notice a
// closed socket, so this reads whatever is waiting without blocking, and
// hands every event it reads to on_event (which may be empty). False once
// the connection has failed, for whatever reason.
bool x11_alive(xcb_connection_t* c, void (*on_event)(void* ctx, xcb_generic_event_t* ev) = nullptr,
               void* ctx = nullptr);

// Whether a failed connection failed because the X server went away (the
// socket closed or broke), rather than through a fault of ours (a request
// too long, a protocol error), after which the server is still there.
bool x11_server_gone(xcb_connection_t* c);

// The screen with this number in the connection's setup, or null.
xcb_screen_t* x11_screen(xcb_connection_t* c, int screen_number);

// A reply-owning pointer for any xcb reply.
struct free_deleter_x {
  void operator()(void* p) const { free(p); }
};
template <class T>
using reply_ptr = std::unique_ptr<T, free_deleter_x>;

}  // namespace cu
