// Tests for src/toolsets/registry.h: the one table every tool comes from.
#include "toolsets/registry.h"

#include <simdjson.h>

#include <catch2/catch.hpp>

#include "build_config.h"
#include "tests/support/tool_names.h"
#include "toolsets/computer/batch.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {


// The tools that only look: they change nothing on screen or in the session.
const std::set<std::string_view> kReadOnly = {
    "screenshot", "zoom", "cursor_position", "read_clipboard", "list_granted_applications",
    "wait",
};

std::vector<std::string> registry_names() {
  std::vector<std::string> names;
  for (const cu::tool_def& t : cu::computer_tools()) names.emplace_back(t.name);
  return names;
}

}  // namespace

TEST_CASE("the computer toolset has the 24 contract tools in the contract's order") {
  CHECK(cu::computer_tools().size() == 24);
  CHECK(registry_names() == cu::test::tool_names_of("computer"));
}

TEST_CASE("tool names are unique") {
  const std::vector<std::string> names = registry_names();
  const std::set<std::string> unique(names.begin(), names.end());
  CHECK(unique.size() == names.size());
}

TEST_CASE("every tool has a title, a description and a handler") {
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name);
    CHECK_FALSE(t.title.empty());
    CHECK_FALSE(t.description.empty());
    CHECK(t.handler != nullptr);
    CHECK(std::string(cu::executor_name(t.runs_on)) != "?");
  }
}

// Every schema text the registry holds: each tool's own, and what it
// becomes with every toolset on.
std::vector<std::pair<std::string, std::string>> all_input_schemas() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    for (const cu::tool_def& t : set.tools) {
      out.emplace_back(std::string(t.name), std::string(t.input_schema));
      out.emplace_back(std::string(t.name) + " (all toolsets)",
                       cu::input_schema_of(t, cu::every_toolset()));
    }
  }
  return out;
}

TEST_CASE("every input schema is a JSON object schema whose required names are properties") {
  simdjson::dom::parser parser;
  for (const auto& [name_of_tool, schema] : all_input_schemas()) {
    CAPTURE(name_of_tool, schema);
    simdjson::dom::object o;
    REQUIRE(parser.parse(schema).get_object().get(o) == simdjson::SUCCESS);
    std::string_view type;
    REQUIRE(o["type"].get(type) == simdjson::SUCCESS);
    CHECK(type == "object");
    simdjson::dom::object properties;
    REQUIRE(o["properties"].get(properties) == simdjson::SUCCESS);
    for (auto field : properties) {
      CAPTURE(field.key);
      CHECK(field.value.is_object());
    }
    simdjson::dom::array required;
    auto err = o["required"].get(required);
    if (err == simdjson::NO_SUCH_FIELD) continue;
    REQUIRE(err == simdjson::SUCCESS);
    for (simdjson::dom::element r : required) {
      std::string_view name;
      REQUIRE(r.get(name) == simdjson::SUCCESS);
      CAPTURE(name);
      CHECK(properties[name].error() == simdjson::SUCCESS);
    }
  }
}

TEST_CASE("find_tool finds every tool by name and returns null for unknown names") {
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name);
    CHECK(cu::find_tool(t.name) == &t);
  }
  CHECK(cu::find_tool("") == nullptr);
  CHECK(cu::find_tool("Screenshot") == nullptr);
  CHECK(cu::find_tool("screenshot ") == nullptr);
  CHECK(cu::find_tool("computer_use.screenshot") == nullptr);
  CHECK(cu::find_tool("no_such_tool") == nullptr);
}

TEST_CASE("exactly the looking tools are annotated read-only") {
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name);
    CHECK(t.annotations.read_only == (kReadOnly.count(t.name) == 1));
    if (t.annotations.read_only) CHECK_FALSE(t.annotations.destructive);
  }
}

TEST_CASE("hold_key and wait have a 120 s host timeout and no other tool has one") {
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name);
    const bool long_running = t.name == "hold_key" || t.name == "wait";
    CHECK(t.timeout_ms == (long_running ? 120000u : 0u));
  }
}

