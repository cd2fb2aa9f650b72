// Tests for src/toolsets/known_args.h: which arguments each tool takes with
// each set of toolsets, read from the schemas tools/list gives, and the
// refusal of one a tool does not take.
#include "toolsets/known_args.h"

#include <simdjson.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "toolsets/registry.h"

namespace {

using cu::toolset;
using cu::toolset_mask;

const toolset_mask kWindows = cu::kDefaultToolsets | cu::mask_of(toolset::windows);
const toolset_mask kVision = cu::kDefaultToolsets | cu::mask_of(toolset::vision);

simdjson::dom::parser g_parser;

simdjson::dom::object object_of(const std::string& json) {
  return g_parser.parse(json).get_object().value();
}

const cu::tool_def& tool(std::string_view name) {
  const cu::tool_def* t = cu::find_tool(name, cu::every_toolset());
  REQUIRE(t != nullptr);
  return *t;
}

std::vector<std::string> names(const cu::tool_def& t, toolset_mask on) {
  auto span = cu::argument_names(t, on);
  return {span.begin(), span.end()};
}

// The refusal's message, or "" when the arguments were taken.
std::string refusal(const cu::tool_def& t, toolset_mask on, const std::string& args) {
  auto bad = cu::refuse_unknown_arguments(t, on, object_of(args));
  if (bad) return {};
  CHECK(bad.err().code == cu::errc::invalid_argument);
  return bad.err().message;
}

// Every set of toolsets this build has, each with computer on.
std::vector<toolset_mask> every_mask() {
  std::vector<toolset_mask> masks;
  const toolset_mask all = cu::every_toolset();
  for (toolset_mask m = 0; m <= all; ++m) {
    if ((m & ~all) == 0 && cu::has(m, toolset::computer)) masks.push_back(m);
  }
  return masks;
}

// The top-level property names of the schema tools/list gives, read here
// on their own.
std::vector<std::string> schema_properties(const cu::tool_def& t, toolset_mask on) {
  simdjson::dom::parser p;
  const std::string text = cu::input_schema_of(t, on);
  simdjson::dom::object props;
  REQUIRE(p.parse(text)["properties"].get(props) == simdjson::SUCCESS);
  std::vector<std::string> out;
  for (auto field : props) out.emplace_back(field.key);
  return out;
}

// Built by appending (GCC 12 at -O3 reports a false -Wrestrict on a +
// chain of literals and strings).
std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out.append(out.empty() ? "" : ", ").append(s);
  return out.empty() ? "no arguments" : out;
}

// An object giving each name null, plus extra (members, or empty).
std::string object_with(const std::vector<std::string>& names, std::string_view extra = {}) {
  std::string out = "{";
  for (const std::string& n : names) {
    if (out.size() > 1) out.append(",");
    out.append("\"").append(n).append("\":null");
  }
  if (!extra.empty()) out.append(out.size() > 1 ? "," : "").append(extra);
  return out.append("}");
}

std::string message(std::string_view name, std::string_view tool, std::string_view takes) {
  std::string out = "Invalid argument \"";
  return out.append(name).append("\": ").append(tool).append(" takes ").append(takes);
}

}  // namespace

TEST_CASE("the 24 default tools take exactly the arguments of the reference schemas") {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"screenshot", {"save_to_disk"}},
      {"zoom", {"region", "save_to_disk"}},
      {"left_click", {"coordinate", "text"}},
      {"right_click", {"coordinate", "text"}},
      {"middle_click", {"coordinate", "text"}},
      {"double_click", {"coordinate", "text"}},
      {"triple_click", {"coordinate", "text"}},
      {"mouse_move", {"coordinate"}},
      {"left_click_drag", {"coordinate", "start_coordinate"}},
      {"scroll", {"coordinate", "scroll_direction", "scroll_amount", "text"}},
      {"left_mouse_down", {"coordinate"}},
      {"left_mouse_up", {"coordinate"}},
      {"type", {"text"}},
      {"key", {"text", "repeat"}},
      {"hold_key", {"text", "duration"}},
      {"read_clipboard", {}},
      {"write_clipboard", {"text"}},
      {"request_access", {"apps", "reason", "clipboardRead", "clipboardWrite", "systemKeyCombos"}},
      {"list_granted_applications", {}},
      {"open_application", {"app"}},
      {"switch_display", {"display"}},
      {"computer_batch", {"actions", "delay_ms", "screenshot"}},
      {"wait", {"duration"}},
      {"cursor_position", {}},
  };
  REQUIRE(cu::computer_tools().size() == expected.size());
  for (const cu::tool_def& t : cu::computer_tools()) {
    CAPTURE(t.name);
    REQUIRE(expected.count(std::string(t.name)) == 1);
    CHECK(names(t, cu::kDefaultToolsets) == expected.at(std::string(t.name)));
  }
}

