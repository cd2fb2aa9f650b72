// The bad-input table (tests/x11/data/bad_inputs.txt): every class of
// malformed input, each with the answer it must get, run in order against
// one server. After each case the next request is served and nothing
// reached the screen; at the end nothing is pressed and the server exits 0.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"
#include "toolsets/registry.h"

using namespace cu::test;

namespace {

struct bad_case {
  int line = 0;
  std::string expect;  // rpc, tool, step, none, ok or do.
  std::string detail;  // The code and text of rpc, the text of tool, the index and text of step.
  std::string request;
};

// <xHH> is the raw byte HH, <repeat N TEXT> is TEXT N times.
std::string expand(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "<x") == 0 && i + 5 <= s.size() && s[i + 4] == '>') {
      out += char(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 5;
    } else if (s.compare(i, 8, "<repeat ") == 0) {
      size_t space = s.find(' ', i + 8), close = s.find('>', i + 8);
      int n = std::stoi(s.substr(i + 8, space - i - 8));
      std::string text = s.substr(space + 1, close - space - 1);
      for (int k = 0; k < n; ++k) out += text;
      i = close + 1;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::vector<bad_case> load_table(const char* file) {
  const char* dir = getenv("CU_SOURCE_DIR");
  REQUIRE(dir != nullptr);
  std::ifstream in(std::string(dir) + "/tests/x11/data/" + file);
  REQUIRE(in);
  std::vector<bad_case> cases;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (text.empty() || text[0] == '#') continue;
    size_t bar = text.find(" | ");
    INFO("line " << n);
    REQUIRE(bar != std::string::npos);
    bad_case c;
    c.line = n;
    std::string head = text.substr(0, bar);
    size_t space = head.find(' ');
    c.expect = head.substr(0, space);
    if (space != std::string::npos) c.detail = head.substr(space + 1);
    c.request = expand(text.substr(bar + 3));
    REQUIRE((c.expect == "rpc" || c.expect == "tool" || c.expect == "step" || c.expect == "none" ||
             c.expect == "ok" || c.expect == "do"));
    cases.push_back(std::move(c));
  }
  return cases;
}

// <root> is the root window's id, <own> the server's own window's (the
// desktop thread's, which it names): ids no client may hand the windows
// tools, known only once the display and the server run; <probe> the probe
// window's, a window that names no application.
std::string with_windows(std::string request, x_observer& obs, xcb_window_t probe) {
  auto put = [&](std::string_view tag, xcb_window_t w) {
    for (size_t at = request.find(tag); at != std::string::npos; at = request.find(tag)) {
      request.replace(at, tag.size(), hex(w));
    }
  };
  put("<root>", obs.root());
  put("<probe>", probe);
  if (request.find("<own>") != std::string::npos) {
    xcb_window_t own = XCB_NONE;
    for (xcb_window_t w : obs.top_levels()) {
      if (obs.title(w) == "computer-use-mcp") own = w;
    }
    REQUIRE(own != XCB_NONE);
    put("<own>", own);
  }
  return request;
}

// The request's id as JSON text, for cases answered by id.
std::string id_of(const std::string& request) {
  auto j = parse_json(request);
  simdjson::dom::element id;
  REQUIRE(j->root["id"].get(id) == simdjson::SUCCESS);
  return simdjson::minify(id);
}


// Whether the request calls a tool of a toolset this build lacks (the a11y
// toolset without libatspi): such a row is answered "Unknown tool" instead.
bool tool_not_built(const std::string& request) {
  auto j = parse_json(request);
  std::string_view name;
  if (j->root["params"]["name"].get(name) != simdjson::SUCCESS) return false;
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    if (cu::toolset_built(set.id)) continue;
    for (const cu::tool_def& t : set.tools) {
      if (t.name == name) return true;
    }
  }
  return false;
}

