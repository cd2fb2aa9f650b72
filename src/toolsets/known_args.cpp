#include "toolsets/known_args.h"

#include <initializer_list>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toolsets/args.h"
#include "util/str_cat.h"

namespace cu {
namespace {

// What one set of toolsets lets each tool take.
struct names_table {
  std::unordered_map<const tool_def*, std::vector<std::string>> tools;
  std::vector<std::string> batch_actions;
};

// The keys of schema's object at path (each step a property name), in
// order; empty when the schema has no such object.
std::vector<std::string> keys_at(simdjson::dom::parser& parser, const std::string& schema,
                                 std::initializer_list<std::string_view> path) {
  simdjson::dom::element e;
  if (parser.parse(schema).get(e) != simdjson::SUCCESS) return {};
  for (std::string_view step : path) {
    if (e.at_key(step).get(e) != simdjson::SUCCESS) return {};
  }
  simdjson::dom::object o;
  if (e.get(o) != simdjson::SUCCESS) return {};
  std::vector<std::string> keys;
  for (auto field : o) keys.emplace_back(field.key);
  return keys;
}

// Every tool of every toolset, whether on or not: a condition's probe is
// found whatever toolsets are on (batch_runner.cpp), and its arguments are
// checked like a step's.
names_table build(toolset_mask on) {
  names_table t;
  simdjson::dom::parser parser;
  for (const toolset_def& set : all_toolsets()) {
    for (const tool_def& tool : set.tools) {
      const std::string schema = input_schema_of(tool, on);
      t.tools.emplace(&tool, keys_at(parser, schema, {"properties"}));
      if (tool.name == "computer_batch") {
        t.batch_actions = keys_at(parser, schema, {"properties", "actions", "items", "properties"});
      }
    }
  }
  return t;
}

// Built on first use per set of toolsets (a server uses one; the unit
// tests a few), kept for the program's life: the map's nodes never move,
// so the spans handed out stay valid.
const names_table& table(toolset_mask on) {
  static std::mutex lock;
  static std::unordered_map<toolset_mask, names_table> tables;
  on |= kDefaultToolsets;
  std::lock_guard<std::mutex> hold(lock);
  auto it = tables.find(on);
  if (it == tables.end()) it = tables.emplace(on, build(on)).first;
  return it->second;
}

bool contains(std::span<const std::string> names, std::string_view name) {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

std::span<const std::string> argument_names(const tool_def& t, toolset_mask on) {
  const names_table& names = table(on);
  auto it = names.tools.find(&t);
  // Every tool_def the server dispatches is the registry's own.
  if (it == names.tools.end()) return {};
  return it->second;
}

std::span<const std::string> batch_action_keys(toolset_mask on) {
  return table(on).batch_actions;
}

status refuse_unknown_arguments(const tool_def& t, toolset_mask on,
                                simdjson::dom::object args) {
  if (args.size() == 0) return {};
  const std::span<const std::string> takes = argument_names(t, on);
  for (auto field : args) {
    // null is absent, as for every argument: there is nothing to ignore.
    if (field.value.is_null() || contains(takes, field.key)) continue;
    // A toolset that is off may be what adds it (screenshot's window): say
    // which, as computer_batch's own vision arguments do.
    std::string note;
    for (const toolset_def& set : all_toolsets()) {
      if (has(on, set.id) || !toolset_built(set.id)) continue;
      if (contains(argument_names(t, on | mask_of(set.id)), field.key)) {
        note = str_cat("\"", field.key, "\" needs the ", set.name, " toolset (CU_TOOLSETS=",
                       set.name, " or --toolsets ", set.name, ")");
        break;
      }
    }
    return unknown_argument(field.key, t.name, takes, note);
  }
  return {};
}

}  // namespace cu