TEST_CASE("tools/list lists the same tools with their schemas and annotations") {
  const std::string json = cu::tools_list_json(cu::kDefaultToolsets);
  simdjson::dom::parser parser;
  simdjson::dom::array tools;
  REQUIRE(parser.parse(json)["tools"].get(tools) == simdjson::SUCCESS);
  REQUIRE(tools.size() == cu::computer_tools().size());
  simdjson::dom::parser schema_parser;
  size_t i = 0;
  for (simdjson::dom::element e : tools) {
    const cu::tool_def& t = cu::computer_tools()[i++];
    CAPTURE(t.name);
    std::string_view name, title, description;
    REQUIRE(e["name"].get(name) == simdjson::SUCCESS);
    CHECK(name == t.name);
    REQUIRE(e["title"].get(title) == simdjson::SUCCESS);
    CHECK(title == t.title);
    REQUIRE(e["description"].get(description) == simdjson::SUCCESS);
    CHECK(description == t.description);
    simdjson::dom::element schema;
    REQUIRE(e["inputSchema"].get(schema) == simdjson::SUCCESS);
    CHECK(simdjson::minify(schema) ==
          simdjson::minify(schema_parser.parse(std::string(t.input_schema)).value()));
    bool read_only = false, destructive = false, idempotent = false, open_world = false;
    REQUIRE(e["annotations"]["readOnlyHint"].get(read_only) == simdjson::SUCCESS);
    REQUIRE(e["annotations"]["destructiveHint"].get(destructive) == simdjson::SUCCESS);
    REQUIRE(e["annotations"]["idempotentHint"].get(idempotent) == simdjson::SUCCESS);
    REQUIRE(e["annotations"]["openWorldHint"].get(open_world) == simdjson::SUCCESS);
    CHECK(read_only == t.annotations.read_only);
    CHECK(destructive == t.annotations.destructive);
    CHECK(idempotent == t.annotations.idempotent);
    CHECK(open_world == t.annotations.open_world);
  }
}

TEST_CASE("a computer_batch step's name is an enum of every other tool, in tools/list order") {
  simdjson::dom::parser parser;
  const cu::tool_def* batch = cu::find_tool("computer_batch");
  REQUIRE(batch != nullptr);
  const std::string schema(batch->input_schema);
  simdjson::dom::array names;
  REQUIRE(parser.parse(schema)["properties"]["actions"]["items"]["properties"]["name"]["enum"].get(
              names) == simdjson::SUCCESS);
  std::vector<std::string> listed;
  for (simdjson::dom::element n : names) listed.emplace_back(n.get_string().value());
  std::vector<std::string> expected = registry_names();
  expected.erase(std::find(expected.begin(), expected.end(), "computer_batch"));
  CHECK(listed == expected);
}

TEST_CASE("descriptions tell the model what a tool does and returns, not how the server is built") {
  // Words about the implementation mean nothing to the model reading them.
  const std::vector<std::string_view> internals = {
      "dispatch", "meanwhile", "actor", "thread", "XTest", "xcb", "worker", "queue", "loop"};
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name, t.description);
    for (std::string_view word : internals) {
      CAPTURE(word);
      CHECK(t.description.find(word) == std::string_view::npos);
    }
    const bool says_what_comes_back = t.description.find("Return") != std::string_view::npos ||
                                      t.description.find("answer") != std::string_view::npos;
    CHECK(says_what_comes_back);
  }
  // The calls that can outlast a client's request timeout say so.
  for (std::string_view name : {"wait", "hold_key"}) {
    CAPTURE(name);
    const cu::tool_def* t = cu::find_tool(name);
    REQUIRE(t != nullptr);
    CHECK(t->description.find("request timeout") != std::string_view::npos);
    CHECK(t->description.find("progress") != std::string_view::npos);
  }
}

