#include "x11/atoms.h"

#include <array>
#include <cstring>
#include <utility>

#include "x11/connection.h"

namespace cu {

result<x11_atoms> intern_atoms(xcb_connection_t* c) {
  x11_atoms a;
  // Sized by its entries, so a name added is a name interned.
  const std::pair<const char*, xcb_atom_t*> names[] = {
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
      {"WM_CLIENT_LEADER", &a.WM_CLIENT_LEADER},
      {"WM_DELETE_WINDOW", &a.WM_DELETE_WINDOW},
      {"WM_CHANGE_STATE", &a.WM_CHANGE_STATE},
      {"_NET_WM_STATE", &a._NET_WM_STATE},
      {"_NET_WM_STATE_HIDDEN", &a._NET_WM_STATE_HIDDEN},
      {"_NET_WM_STATE_MAXIMIZED_VERT", &a._NET_WM_STATE_MAXIMIZED_VERT},
      {"_NET_WM_STATE_MAXIMIZED_HORZ", &a._NET_WM_STATE_MAXIMIZED_HORZ},
      {"_NET_WM_STATE_FULLSCREEN", &a._NET_WM_STATE_FULLSCREEN},
      {"_NET_WM_STATE_ABOVE", &a._NET_WM_STATE_ABOVE},
      {"_NET_FRAME_EXTENTS", &a._NET_FRAME_EXTENTS},
      {"_NET_WM_DESKTOP", &a._NET_WM_DESKTOP},
      {"_NET_WM_WINDOW_TYPE", &a._NET_WM_WINDOW_TYPE},
      {"_NET_MOVERESIZE_WINDOW", &a._NET_MOVERESIZE_WINDOW},
      {"_NET_CLOSE_WINDOW", &a._NET_CLOSE_WINDOW},
      {"_NET_WM_WINDOW_TYPE_NORMAL", &a.window_types[0]},
      {"_NET_WM_WINDOW_TYPE_DIALOG", &a.window_types[1]},
      {"_NET_WM_WINDOW_TYPE_UTILITY", &a.window_types[2]},
      {"_NET_WM_WINDOW_TYPE_TOOLBAR", &a.window_types[3]},
      {"_NET_WM_WINDOW_TYPE_SPLASH", &a.window_types[4]},
      {"_NET_WM_WINDOW_TYPE_MENU", &a.window_types[5]},
      {"_NET_WM_WINDOW_TYPE_DOCK", &a.window_types[6]},
      {"_NET_WM_WINDOW_TYPE_DESKTOP", &a.window_types[7]},
      {"_NET_WM_WINDOW_TYPE_DROPDOWN_MENU", &a.window_types[8]},
      {"_NET_WM_WINDOW_TYPE_POPUP_MENU", &a.window_types[9]},
      {"_NET_WM_WINDOW_TYPE_TOOLTIP", &a.window_types[10]},
      {"_NET_WM_WINDOW_TYPE_NOTIFICATION", &a.window_types[11]},
  };
  std::array<xcb_intern_atom_cookie_t, std::size(names)> cookies;
  for (size_t i = 0; i < std::size(names); ++i) {
    cookies[i] = xcb_intern_atom(c, 0, uint16_t(strlen(names[i].first)), names[i].first);
  }
  for (size_t i = 0; i < std::size(names); ++i) {
    reply_ptr<xcb_intern_atom_reply_t> r(xcb_intern_atom_reply(c, cookies[i], nullptr));
    if (!r) return make_error(errc::x_unavailable, "cannot intern X atoms");
    *names[i].second = r->atom;
  }
  return a;
}

}  // namespace cu