TEST_CASE("every tool of every toolset refuses an argument it does not take, naming it and the ones it takes") {
  for (toolset_mask on : every_mask()) {
    for (const cu::toolset_def& set : cu::all_toolsets()) {
      if (!cu::has(on, set.id)) continue;
      for (const cu::tool_def& t : set.tools) {
        CAPTURE(on, t.name);
        const std::vector<std::string> takes = schema_properties(t, on);
        CHECK(names(t, on) == takes);
        // Every argument it takes gets past the check (null: the values
        // are the handler's to judge).
        CHECK(refusal(t, on, object_with(takes)).empty());
        CHECK(refusal(t, on, "{}").empty());
        CHECK(refusal(t, on, object_with(takes, "\"zz\":1")) ==
              message("zz", t.name, joined(takes)));
      }
    }
  }
}

TEST_CASE("screenshot and zoom take window only with the windows toolset, and say so without it") {
  for (std::string_view name : {"screenshot", "zoom"}) {
    CAPTURE(name);
    const cu::tool_def& t = tool(name);
    const std::string e = refusal(t, cu::kDefaultToolsets, R"({"window":"0x1"})");
    CHECK(e.starts_with(message("window", name, "")));
    CHECK(e.ends_with("; \"window\" needs the windows toolset (CU_TOOLSETS=windows or"
                      " --toolsets windows)"));
    CHECK(refusal(t, kVision, R"({"window":"0x1"})").starts_with("Invalid argument \"window\""));
    CHECK(refusal(t, kWindows, R"({"window":"0x1"})").empty());
    CHECK(refusal(t, cu::every_toolset(), R"({"window":"0x1"})").empty());
  }
  CHECK(names(tool("screenshot"), kWindows) == std::vector<std::string>{"window", "save_to_disk"});
}

TEST_CASE("computer_batch takes stop_on_error only with the vision toolset, and says so without it") {
  const cu::tool_def& batch = tool("computer_batch");
  const std::string args = R"({"actions":[{"name":"wait"}],"stop_on_error":false})";
  CHECK(refusal(batch, cu::kDefaultToolsets, args) ==
        "Invalid argument \"stop_on_error\": computer_batch takes actions, delay_ms, screenshot;"
        " \"stop_on_error\" needs the vision toolset (CU_TOOLSETS=vision or --toolsets vision)");
  CHECK(refusal(batch, kWindows, args).starts_with("Invalid argument \"stop_on_error\""));
  CHECK(refusal(batch, kVision, args).empty());
}

TEST_CASE("a batch action takes name and arguments, and capture and if with the vision toolset") {
  auto keys = [](toolset_mask on) {
    auto span = cu::batch_action_keys(on);
    return std::vector<std::string>(span.begin(), span.end());
  };
  CHECK(keys(cu::kDefaultToolsets) == std::vector<std::string>{"name", "arguments"});
  CHECK(keys(kWindows) == std::vector<std::string>{"name", "arguments"});
  CHECK(keys(kVision) == std::vector<std::string>{"name", "arguments", "capture", "if"});
}

TEST_CASE("a click with a misspelt modifier argument is refused, not clicked without it") {
  CHECK(refusal(tool("left_click"), cu::kDefaultToolsets, R"({"coordinate":[10,10],"txt":"ctrl"})") ==
        "Invalid argument \"txt\": left_click takes coordinate, text");
  CHECK(refusal(tool("cursor_position"), cu::kDefaultToolsets, R"({"x":1})") ==
        "Invalid argument \"x\": cursor_position takes no arguments");
}

TEST_CASE("an unknown name whose value is null is absent, as null is for every argument") {
  CHECK(refusal(tool("left_click"), cu::kDefaultToolsets, R"({"coordinate":[1,1],"txt":null})")
            .empty());
  CHECK(refusal(tool("computer_batch"), cu::kDefaultToolsets,
                R"({"actions":[{"name":"wait"}],"stop_on_error":null})")
            .empty());
}

TEST_CASE("_meta inside arguments is an argument like any other: refused") {
  CHECK(refusal(tool("screenshot"), cu::kDefaultToolsets, R"({"_meta":{"progressToken":1}})") ==
        "Invalid argument \"_meta\": screenshot takes save_to_disk");
}

TEST_CASE("the refused name is escaped and cut short, so the message stays one valid line") {
  const cu::tool_def& key = tool("key");
  CHECK(refusal(key, cu::kDefaultToolsets, R"({"a\"b\nc":1})") ==
        "Invalid argument \"a\\\"b\\nc\": key takes text, repeat");
  // 63 ASCII bytes and then a 3-byte character: the cut falls inside it
  // and backs off to its start.
  std::string long_name(63, 'x');
  long_name.append("\xe2\x82\xac").append("tail");
  std::string args = "{\"";
  args.append(long_name).append("\":1}");
  std::string cut(63, 'x');
  CHECK(refusal(key, cu::kDefaultToolsets, args) ==
        message(cut.append("..."), "key", "text, repeat"));
}

TEST_CASE("the tables are read once per set of toolsets: the same storage every time") {
  const cu::tool_def& t = tool("left_click");
  CHECK(cu::argument_names(t, cu::kDefaultToolsets).data() ==
        cu::argument_names(t, cu::kDefaultToolsets).data());
  // computer is always on, so a mask without it reads the same table.
  CHECK(cu::argument_names(t, 0).data() == cu::argument_names(t, cu::kDefaultToolsets).data());
}
