// Owns: the xcb idioms every X user here repeats, written once (picom's
// XCB_AWAIT is the model): a round trip that syncs with the server, a checked
// request whose X error comes back owned, and a request with a reply that
// comes back as a result<T> holding the owned reply or an error naming the
// request.
// Thread affinity: none; each call uses the connection of the thread that
// makes it, and a connection belongs to one thread (see x11/connection.h).
#pragma once

#include <xcb/xcb.h>

#include <memory>
#include <string>

#include "util/result.h"
#include "x11/connection.h"

namespace cu {

// An X error, owned (xcb hands errors over malloc'd, like replies).
using x11_error_ptr = std::unique_ptr<xcb_generic_error_t, free_deleter_x>;

// One round trip: GetInputFocus, the cheapest request with a reply. When it
// returns, the server has processed every request sent before it (a map,
// an XTest event, a DAMAGE subscription) and sent every event they caused.
// False when no answer came: the connection has failed.
bool x11_sync(xcb_connection_t* c);

// The X error a checked request (an xcb_*_checked call) got, owned; null
// when the server accepted it, or when the connection failed before the
// answer (xcb_connection_has_error tells the two apart). Waits for the answer.
x11_error_ptr x11_check(xcb_connection_t* c, xcb_void_cookie_t cookie);

// The error for a request that got no reply: errc::x_unavailable when the
// connection has failed, else errc::x_failed "the X server refused
// <request> (error <code>)". Takes the X error over (it may be null).
error x11_request_error(xcb_connection_t* c, const char* request, x11_error_ptr err);

// The reply to a request, owned, or why there is none (x11_request_error).
// The X error is taken here, never left on the event queue. For example:
//   auto g = x11_await(c, xcb_get_geometry(c, w), xcb_get_geometry_reply, "GetGeometry");
template <class Reply, class Cookie>
result<reply_ptr<Reply>> x11_await(xcb_connection_t* c, Cookie cookie,
                                   Reply* (*get_reply)(xcb_connection_t*, Cookie,
                                                       xcb_generic_error_t**),
                                   const char* request) {
  xcb_generic_error_t* err = nullptr;
  reply_ptr<Reply> reply(get_reply(c, cookie, &err));
  if (reply) return reply;
  return x11_request_error(c, request, x11_error_ptr(err));
}

}  // namespace cu