// Runs a table's cases in order against one server started with env, a
// full-screen probe window holding the focus; at least min_cases of them.
void run_table(const char* file, std::map<std::string, std::string> env, size_t min_cases) {
  std::vector<bad_case> cases = load_table(file);
  xvfb x;
  input_probe probe(x.display());
  x_observer obs(x.display());
  server_process s(x.display(), std::move(env));
  int sync = 0;
  size_t checked = 0;
  for (bad_case& c : cases) {
    c.request = with_windows(std::move(c.request), obs, probe.window());
    INFO("bad_inputs.txt line " << c.line << ": " << c.request.substr(0, 300));
    std::string ping_id = "\"sync-";  // Appended: GCC 12 warns falsely on "x" + string.
    ping_id += std::to_string(++sync);
    ping_id += '"';
    const std::string ping = R"({"jsonrpc":"2.0","id":)" + ping_id + R"(,"method":"ping"})";
    if (c.expect == "rpc" || c.expect == "none") {
      // Protocol errors are answered on the loop, in order: whatever comes
      // before the ping's answer is the case's.
      s.write_raw(c.request + "\n" + ping + "\n");
      std::vector<json_ptr> before;
      for (;;) {
        auto line = s.read_line();
        REQUIRE(line);
        auto j = parse_json(std::move(*line));
        std::string_view id;
        if (j->root["id"].get(id) == simdjson::SUCCESS && ping_id.substr(1, ping_id.size() - 2) == id) {
          break;
        }
        before.push_back(std::move(j));
      }
      if (c.expect == "none") {
        CHECK(before.empty());
      } else {
        REQUIRE(before.size() == 1);
        int64_t code = 0;
        REQUIRE(before[0]->root["error"]["code"].get(code) == simdjson::SUCCESS);
        size_t space = c.detail.find(' ');
        CHECK(code == std::stoll(c.detail.substr(0, space)));
        std::string_view message;
        REQUIRE(before[0]->root["error"]["message"].get(message) == simdjson::SUCCESS);
        if (space != std::string::npos) {
          CHECK_THAT(std::string(message), Catch::Contains(c.detail.substr(space + 1)));
        }
      }
    } else {
      s.write_raw(c.request + "\n");
      auto r = s.read_response(id_of(c.request));
      REQUIRE(r);
      if (c.expect == "tool") {
        REQUIRE(r->root["result"].is_object());
        CHECK(is_error(*r));
        std::string text = text_of(*r);
        if (tool_not_built(c.request)) {
          CHECK_THAT(text, Catch::StartsWith("Unknown tool: "));
        } else {
          CHECK_THAT(text, Catch::Contains(c.detail));
        }
        CHECK(text.find('\n') == std::string::npos);  // One line, as the contract says.
      } else if (c.expect == "step") {
        // A batch that ran and stopped at the step: isError, the summary
        // first, and that step's own text saying why.
        REQUIRE(r->root["result"].is_object());
        CHECK(is_error(*r));
        const size_t space = c.detail.find(' ');
        const std::string index = c.detail.substr(0, space);
        json_ptr summary = parse_json(text_of(*r));
        int64_t stopped_at = -1;
        CHECK(summary->root["batch"]["stopped_at"].get(stopped_at) == simdjson::SUCCESS);
        CHECK(std::to_string(stopped_at) == index);
        std::string tag = "[step ";
        tag.append(index).append(" \u00b7 ");
        std::string step_text;
        for (size_t i = 1; step_text.empty() && !text_of(*r, i).empty(); ++i) {
          if (text_of(*r, i).rfind(tag, 0) == 0) step_text = text_of(*r, i);
        }
        CHECK_THAT(step_text, Catch::Contains(c.detail.substr(space + 1)));
        CHECK(step_text.find('\n') == std::string::npos);
      } else if (c.expect == "ok") {
        REQUIRE(r->root["result"].is_object());
        CHECK_FALSE(is_error(*r));
      }
      // The next request is served.
      s.write_raw(ping + "\n");
      auto pong = s.read_response(ping_id);
      REQUIRE(pong);
      CHECK(pong->root["result"].is_object());
    }
    auto events = probe.take();
    if (c.expect != "ok" && c.expect != "do") {
      INFO("events: " << describe(events));
      CHECK(events.empty());
    }
    ++checked;
  }
  INFO(checked << " cases");
  CHECK(checked == cases.size());
  CHECK(checked >= min_cases);
  check_nothing_pressed(probe);
  s.close_stdin();
  CHECK(s.wait_exit() == 0);
}

}  // namespace

TEST_CASE("every malformed input in the bad-input table gets its answer and changes nothing") {
  run_table("bad_inputs.txt",
            {{"CU_MAX_FRAME_BYTES", "65536"}, {"CU_TOOLSETS", "all"},
             {"CU_UINPUT", "/nonexistent/uinput"}},
            180);
}

TEST_CASE("with grants enforced, what the grants refuse gets its answer and changes nothing") {
  // The probe window covers the screen and holds the focus, and names no
  // application (override-redirect, no WM_CLASS): every press and key is
  // the grants' to refuse.
  run_table("bad_inputs_enforced.txt",
            {{"CU_GRANTS", "enforce"}, {"CU_DENY_APPS", "keepassxc, Mail"}, {"CU_TOOLSETS", "all"},
             {"CU_UINPUT", "/nonexistent/uinput"}},
            20);
}
