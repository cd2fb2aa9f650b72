#include "core/grant_policy.h"

#include <algorithm>
#include <cstdio>

#include "util/ascii.h"
#include "util/str_cat.h"

namespace cu {
namespace {

void add_name(std::set<std::string>& out, std::string_view name) {
  if (!name.empty()) out.insert(ascii_lower(name));
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 128)) {
    if (c == '"' || c == '\\') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  return out + "\"";
}

}  // namespace

std::string app_identity::label() const {
  // The instance first: it tells two windows of one class apart (xterm
  // -name mail), and a grant of it covers that window alone; but not an
  // instance that is no name to ask for (Chromium's "chromium (/tmp/p)"
  // with a profile directory): the class then.
  const bool plain = !instance.empty() && std::all_of(instance.begin(), instance.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
  });
  if (plain || (cls.empty() && !instance.empty())) return instance;
  if (!cls.empty()) return cls;
  if (!exe.empty()) return exe;
  if (!comm.empty()) return comm;
  char id[32];
  std::snprintf(id, sizeof id, "window 0x%x", window);
  return id;
}

std::set<std::string> grant_view::names_of(const app_identity& a) const {
  std::set<std::string> names;
  add_name(names, a.instance);
  add_name(names, a.cls);
  add_name(names, a.exe);
  add_name(names, a.comm);
  if (aliases) {
    std::set<std::string> more;
    for (const std::string& n : names) {
      if (auto it = aliases->by_key.find(n); it != aliases->by_key.end()) {
        more.insert(it->second.begin(), it->second.end());
      }
    }
    names.merge(more);
  }
  return names;
}

grant_view::verdict grant_view::judge(const app_identity& a) const {
  if (!filtering()) return verdict::allowed;
  // The deny list first: a window type is what a client declares, so a
  // denied program's window typed a dock is still the denied program's.
  const std::set<std::string> names = names_of(a);
  for (const std::string& n : names) {
    if (denied.count(n) != 0) return verdict::denied;
  }
  if (a.what == app_identity::kind::desktop) {
    return mode == grants_mode::open || desktop_allowed ? verdict::allowed : verdict::desktop_off;
  }
  if (mode == grants_mode::open) return verdict::allowed;
  if (a.what == app_identity::kind::unknown) return verdict::unidentified;
  for (const std::string& n : names) {
    if (granted.count(n) != 0) return verdict::allowed;
  }
  return verdict::not_granted;
}

bool grant_view::listed(const std::set<std::string>& names, std::string_view name) const {
  const std::string n = ascii_lower(name);
  if (names.count(n) != 0) return true;
  // A desktop entry's name for a listed program ("Password Safe" for
  // keepassxc) is listed as well.
  if (aliases) {
    for (const std::string& d : names) {
      auto it = aliases->by_key.find(d);
      if (it != aliases->by_key.end() && it->second.count(n) != 0) return true;
    }
  }
  return false;
}

bool grant_view::name_denied(std::string_view name) const { return listed(denied, name); }

bool grant_view::name_allowed(std::string_view name) const {
  return !allow_list || listed(allowed, name);
}

std::string grant_view::refusal(std::string_view doing, std::string_view where,
                                const app_identity& a, verdict v) const {
  const std::string app = quoted(a.label());
  switch (v) {
    case verdict::allowed: return {};
    case verdict::denied:
      return str_cat(doing, " was refused: ", where, " a window of ", app,
                     ", which the operator keeps from the agent (CU_DENY_APPS); no grant "
                     "lifts that");
    case verdict::unidentified:
      return str_cat(doing, " was refused: ", where,
                     " a window that names no application (no WM_CLASS and no process), "
                     "so no grant covers it (CU_GRANTS=enforce)");
    case verdict::desktop_off:
      return str_cat(doing, " was refused: ", where,
                     " the desktop, which this server keeps from the agent "
                     "(CU_GRANTS_DESKTOP=deny)");
    case verdict::not_granted: break;
  }
  return str_cat(doing, " was refused: ", where, " a window of ", app,
                 ", which is not granted to this session (CU_GRANTS=enforce); call "
                 "request_access with apps [",
                 app, "] first");
}

grant_policy::grant_policy(grants_mode mode, std::set<std::string> denied, bool desktop_allowed,
                           std::shared_ptr<const desktop_aliases> aliases,
                           std::optional<std::set<std::string>> allowed) {
  auto v = std::make_shared<grant_view>();
  if (allowed) {
    v->allow_list = true;
    v->allowed = std::move(*allowed);
  }
  v->mode = mode;
  v->denied = std::move(denied);
  v->desktop_allowed = desktop_allowed;
  v->aliases = std::move(aliases);
  v->epoch = 1;
  view_ = std::move(v);
}

std::shared_ptr<const grant_view> grant_policy::view() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

void grant_policy::set_granted(const std::set<std::string>& apps, bool system_keys) {
  std::set<std::string> lower;
  for (const std::string& a : apps) add_name(lower, a);
  std::lock_guard<std::mutex> lock(mu_);
  if (lower == view_->granted && system_keys == view_->system_keys) return;
  auto v = std::make_shared<grant_view>(*view_);
  v->granted = std::move(lower);
  v->system_keys = system_keys;
  ++v->epoch;
  view_ = std::move(v);
}

std::set<std::string> parse_app_list(std::string_view text) {
  std::set<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    add_name(out, item);
    start = comma + 1;
  }
  return out;
}

}  // namespace cu
