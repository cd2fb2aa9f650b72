#include "x11/monitors.h"

#include <xcb/randr.h>

#include <cctype>
#include <charconv>

#include "util/ascii.h"
#include "x11/connection.h"

namespace cu {

std::string geometry_text(const rect& r) {
  std::string out = std::to_string(r.w);
  out += 'x';
  out += std::to_string(r.h);
  out += r.x >= 0 ? "+" : "";
  out += std::to_string(r.x);
  out += r.y >= 0 ? "+" : "";
  out += std::to_string(r.y);
  return out;
}

std::vector<monitor> list_monitors(xcb_connection_t* c, xcb_window_t root) {
  std::vector<monitor> out;
  const xcb_query_extension_reply_t* ext = xcb_get_extension_data(c, &xcb_randr_id);
  if (ext == nullptr || !ext->present) return out;
  reply_ptr<xcb_randr_query_version_reply_t> v(
      xcb_randr_query_version_reply(c, xcb_randr_query_version(c, 1, 5), nullptr));
  if (!v || (v->major_version == 1 && v->minor_version < 5)) return out;
  reply_ptr<xcb_randr_get_monitors_reply_t> m(
      xcb_randr_get_monitors_reply(c, xcb_randr_get_monitors(c, root, 1), nullptr));
  if (!m) return out;
  std::vector<xcb_get_atom_name_cookie_t> names;
  for (auto it = xcb_randr_get_monitors_monitors_iterator(m.get()); it.rem;
       xcb_randr_monitor_info_next(&it)) {
    monitor mon;
    mon.geometry = rect{it.data->x, it.data->y, it.data->width, it.data->height};
    mon.primary = it.data->primary != 0;
    out.push_back(mon);
    names.push_back(xcb_get_atom_name(c, it.data->name));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    reply_ptr<xcb_get_atom_name_reply_t> n(xcb_get_atom_name_reply(c, names[i], nullptr));
    if (n) {
      out[i].name.assign(xcb_get_atom_name_name(n.get()),
                         size_t(xcb_get_atom_name_name_length(n.get())));
    }
  }
  return out;
}

result<std::optional<monitor>> choose_monitor(const std::vector<monitor>& monitors,
                                              std::string_view requested) {
  if (iequals(requested, "auto")) return std::optional<monitor>();
  for (const monitor& m : monitors) {
    if (iequals(m.name, requested)) return std::optional<monitor>(m);
  }
  size_t index = 0;
  auto [end, ec] = std::from_chars(requested.data(), requested.data() + requested.size(), index);
  if (ec == std::errc() && end == requested.data() + requested.size() && !requested.empty() &&
      index < monitors.size()) {
    return std::optional<monitor>(monitors[index]);
  }
  std::string msg = "Invalid argument \"display\": no monitor \"";
  msg.append(requested.substr(0, 64));
  msg += "\"; expected \"auto\" (the whole screen)";
  for (size_t i = 0; i < monitors.size(); ++i) {
    msg += i == 0 ? ", or one of: " : ", ";
    msg += std::to_string(i);
    msg += " (";
    msg += monitors[i].name;
    msg += ' ';
    msg += geometry_text(monitors[i].geometry);
    msg += ')';
  }
  if (monitors.empty()) msg += "; this display reports no RandR monitors";
  return make_error(errc::invalid_argument, std::move(msg));
}

}  // namespace cu