namespace {

std::vector<std::string> listed_names(const std::string& tools_list) {
  simdjson::dom::parser parser;
  simdjson::dom::array tools;
  std::vector<std::string> names;
  if (parser.parse(tools_list)["tools"].get(tools) != simdjson::SUCCESS) return names;
  for (simdjson::dom::element e : tools) {
    std::string_view n;
    if (e["name"].get(n) == simdjson::SUCCESS) names.emplace_back(n);
  }
  return names;
}

}  // namespace

TEST_CASE("CU_TOOLSETS names: computer is always on, all is every toolset, unknown names fail") {
  using cu::mask_of;
  using cu::toolset;
  const cu::toolset_mask both = mask_of(toolset::computer) | mask_of(toolset::windows);
  CHECK(cu::parse_toolsets("computer").value() == cu::kDefaultToolsets);
  CHECK(cu::parse_toolsets("windows").value() == both);
  CHECK(cu::parse_toolsets("computer,windows").value() == both);
  CHECK(cu::parse_toolsets(" windows , computer ").value() == both);
  CHECK(cu::parse_toolsets("all").value() == cu::every_toolset());
  CHECK(cu::toolsets_text(both) == "computer,windows");
  CHECK(cu::parse_toolsets("vision,windows").value() == (both | mask_of(toolset::vision)));
  // a11y is built with libatspi only; either way it is a known name.
  CHECK(cu::toolsets_text(cu::every_toolset()) ==
        (CU_HAVE_A11Y ? "computer,windows,vision,a11y,gamepad,marks" : "computer,windows,vision,gamepad,marks"));
  CHECK(cu::toolset_built(toolset::a11y) == bool(CU_HAVE_A11Y));
  if (CU_HAVE_A11Y) {
    CHECK(cu::parse_toolsets("a11y").value() == (cu::kDefaultToolsets | mask_of(toolset::a11y)));
  } else {
    CHECK(cu::parse_toolsets("a11y").err().message.find("not built into this server") !=
          std::string::npos);
  }
  for (std::string_view bad : {"", "Windows", "window", "computer,,windows", "computer,", "visions"}) {
    CAPTURE(bad);
    auto r = cu::parse_toolsets(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().message.find("the toolsets are computer, windows, vision, a11y, gamepad, marks, or all") !=
          std::string::npos);
  }
  CHECK(cu::parse_toolsets("bogus").err().message.find("unknown toolset \"bogus\"") == 0);
}

TEST_CASE("a toolset's tools are listed and found only while it is on, after the 24, names unique") {
  const std::string default_list = cu::tools_list_json(cu::kDefaultToolsets);
  const std::string all_list = cu::tools_list_json(cu::every_toolset());
  const std::vector<std::string> names = listed_names(all_list);
  const std::vector<std::string> computer = cu::test::tool_names_of("computer");
  // Every built toolset is on: windows' and vision's tools follow the 24.
  std::vector<std::string> beyond = cu::test::tool_names_of("windows");
  for (const std::string& n : cu::test::tool_names_of("vision")) beyond.push_back(n);
  // The a11y toolset's nine (seed 004's, `scroll` as scroll_app: no name of
  // the 24 is taken) only when it is built.
  if (CU_HAVE_A11Y) {
    for (const std::string& n : cu::test::tool_names_of("a11y")) beyond.push_back(n);
  }
  for (const std::string& n : cu::test::tool_names_of("gamepad")) beyond.push_back(n);
  for (const std::string& n : cu::test::tool_names_of("marks")) beyond.push_back(n);
  std::vector<std::string> expected = computer;
  expected.insert(expected.end(), beyond.begin(), beyond.end());
  CHECK(names == expected);
  CHECK(listed_names(default_list) == computer);
  const std::set<std::string> unique(names.begin(), names.end());
  CHECK(unique.size() == names.size());
  for (const std::string& n : beyond) {
    CAPTURE(n);
    CHECK(cu::find_tool(n) == nullptr);
    const cu::tool_def* t = cu::find_tool(n, cu::every_toolset());
    REQUIRE(t != nullptr);
    // Every tool beyond the contract has an output schema.
    CHECK_FALSE(t->output_schema.empty());
  }
}

