#include "x11/atoms.h"

#include <array>
#include <cstring>
#include <utility>

#include "x11/connection.h"

namespace cu {

result<x11_atoms> intern_atoms(xcb_connection_t* c) {
  x11_atoms a;
  const std::array<std::pair<const char*, xcb_atom_t*>, 21> names = {{
      {"CLIPBOARD", &a.CLIPBOARD},
      {"TARGETS", &a.TARGETS},
      {"MULTIPLE", &a.MULTIPLE},
      {"TIMESTAMP", &a.TIMESTAMP},
      {"INCR", &a.INCR},
      {"UTF8_STRING", &a.UTF8_STRING},
      {"TEXT", &a.TEXT},
      {"text/plain;charset=utf-8", &a.text_plain_utf8},
      {"text/plain", &a.text_plain},
      {"_CU_SELECTION", &a.CU_SELECTION},
      {"_CU_TIMESTAMP", &a.CU_TIMESTAMP},
      {"WM_STATE", &a.WM_STATE},
      {"WM_PROTOCOLS", &a.WM_PROTOCOLS},
      {"WM_TAKE_FOCUS", &a.WM_TAKE_FOCUS},
      {"_NET_WM_NAME", &a._NET_WM_NAME},
      {"_NET_WM_PID", &a._NET_WM_PID},
      {"_NET_CLIENT_LIST", &a._NET_CLIENT_LIST},
      {"_NET_CLIENT_LIST_STACKING", &a._NET_CLIENT_LIST_STACKING},
      {"_NET_ACTIVE_WINDOW", &a._NET_ACTIVE_WINDOW},
      {"_NET_SUPPORTED", &a._NET_SUPPORTED},
      {"_NET_SUPPORTING_WM_CHECK", &a._NET_SUPPORTING_WM_CHECK},
  }};
  std::array<xcb_intern_atom_cookie_t, names.size()> cookies;
  for (size_t i = 0; i < names.size(); ++i) {
    cookies[i] = xcb_intern_atom(c, 0, uint16_t(strlen(names[i].first)), names[i].first);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    reply_ptr<xcb_intern_atom_reply_t> r(xcb_intern_atom_reply(c, cookies[i], nullptr));
    if (!r) return make_error(errc::x_unavailable, "cannot intern X atoms");
    *names[i].second = r->atom;
  }
  return a;
}

}  // namespace cu
