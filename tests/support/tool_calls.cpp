#include "support/tool_calls.h"

#include <cstdio>
#include <vector>

namespace cu::test {

std::string hex(xcb_window_t w) {
  char buf[16];
  snprintf(buf, sizeof buf, "0x%x", unsigned(w));
  return buf;
}

std::ostream& operator<<(std::ostream& os, const area& a) {
  return os << a.w << "x" << a.h << "+" << a.x << "+" << a.y;
}

area json_area(simdjson::dom::element e) {
  return area{int(num(e, "x")), int(num(e, "y")), int(num(e, "width")), int(num(e, "height"))};
}

area x_area(x_observer& obs, xcb_window_t w) {
  xcb_connection_t* c = obs.connection();
  auto* g = xcb_get_geometry_reply(c, xcb_get_geometry(c, w), nullptr);
  auto* t = xcb_translate_coordinates_reply(c, xcb_translate_coordinates(c, w, obs.root(), 0, 0),
                                            nullptr);
  REQUIRE(g != nullptr);
  REQUIRE(t != nullptr);
  area a{t->dst_x, t->dst_y, g->width, g->height};
  free(g);
  free(t);
  return a;
}

json_ptr ok_call(server_process& s, std::string_view tool, std::string_view args) {
  json_ptr r = s.call_tool(tool, args);
  INFO(tool << " " << args.substr(0, 300) << " answered " << r->text.substr(0, 800));
  REQUIRE_FALSE(is_error(*r));
  return r;
}

std::string error_text(server_process& s, std::string_view tool, std::string_view args) {
  json_ptr r = s.call_tool(tool, args);
  INFO(tool << " " << args.substr(0, 300) << " answered " << r->text.substr(0, 600));
  REQUIRE(is_error(*r));
  return text_of(*r);
}

int64_t num(simdjson::dom::element e, const char* k) {
  INFO("the integer " << k);
  REQUIRE(e.is_object());
  int64_t v = 0;
  REQUIRE(e[k].get(v) == simdjson::SUCCESS);
  return v;
}

void start_openbox(x_observer& obs, std::optional<background_program>& wm, const std::string& d) {
  wm.emplace(std::vector<std::string>{"openbox", "--sm-disable"}, d);
  wait_until([&] { return obs.window_property(obs.root(), "_NET_SUPPORTING_WM_CHECK") != XCB_NONE; },
             "openbox");
}

std::string region(int x0, int y0, int x1, int y1) {
  // Appended, not a + chain: GCC 12 at -O3 reports a false -Wrestrict there.
  std::string s = "[";
  for (int v : {x0, y0, x1, y1}) {
    if (s.size() > 1) s += ",";
    s += std::to_string(v);
  }
  return s + "]";
}

}  // namespace cu::test