// The pointer tools the marks toolset gives `mark`.
bool pointer_tool(std::string_view name) {
  for (std::string_view p : {"left_click", "right_click", "middle_click", "double_click",
                             "triple_click", "mouse_move", "scroll", "left_click_drag"}) {
    if (p == name) return true;
  }
  return false;
}

TEST_CASE("with the windows toolset on, a batch's steps may name its tools, screenshot and zoom "
          "take a window; the rest of the 24 stay as they are") {
  const cu::toolset_mask on = cu::every_toolset();
  simdjson::dom::parser parser;
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name);
    CHECK(cu::input_schema_of(t, cu::kDefaultToolsets) == t.input_schema);
    CHECK(cu::output_schema_of(t, cu::kDefaultToolsets) == t.output_schema);
    if (t.name == "screenshot" || t.name == "zoom") {
      // The same schema with one more optional property, in and out.
      const std::string in_text = cu::input_schema_of(t, on);
      simdjson::dom::parser in_parser;
      simdjson::dom::element in = in_parser.parse(in_text).value();
      std::string_view pattern;
      CHECK(in["properties"]["window"]["pattern"].get(pattern) == simdjson::SUCCESS);
      simdjson::dom::object properties;
      REQUIRE(in["properties"].get(properties) == simdjson::SUCCESS);
      // screenshot's third is the marks toolset's since.
      CHECK(properties.size() == 3u);
      simdjson::dom::array required;
      if (t.name == "zoom") {
        CHECK(in["required"].get(required) == simdjson::SUCCESS);
        CHECK(required.size() == 1);
      } else {
        CHECK(in["required"].error() == simdjson::NO_SUCH_FIELD);
      }
      const std::string out = cu::output_schema_of(t, on);
      simdjson::dom::parser out_parser;
      simdjson::dom::element o = out_parser.parse(out).value();
      CHECK(o["properties"]["window"]["type"].get_string().value() == "string");
      CHECK(o["properties"]["source"]["enum"].get_array().value().size() == 2);
      CHECK(o["properties"]["image"].is_object());
    } else if (pointer_tool(t.name)) {
      // The marks toolset adds `mark` (and the drag's `start_mark`) and
      // makes coordinate optional; the rest stays as it is.
      const std::string in_text = cu::input_schema_of(t, on);
      simdjson::dom::parser in_parser;
      simdjson::dom::element in = in_parser.parse(in_text).value();
      CHECK(in["properties"]["mark"]["minimum"].get_int64().value() == 1);
      CHECK(in["properties"]["start_mark"].error() ==
            (t.name == "left_click_drag" ? simdjson::SUCCESS : simdjson::NO_SUCH_FIELD));
      CHECK(in["properties"]["coordinate"].is_object());
      simdjson::dom::array required;
      if (in["required"].get(required) == simdjson::SUCCESS) {
        for (simdjson::dom::element n : required) CHECK(n.get_string().value() != "coordinate");
      }
      CHECK(cu::input_schema_of(t, on & ~cu::mask_of(cu::toolset::marks)) == t.input_schema);
      CHECK(cu::output_schema_of(t, on) == t.output_schema);
    } else if (t.name != "computer_batch") {
      CHECK(cu::input_schema_of(t, on) == t.input_schema);
      CHECK(cu::output_schema_of(t, on) == t.output_schema);
    }
  }
  const cu::tool_def* batch = cu::find_tool("computer_batch", on);
  REQUIRE(batch != nullptr);
  simdjson::dom::array names;
  REQUIRE(parser.parse(cu::input_schema_of(*batch, on))["properties"]["actions"]["items"]
              ["properties"]["name"]["enum"].get(names) == simdjson::SUCCESS);
  std::vector<std::string_view> listed;
  for (simdjson::dom::element n : names) listed.push_back(n.get_string().value());
  // Every tool of the toolsets built but computer_batch, in tools/list order.
  std::vector<std::string> expected;
  for (const char* set : {"computer", "windows", "vision", "a11y", "gamepad", "marks"}) {
    if (std::string_view(set) == "a11y" && !CU_HAVE_A11Y) continue;
    for (const std::string& n : cu::test::tool_names_of(set)) {
      if (n != "computer_batch") expected.push_back(n);
    }
  }
  CHECK(std::vector<std::string>(listed.begin(), listed.end()) == expected);
  CHECK(std::find(listed.begin(), listed.end(), "computer_batch") == listed.end());
}

