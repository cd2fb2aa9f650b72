// The clipboard and session tools: grants live on the loop thread; the
// clipboard, open_application and switch_display run on the desktop thread.
#include <algorithm>

#include "core/json_writer.h"
#include "toolsets/args.h"
#include "toolsets/grants.h"
#include "toolsets/computer/room.h"
#include "toolsets/tool_call.h"
#include "util/ascii.h"
#include "util/str_cat.h"
#include "util/utf8.h"
#include "desktop/desktop_op.h"

namespace cu {
namespace {

// Bounds on what a caller may make the session hold: an application or
// display name is a name, not a document, and the grants stay small.
constexpr size_t kMaxNameBytes = 1024;
constexpr size_t kMaxGrantedApps = 1024;

void write_flags(json_writer& j, const session_grants& g) {
  j.key("clipboardRead").boolean(g.clipboard_read);
  j.key("clipboardWrite").boolean(g.clipboard_write);
  j.key("systemKeyCombos").boolean(g.system_key_combos);
}

void write_apps(json_writer& j, const session_grants& g) {
  j.begin_array();
  for (const std::string& a : g.apps) j.string(a);
  j.end_array();
}

// Why open_application may not start or focus app by its name, or nothing:
// the deny list names it (or a desktop entry's name for what it names), or
// grants are enforced and the name as given is not among the grants (any
// case). The window it would focus is judged as well, on the desktop
// thread, so a name that is granted cannot reach another application's
// window through its title.
std::string open_refusal(const grant_view& view, std::string_view app) {
  const std::string doing = str_cat("open_application \"", app, "\"");
  if (view.name_denied(app)) {
    return str_cat(doing, " was refused: \"", app,
                   "\" is an application the operator keeps from the agent (CU_DENY_APPS); no "
                   "grant lifts that");
  }
  if (view.mode != grants_mode::enforce || view.granted.count(ascii_lower(app)) != 0) return {};
  return str_cat(doing, " was refused: \"", app,
                 "\" is not granted to this session (CU_GRANTS=enforce); call request_access "
                 "with apps [\"",
                 app, "\"] first");
}

std::string needs_grant(std::string_view tool, std::string_view flag) {
  return str_cat(tool, " needs the ", flag, " grant: call request_access with ", flag,
                 ": true first");
}

}  // namespace

std::string request_access_json(const session_grants& g, const std::vector<std::string>& denied,
                                bool filtering) {
  std::string out;
  json_writer j(out);
  j.begin_object().key("grantedApplications");
  write_apps(j, g);
  j.key("deniedApplications").begin_array();
  for (const std::string& d : denied) j.string(d);
  j.end_array();
  j.key("screenshotFiltering").boolean(filtering);
  write_flags(j, g);
  j.end_object();
  return out;
}

std::string granted_json(const session_grants& g) {
  std::string out;
  json_writer j(out);
  j.begin_object().key("applications");
  write_apps(j, g);
  write_flags(j, g);
  j.key("coordinateMode").string("screenshot").end_object();
  return out;
}

std::optional<std::string> system_combo_refusal(const session_grants& g, const grant_view& view,
                                                const std::vector<key_chord>& chords,
                                                std::string_view tool, std::string_view text) {
  for (const key_chord& c : chords) {
    if (!is_server_chord(c.keys)) continue;
    return str_cat(tool, " \"", text.substr(0, 128),
                   "\" was refused: it reaches the X server itself rather than a window (it "
                   "would end the server, switch virtual terminals, break grabs, log the "
                   "server's state, change the video mode, or turn on a keyboard control such "
                   "as MouseKeys), so this server never sends it, whatever the grants "
                   "(docs/grants.md)");
  }
  if (view.mode != grants_mode::enforce || g.system_key_combos) return std::nullopt;
  for (const key_chord& c : chords) {
    if (!is_system_combo(c)) continue;
    return str_cat(tool, " \"", text.substr(0, 128),
                   "\" was refused: it is a system key combo, which needs the systemKeyCombos "
                   "grant while grants are enforced (CU_GRANTS=enforce); call request_access "
                   "with systemKeyCombos: true first");
  }
  return std::nullopt;
}

void handle_request_access(tool_call& call) {
  auto apps = arg_string_list(call.args, "apps");
  if (!apps) return call.fail(apps.err().message);
  for (const std::string& a : *apps) {
    if (a.size() > kMaxNameBytes) {
      return call.fail(invalid_argument("apps", str_cat("names of at most ",
                                                        std::to_string(kMaxNameBytes), " bytes"),
                                        std::to_string(a.size()) + " bytes")
                           .message);
    }
  }
  auto reason = arg_string(call.args, "reason");
  if (!reason) return call.fail(reason.err().message);
  auto read = arg_bool(call.args, "clipboardRead", false);
  if (!read) return call.fail(read.err().message);
  auto write = arg_bool(call.args, "clipboardWrite", false);
  if (!write) return call.fail(write.err().message);
  auto keys = arg_bool(call.args, "systemKeyCombos", false);
  if (!keys) return call.fail(keys.err().message);
  // There is no permission dialog on an agent desktop: what is asked for is
  // granted, and grants add up until the idle release clears them.
  session_grants& g = call.grants();
  size_t adding = 0;
  for (const std::string& a : *apps) adding += g.apps.count(a) == 0 ? 1 : 0;
  if (g.apps.size() + adding > kMaxGrantedApps) {
    return call.fail(str_cat("Invalid argument \"apps\": a session holds at most ",
                             std::to_string(kMaxGrantedApps), " granted applications (",
                             std::to_string(g.apps.size()), " now, ", std::to_string(adding),
                             " more asked for)"));
  }
  // What the operator's deny list names is denied, whatever is asked
  // (CU_DENY_APPS), and with an allow list (CU_ALLOW_APPS, CU_GRANTS_FILE)
  // whatever it does not name: said back, and never among the grants.
  const std::shared_ptr<const grant_view> view = call.policy().view();
  std::vector<std::string> denied;
  for (std::string& a : *apps) {
    if (view->name_denied(a) || !view->name_allowed(a)) {
      if (std::find(denied.begin(), denied.end(), a) == denied.end()) denied.push_back(a);
      continue;
    }
    g.apps.insert(std::move(a));
  }
  std::sort(denied.begin(), denied.end());
  g.clipboard_read = g.clipboard_read || *read;
  g.clipboard_write = g.clipboard_write || *write;
  g.system_key_combos = g.system_key_combos || *keys;
  call.policy().set_granted(g.apps, g.system_key_combos);
  call.finish(tool_result::json(request_access_json(g, denied, view->filtering())));
}

void handle_list_granted_applications(tool_call& call) {
  call.finish(tool_result::json(granted_json(call.grants())));
}

void handle_read_clipboard(tool_call& call) {
  if (!call.grants().clipboard_read) return call.fail(needs_grant("read_clipboard", "clipboardRead"));
  call.desktop(make_clipboard_read(call.policy().view()));
}

void handle_write_clipboard(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  if (!call.grants().clipboard_write) {
    return call.fail(needs_grant("write_clipboard", "clipboardWrite"));
  }
  call.desktop(make_clipboard_write(std::string(*text), count_code_points(*text)));
}

void handle_open_application(tool_call& call) {
  auto app = arg_name(call.args, "app", kMaxNameBytes);
  if (!app) return call.fail(app.err().message);
  std::shared_ptr<const grant_view> view = call.policy().view();
  if (std::string refused = open_refusal(*view, *app); !refused.empty()) return call.fail(refused);
  call.desktop(make_open_application(std::string(*app), std::move(view)));
}

void handle_switch_display(tool_call& call) {
  auto display = arg_name(call.args, "display", kMaxNameBytes);
  if (!display) return call.fail(display.err().message);
  if (*display == call.x_display()) {
    // The X display itself, as the reference server answered.
    std::string out;
    json_writer j(out);
    j.begin_object().key("display").string(call.x_display()).key("switched").boolean(false);
    j.key("requested").string(*display);
    j.key("note").string(str_cat("already on display ", call.x_display())).end_object();
    return call.finish(tool_result::json(std::move(out)));
  }
  call.desktop(make_switch_display(std::string(*display), call.display_area()));
}

}  // namespace cu
