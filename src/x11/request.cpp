#include "x11/request.h"

namespace cu {

bool x11_sync(xcb_connection_t* c) {
  return reply_ptr<xcb_get_input_focus_reply_t>(
             xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nullptr)) != nullptr;
}

x11_error_ptr x11_check(xcb_connection_t* c, xcb_void_cookie_t cookie) {
  return x11_error_ptr(xcb_request_check(c, cookie));
}

error x11_request_error(xcb_connection_t* c, const char* request, x11_error_ptr err) {
  if (xcb_connection_has_error(c)) {
    return make_error(errc::x_unavailable,
                      std::string("lost the connection to the X server (") + request + " failed)");
  }
  const int code = err ? err->error_code : 0;
  return make_error(errc::x_failed, std::string("the X server refused ") + request + " (error " +
                                        std::to_string(code) + ")");
}

}  // namespace cu
