#include "toolsets/operator_grants.h"

#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "core/grant_policy.h"
#include "util/ascii.h"
#include "util/str_cat.h"

namespace cu {
namespace {

constexpr size_t kMostFileBytes = size_t{1} << 20;

error file_error(const std::string& path, std::string_view what) {
  return make_error(errc::invalid_argument, str_cat("CU_GRANTS_FILE ", path, ": ", what));
}

status read_names(const std::string& path, std::string_view key, simdjson::dom::element e,
                  std::set<std::string>& out) {
  simdjson::dom::array a;
  if (e.get(a) != simdjson::SUCCESS) {
    return file_error(path, str_cat("\"", key, "\" must be an array of names"));
  }
  for (simdjson::dom::element item : a) {
    std::string_view name;
    if (item.get(name) != simdjson::SUCCESS || name.empty() || name.size() > 256) {
      return file_error(path, str_cat("\"", key, "\" must hold names (strings of 1 to 256 bytes)"));
    }
    out.insert(ascii_lower(name));
  }
  return {};
}

status read_flag(const std::string& path, simdjson::dom::object o, std::string_view key,
                 bool& out) {
  simdjson::dom::element e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS) return {};
  if (e.get(out) != simdjson::SUCCESS) {
    return file_error(path, str_cat("\"approved\".\"", key, "\" must be true or false"));
  }
  return {};
}

status read_file(const std::string& path, operator_grants& g) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return file_error(path, "cannot be read");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() > kMostFileBytes) return file_error(path, "is over 1 MiB");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root) != simdjson::SUCCESS) {
    return file_error(path, "is not valid JSON");
  }
  simdjson::dom::object o;
  if (root.get(o) != simdjson::SUCCESS) return file_error(path, "must be a JSON object");
  for (auto field : o) {
    if (field.key == "allow") {
      if (auto s = read_names(path, "allow", field.value, g.allowed); !s) return s;
      g.allow_list = true;
    } else if (field.key == "deny") {
      if (auto s = read_names(path, "deny", field.value, g.denied); !s) return s;
    } else if (field.key == "approved") {
      simdjson::dom::object a;
      if (field.value.get(a) != simdjson::SUCCESS) {
        return file_error(path, "\"approved\" must be an object");
      }
      for (auto f : a) {
        if (f.key == "apps") {
          std::set<std::string> apps;
          if (auto s = read_names(path, "approved.apps", f.value, apps); !s) return s;
          g.approved.apps.insert(apps.begin(), apps.end());
        } else if (f.key != "clipboardRead" && f.key != "clipboardWrite" &&
                   f.key != "systemKeyCombos") {
          return file_error(path, str_cat("unknown key \"approved\".\"", f.key.substr(0, 64),
                                          "\" (apps, clipboardRead, clipboardWrite, "
                                          "systemKeyCombos)"));
        }
      }
      if (auto s = read_flag(path, a, "clipboardRead", g.approved.clipboard_read); !s) return s;
      if (auto s = read_flag(path, a, "clipboardWrite", g.approved.clipboard_write); !s) return s;
      if (auto s = read_flag(path, a, "systemKeyCombos", g.approved.system_key_combos); !s) {
        return s;
      }
    } else {
      return file_error(path, str_cat("unknown key \"", field.key.substr(0, 64),
                                      "\" (allow, deny, approved)"));
    }
  }
  return {};
}

}  // namespace

result<operator_grants> read_operator_grants(const config& cfg) {
  operator_grants g;
  g.denied = parse_app_list(cfg.deny_apps);
  if (!cfg.allow_apps.empty()) {
    g.allowed = parse_app_list(cfg.allow_apps);
    g.allow_list = true;
  }
  if (!cfg.grants_file.empty()) {
    if (auto s = read_file(cfg.grants_file, g); !s) return s.err();
  }
  for (const std::string& a : g.approved.apps) {
    if (g.denied.count(a) != 0) {
      return file_error(cfg.grants_file, str_cat("\"", a, "\" is approved and denied"));
    }
    if (g.allow_list && g.allowed.count(a) == 0) {
      return file_error(cfg.grants_file, str_cat("\"", a, "\" is approved but not allowed"));
    }
  }
  return g;
}

}  // namespace cu
