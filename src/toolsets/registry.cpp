#include "toolsets/registry.h"

#include <map>
#include <mutex>

#include "build_config.h"
#include "core/json_writer.h"
#include "toolsets/a11y/room.h"
#include "toolsets/computer/room.h"
#include "toolsets/gamepad/room.h"
#include "toolsets/marks/room.h"
#include "toolsets/table_reader.h"
#include "toolsets/vision/room.h"
#include "toolsets/windows/room.h"
#include "util/str_cat.h"

namespace cu {
namespace {

// The list of toolsets, in tools/list order. A new toolset is a room of its
// own and one line here (and its name in the toolset enum).
const toolset_room* const kRooms[] = {&computer_room(), &windows_room(), &vision_room(),
                                      &a11y_room(), &gamepad_room(),
                                      &marks_room()};

const toolset_tables& data() {
  static const toolset_tables tables(kRooms);
  return tables;
}

}  // namespace

std::span<const toolset_def> all_toolsets() { return data().sets(); }

std::vector<std::pair<toolset, std::unique_ptr<room_service>>> start_services(toolset_mask on,
                                                                               room_start& with) {
  std::vector<std::pair<toolset, std::unique_ptr<room_service>>> out;
  for (const toolset_room* room : kRooms) {
    if (room->start != nullptr && has(on, room->id)) out.emplace_back(room->id, room->start(with));
  }
  return out;
}

bool toolset_built(toolset t) { return t != toolset::a11y || CU_HAVE_A11Y; }

std::string_view build_requirement(toolset t) {
  return t == toolset::a11y ? "libatspi2.0-dev" : "";
}

toolset_mask every_toolset() {
  toolset_mask m = 0;
  for (const toolset_def& t : all_toolsets()) {
    if (toolset_built(t.id)) m |= mask_of(t.id);
  }
  return m;
}

result<toolset_mask> parse_toolsets(std::string_view text) {
  auto known = [] {
    std::string names;
    for (const toolset_def& t : all_toolsets()) names += str_cat(names.empty() ? "" : ", ", t.name);
    return names + ", or all";
  };
  toolset_mask m = kDefaultToolsets;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string_view name = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name == "all") {
      m |= every_toolset();
    } else {
      const toolset_def* found = nullptr;
      for (const toolset_def& t : all_toolsets()) {
        if (t.name == name) found = &t;
      }
      if (found == nullptr) {
        std::string shown;
        append_json_string(shown, name);
        return make_error(errc::invalid_argument,
                          str_cat(name.empty() ? std::string("an empty toolset name")
                                               : str_cat("unknown toolset ", shown),
                                  " in \"", text, "\": the toolsets are ", known()));
      }
      if (!toolset_built(found->id)) {
        return make_error(errc::invalid_argument,
                          str_cat("the toolset ", name, " is not built into this server (the ",
                                  name, " toolset needs ", build_requirement(found->id),
                                  " at build time)"));
      }
      m |= mask_of(found->id);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return m;
}

std::string toolsets_text(toolset_mask on) {
  std::string out;
  for (const toolset_def& t : all_toolsets()) {
    if (has(on, t.id)) out += str_cat(out.empty() ? "" : ",", t.name);
  }
  return out;
}

std::string input_schema_of(const tool_def& t, toolset_mask on) {
  return data().input_schema(t, on);
}

std::string output_schema_of(const tool_def& t, toolset_mask on) {
  return data().output_schema(t, on);
}

std::vector<toolset_extension> extensions_of(toolset by) { return data().extensions_of(by); }

std::span<const tool_def> computer_tools() { return data().sets().front().tools; }

std::string unknown_tool_message(std::string_view name) {
  std::string msg = "Unknown tool: ";
  append_json_string(msg, name);
  msg += ". tools/list names the available tools.";
  return msg;
}

const tool_def* find_tool(std::string_view name, toolset_mask on) {
  for (const toolset_def& set : all_toolsets()) {
    if (!has(on, set.id)) continue;
    for (const tool_def& t : set.tools) {
      if (t.name == name) return &t;
    }
  }
  return nullptr;
}

const char* executor_name(executor e) {
  switch (e) {
    case executor::loop: return "loop";
    case executor::input: return "input actor";
    case executor::capture: return "capture pool";
    case executor::desktop: return "desktop thread";
    case executor::a11y: return "a11y thread";
    case executor::room: return "its room's thread";
  }
  return "?";
}

std::string tools_list_json(toolset_mask on) {
  // One text per set of toolsets: a server has one, the tests a few.
  static std::mutex lock;
  static std::map<toolset_mask, std::string> made;
  std::lock_guard<std::mutex> hold(lock);
  auto it = made.find(on);
  if (it != made.end()) return it->second;
  std::string out;
  json_writer w(out);
  w.begin_object().key("tools").begin_array();
  for (const toolset_def& set : all_toolsets()) {
    if (!has(on, set.id)) continue;
    for (const tool_def& t : set.tools) {
      w.begin_object();
      w.key("name").string(t.name);
      w.key("title").string(t.title);
      w.key("description").string(t.description);
      w.key("inputSchema").raw(input_schema_of(t, on));
      if (!t.output_schema.empty()) w.key("outputSchema").raw(output_schema_of(t, on));
      w.key("annotations").begin_object();
      w.key("title").string(t.title);
      w.key("readOnlyHint").boolean(t.annotations.read_only);
      w.key("destructiveHint").boolean(t.annotations.destructive);
      w.key("idempotentHint").boolean(t.annotations.idempotent);
      w.key("openWorldHint").boolean(t.annotations.open_world);
      w.end_object();
      w.end_object();
    }
  }
  w.end_array().end_object();
  return made.emplace(on, std::move(out)).first->second;
}

}  // namespace cu