TEST_CASE("with the vision toolset on, computer_batch takes stop_on_error and each action capture "
          "and if, and its summary counts skipped_by_condition; without it, neither") {
  const cu::tool_def* batch = cu::find_tool("computer_batch");
  REQUIRE(batch != nullptr);
  const cu::toolset_mask windows = cu::kDefaultToolsets | cu::mask_of(cu::toolset::windows);
  const cu::toolset_mask vision = cu::kDefaultToolsets | cu::mask_of(cu::toolset::vision);
  for (cu::toolset_mask on : {cu::kDefaultToolsets, windows, vision, cu::every_toolset()}) {
    CAPTURE(cu::toolsets_text(on));
    const bool with = cu::has(on, cu::toolset::vision);
    simdjson::dom::parser in_parser, out_parser;
    simdjson::dom::element in = in_parser.parse(cu::input_schema_of(*batch, on)).value();
    simdjson::dom::element out = out_parser.parse(cu::output_schema_of(*batch, on)).value();
    simdjson::dom::element item = in["properties"]["actions"]["items"];
    CHECK(in["properties"]["stop_on_error"].is_object() == with);
    CHECK(item["properties"]["capture"].is_object() == with);
    CHECK(item["properties"]["if"].is_object() == with);
    CHECK(item["properties"]["arguments"].is_object());
    CHECK(out["properties"]["batch"]["properties"]["skipped_by_condition"].is_object() == with);
    if (!with) continue;
    bool fallback = false;
    REQUIRE(in["properties"]["stop_on_error"]["default"].get(fallback) == simdjson::SUCCESS);
    CHECK(fallback);
    CHECK(item["properties"]["capture"]["type"].get_string().value() == "boolean");
    simdjson::dom::element cond = item["properties"]["if"];
    CHECK(cond["maxProperties"].get_uint64().value() == 1);
    CHECK(cond["minProperties"].get_uint64().value() == 1);
    // Each condition is an object of its tool's arguments, which the
    // condition's description names (the tool's schema itself is in
    // tools/list once, not again in every batch).
    simdjson::dom::object conditions;
    REQUIRE(cond["properties"].get(conditions) == simdjson::SUCCESS);
    std::vector<std::string_view> names;
    for (auto field : conditions) names.push_back(field.key);
    // The conditions the table offers are the ones batch.cpp decides.
    std::vector<std::string_view> expected;
    for (cu::condition_kind k : cu::all_conditions()) expected.push_back(cu::condition_name(k));
    CHECK(names == expected);
    for (auto field : conditions) {
      CHECK(field.value["type"].get_string().value() == "object");
    }
    std::string_view description;
    REQUIRE(cond["description"].get(description) == simdjson::SUCCESS);
    for (cu::condition_kind k : cu::all_conditions()) {
      CAPTURE(cu::condition_name(k));
      CHECK(description.find(cu::condition_name(k)) != std::string_view::npos);
      CHECK(description.find(cu::condition_tool(k)) != std::string_view::npos);
    }
    simdjson::dom::array required;
    REQUIRE(out["properties"]["batch"]["required"].get(required) == simdjson::SUCCESS);
    CHECK(required.size() == 7);
    CHECK(out["properties"]["batch"]["properties"]["steps"]["items"]["properties"]["skipped"]
              ["enum"].at(0).get_string().value() == "condition");
  }
}
