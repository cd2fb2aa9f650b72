// The session tools against a real Xvfb: grants (request_access,
// list_granted_applications and their idle release), the clipboard as other
// X clients see it (xclip on the other end, INCR-sized transfers, an owner
// that never answers), open_application focusing and launching real
// programs, switch_display onto RandR monitors, and (under strace) that the
// server executes nothing but the one program it is asked to launch.
#include <catch2/catch.hpp>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"
#include "support/session_probe.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

// Built with append: GCC 12 warns falsely (-Wrestrict) on "(" + to_string().
std::string coord(int x, int y) {
  std::string s = "[";
  s.append(std::to_string(x)).append(",").append(std::to_string(y)).append("]");
  return s;
}

std::string wrote(size_t n) {
  std::string s = "wrote ";
  s.append(std::to_string(n)).append(" characters to the clipboard");
  return s;
}

std::string click_args(int x, int y) {
  std::string s = "{\"coordinate\":";
  s.append(coord(x, y)).append("}");
  return s;
}

std::string app_args(std::string_view app) {
  std::string s = "{\"app\":";
  s.append(json_string(app)).append("}");
  return s;
}

std::string text_arg(std::string_view text) {
  std::string s = "{\"text\":";
  s.append(json_string(text)).append("}");
  return s;
}

// The JSON a tool answered with in its first text block.
json_ptr body_of(const json_line& response) { return parse_json(text_of(response)); }

std::optional<std::string> string_field(const json_line& j, const char* key) {
  std::string_view v;
  if (j.root[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return std::string(v);
}

std::optional<bool> bool_field(const json_line& j, const char* key) {
  bool v;
  if (j.root[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

std::optional<std::vector<std::string>> strings_field(const json_line& j, const char* key) {
  simdjson::dom::array a;
  if (j.root[key].get(a) != simdjson::SUCCESS) return std::nullopt;
  std::vector<std::string> out;
  for (simdjson::dom::element e : a) {
    std::string_view s;
    if (e.get(s) != simdjson::SUCCESS) return std::nullopt;
    out.emplace_back(s);
  }
  return out;
}

size_t key_count(const json_line& j) {
  simdjson::dom::object o;
  if (j.root.get(o) != simdjson::SUCCESS) return 0;
  return o.size();
}

// Calls a tool that must succeed and returns its text.
std::string ok_text(server_process& s, std::string_view tool, std::string_view args = "{}") {
  auto r = s.call_tool(tool, args);
  INFO(tool << " " << args.substr(0, 200) << " answered " << r->text.substr(0, 600));
  REQUIRE_FALSE(is_error(*r));
  return text_of(*r);
}

constexpr const char* kGrantAll =
    R"({"apps":["xterm"],"reason":"testing","clipboardRead":true,"clipboardWrite":true,"systemKeyCombos":true})";
constexpr const char* kGrantClipboard =
    R"({"apps":["xterm"],"reason":"testing","clipboardRead":true,"clipboardWrite":true})";

void check_nothing_granted(server_process& s) {
  json_ptr list = parse_json(ok_text(s, "list_granted_applications"));
  INFO(list->text);
  CHECK(strings_field(*list, "applications") == std::vector<std::string>{});
  CHECK(bool_field(*list, "clipboardRead") == false);
  CHECK(bool_field(*list, "clipboardWrite") == false);
  CHECK(bool_field(*list, "systemKeyCombos") == false);
  CHECK(string_field(*list, "coordinateMode") == "screenshot");
  CHECK(key_count(*list) == 5);
}

// What another client reads from CLIPBOARD through xclip (stdout exactly).
std::string xclip_out(const std::string& display, const char* target = nullptr) {
  std::vector<std::string> argv = {"xclip", "-o", "-selection", "clipboard"};
  if (target != nullptr) {
    argv.push_back("-t");
    argv.push_back(target);
  }
  run_result r = run_program(argv, display);
  INFO("xclip -o stderr: " << r.err);
  REQUIRE(r.status == 0);
  return r.out;
}

// xclip in the foreground (-quiet) serving text on CLIPBOARD until it is
// killed; returns once it owns the selection.
std::unique_ptr<background_program> xclip_in(const std::string& display, x_observer& obs,
                                             std::string_view text) {
  const xcb_window_t before = obs.selection_owner("CLIPBOARD");
  auto p = std::make_unique<background_program>(
      std::vector<std::string>{"xclip", "-i", "-selection", "clipboard", "-quiet"}, display, text);
  const xcb_window_t owner = obs.wait_selection_owner_other_than("CLIPBOARD", before, 20000);
  INFO("xclip log: " << p->log());
  REQUIRE(owner != XCB_NONE);
  return p;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

size_t utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// Exactly `bytes` bytes of valid UTF-8, the same every run: printable ASCII
// with newlines, Latin-1, CJK ideographs and emoji mixed at random.
std::string mixed_utf8(size_t bytes, uint32_t seed) {
  uint32_t state = seed;
  auto next = [&state] {
    state = state * 1103515245u + 12345u;
    return state >> 8;
  };
  std::string out;
  out.reserve(bytes);
  while (out.size() < bytes) {
    uint32_t cp = 0;
    switch (next() % 5) {
      case 0:
      case 1: cp = next() % 61 == 0 ? '\n' : 0x20 + next() % 0x5f; break;
      case 2: cp = 0xa0 + next() % 0x60; break;
      case 3: cp = 0x4e00 + next() % 0x5000; break;
      default: cp = 0x1f300 + next() % 0x250; break;
    }
    if (out.size() + utf8_length(cp) > bytes) cp = 'x';
    append_utf8(out, cp);
  }
  return out;
}

constexpr size_t kTwoMiB = size_t{2} << 20;

// The server answers open_application only after its (checked) SetInputFocus
// has been processed, so a round trip from here sees the focus it set.
bool focus_is(x_observer& obs, xcb_window_t w) { return obs.input_focus() == w; }

xcb_window_t window_field(const json_line& j) {
  std::optional<std::string> w = string_field(j, "window");
  if (!w || w->rfind("0x", 0) != 0) return XCB_NONE;
  return xcb_window_t(strtoul(w->c_str(), nullptr, 16));
}

// One RandR monitor as `xrandr --listmonitors` prints it.
struct monitor {
  int index = 0;
  std::string name;
  int width = 0, height = 0, x = 0, y = 0;
  std::string geometry() const {
    std::string g = std::to_string(width);
    g.append("x").append(std::to_string(height)).append("+").append(std::to_string(x));
    return g.append("+").append(std::to_string(y));
  }
};

std::vector<monitor> list_monitors(const std::string& display) {
  run_result r = run_program({"xrandr", "--listmonitors"}, display);
  REQUIRE(r.status == 0);
  std::vector<monitor> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    // " 2: +*screen 3840/1016x1080/286+0+0  screen": the name carries '+'
    // for primary and '*' for automatic.
    monitor m;
    char name[256];
    if (sscanf(line.c_str(), " %d: %255s %d/%*dx%d/%*d%d%d", &m.index, name, &m.width, &m.height,
               &m.x, &m.y) != 6) {
      continue;
    }
    m.name = name;
    m.name.erase(0, m.name.find_first_not_of("+*"));
    out.push_back(m);
  }
  return out;
}

constexpr rgb kLeft{200, 30, 40};
constexpr rgb kRight{30, 60, 200};
constexpr rgb kMark{250, 220, 0};
constexpr rgb kEdgeMark{0, 200, 80};
// Inside the right monitor, in its own coordinates.
constexpr int kMarkX = 600, kMarkY = 300, kMarkW = 240, kMarkH = 180;
constexpr int kEdgeY = 500, kEdgeW = 30, kEdgeH = 100;

// A 3840x1080 Xvfb split by RandR into monitors "left" and "right", the left
// half painted one colour and the right another with two marks on it.
struct split_screen {
  split_screen() : painter(x.display()) {
    for (const char* spec : {"left 1920/508x1080/286+0+0", "right 1920/508x1080/286+1920+0"}) {
      std::istringstream words(spec);
      std::string name, geometry;
      words >> name >> geometry;
      run_result r = run_program({"xrandr", "--setmonitor", name, geometry, "none"}, x.display());
      INFO("xrandr --setmonitor " << spec << ": " << r.err);
      REQUIRE(r.status == 0);
    }
    painter.create_window(0, 0, 1920, 1080, kLeft);
    xcb_window_t right = painter.create_window(1920, 0, 1920, 1080, kRight);
    painter.fill(right, kMarkX, kMarkY, kMarkW, kMarkH, kMark);
    painter.fill(right, 0, kEdgeY, kEdgeW, kEdgeH, kEdgeMark);
    painter.sync();
  }
  xvfb x{3840, 1080};
  x_client painter;
};

// The image pixel whose footprint holds device pixel d of a 1920-wide (or
// 1080-high) monitor captured at 1366x768.
int to_image_x(double dx) { return int(dx * 1366 / 1920); }
int to_image_y(double dy) { return int(dy * 768 / 1080); }

std::string switch_args(std::string_view display) {
  std::string s = "{\"display\":";
  s.append(json_string(display)).append("}");
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One execve or execveat that strace logged: its pid, the program and the
// result ("" while the call has not returned in the log).
struct exec_call {
  std::string pid, path, result, line;
};

// Reads the execs of an `strace -f -o FILE` log in both of the forms strace
// writes them:
//   1234 execve("/usr/bin/xclock", ["xclock"], 0x7ff... /* 20 vars */) = 0
// and, when another traced process logged in between (a busy machine makes
// that likely), split in two:
//   1234 execve("/usr/bin/xclock", ["xclock"], 0x7ff... /* 20 vars */ <unfinished ...>
//   1236 +++ exited with 0 +++
//   1234 <... execve resumed>) = 0
// The resumed line's result belongs to the same pid's unfinished call.
std::vector<exec_call> exec_calls(const std::string& log) {
  std::vector<exec_call> out;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* name : {"execve", "execveat"}) {
      const std::string resumed = std::string("<... ").append(name).append(" resumed>");
      const size_t at = line.find(resumed);
      if (at == std::string::npos) continue;
      const std::string pid = at == 0 ? "" : line.substr(0, line.find_last_not_of(' ', at - 1) + 1);
      for (auto it = out.rbegin(); it != out.rend(); ++it) {
        if (it->pid != pid || !it->result.empty()) continue;
        const size_t eq = line.rfind(" = ");
        if (eq != std::string::npos) it->result = line.substr(eq + 3);
        it->line.append(" | ").append(line);
        break;
      }
    }
    size_t call = line.find(" execve(");
    if (call == std::string::npos) call = line.find(" execveat(");
    if (call == std::string::npos) continue;
    exec_call e;
    e.line = line;
    e.pid = line.substr(0, call);
    // The program is the first quoted argument (execveat's second argument).
    size_t q0 = line.find('"', call);
    size_t q1 = q0 == std::string::npos ? q0 : line.find('"', q0 + 1);
    if (q1 != std::string::npos) e.path = line.substr(q0 + 1, q1 - q0 - 1);
    const bool unfinished = line.find("<unfinished ...>") != std::string::npos;
    size_t eq = line.rfind(" = ");
    if (!unfinished && eq != std::string::npos) e.result = line.substr(eq + 3);
    out.push_back(e);
  }
  return out;
}

// A private temporary directory, removed with everything in it at the end
// of the scope however the test ends.
struct temp_dir {
  temp_dir() {
    char tmpl[] = "/tmp/cu-strace-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path = tmpl;
  }
  ~temp_dir() {
    if (path.empty()) return;
    std::string cmd = "rm -rf '";
    cmd.append(path).append("'");
    int ignored = system(cmd.c_str());
    (void)ignored;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string path;
};

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
}

}  // namespace

// --- Grants ---------------------------------------------------------------

TEST_CASE("request_access answers the accumulated grants exactly: apps sorted and unique, flags additive") {
  xvfb x;
  server_process s(x.display());
  check_nothing_granted(s);

  CHECK(ok_text(s, "request_access",
                R"({"apps":["xterm","Firefox","xterm"],"reason":"testing","clipboardRead":true})") ==
        R"({"grantedApplications":["Firefox","xterm"],"deniedApplications":[],"screenshotFiltering":false,"clipboardRead":true,"clipboardWrite":false,"systemKeyCombos":false})");
  // A later false does not revoke; new apps join the sorted set.
  CHECK(ok_text(s, "request_access",
                R"({"apps":["code","Firefox"],"reason":"more","clipboardRead":false,"clipboardWrite":true})") ==
        R"({"grantedApplications":["Firefox","code","xterm"],"deniedApplications":[],"screenshotFiltering":false,"clipboardRead":true,"clipboardWrite":true,"systemKeyCombos":false})");
  CHECK(ok_text(s, "request_access", R"({"apps":["xterm"],"reason":"keys","systemKeyCombos":true})") ==
        R"({"grantedApplications":["Firefox","code","xterm"],"deniedApplications":[],"screenshotFiltering":false,"clipboardRead":true,"clipboardWrite":true,"systemKeyCombos":true})");

  json_ptr list = parse_json(ok_text(s, "list_granted_applications"));
  INFO(list->text);
  CHECK(strings_field(*list, "applications") == std::vector<std::string>{"Firefox", "code", "xterm"});
  CHECK(bool_field(*list, "clipboardRead") == true);
  CHECK(bool_field(*list, "clipboardWrite") == true);
  CHECK(bool_field(*list, "systemKeyCombos") == true);
  CHECK(string_field(*list, "coordinateMode") == "screenshot");
  CHECK(key_count(*list) == 5);
}

TEST_CASE("request_access with a missing or mistyped argument is an error naming it and grants nothing") {
  xvfb x;
  server_process s(x.display());
  const std::pair<const char*, const char*> cases[] = {
      {R"({"reason":"r"})", "apps"},
      {R"({"apps":["xterm"]})", "reason"},
      {R"({"apps":"xterm","reason":"r"})", "apps"},
      {R"({"apps":[1],"reason":"r"})", "apps"},
      {R"({"apps":["xterm"],"reason":5})", "reason"},
      {R"({"apps":["xterm"],"reason":"r","clipboardRead":"yes"})", "clipboardRead"},
      {R"({"apps":["xterm"],"reason":"r","clipboardWrite":1})", "clipboardWrite"},
      {R"({"apps":["xterm"],"reason":"r","systemKeyCombos":"true"})", "systemKeyCombos"},
  };
  for (auto [args, name] : cases) {
    INFO(args);
    CHECK(contains(error_text(s, "request_access", args), name));
  }
  check_nothing_granted(s);
}

TEST_CASE("with CU_IDLE_RELEASE_SECS=1 the idle release that lets go of a held button also clears every grant") {
  xvfb x;
  input_probe probe(x.display());
  server_process s(x.display(), {{"CU_IDLE_RELEASE_SECS", "1"}});
  ok_text(s, "request_access", kGrantAll);
  ok_text(s, "screenshot");
  ok_text(s, "left_mouse_down", R"({"coordinate":[500,400]})");
  REQUIRE(probe.buttons_mask() == kButton1Mask);
  // The release of the button is the idle release happening: poll for it
  // (no request may be sent meanwhile, it would restart the idle period).
  const int64_t deadline = now_ms() + 5000;
  while (probe.buttons_mask() != 0) {
    REQUIRE(now_ms() < deadline);
    usleep(5000);
  }
  // The first request after the idle period already sees the grants gone.
  check_nothing_granted(s);
  CHECK(contains(error_text(s, "read_clipboard"), "clipboardRead"));
}

TEST_CASE("with CU_IDLE_RELEASE_SECS=1 grants survive steady requests and are gone after two quiet seconds") {
  xvfb x;
  server_process s(x.display(), {{"CU_IDLE_RELEASE_SECS", "1"}});
  ok_text(s, "request_access", kGrantAll);
  // Requests every 300 ms for 2.4 s: never a full second of idleness.
  for (int i = 0; i < 8; ++i) {
    usleep(300000);
    CHECK(s.request("ping")->root["result"].is_object());
  }
  json_ptr list = parse_json(ok_text(s, "list_granted_applications"));
  CHECK(strings_field(*list, "applications") == std::vector<std::string>{"xterm"});
  CHECK(bool_field(*list, "clipboardRead") == true);
  // Nothing to observe without a request (which would restart the idle
  // period), so this waits on the timer: twice its period.
  usleep(2000000);
  check_nothing_granted(s);
}

// --- Clipboard -------------------------------------------------------------

TEST_CASE("read_clipboard needs a clipboardRead grant and write_clipboard a clipboardWrite grant") {
  xvfb x;
  server_process s(x.display());
  CHECK(contains(error_text(s, "read_clipboard"), "clipboardRead"));
  CHECK(contains(error_text(s, "write_clipboard", text_arg("nope")), "clipboardWrite"));
  // Apps alone grant neither.
  ok_text(s, "request_access", R"({"apps":["xterm"],"reason":"r"})");
  CHECK(contains(error_text(s, "read_clipboard"), "clipboardRead"));
  CHECK(contains(error_text(s, "write_clipboard", text_arg("nope")), "clipboardWrite"));
  // Read alone still leaves writing closed.
  ok_text(s, "request_access", R"({"apps":["xterm"],"reason":"r","clipboardRead":true})");
  CHECK(ok_text(s, "read_clipboard") == "");
  CHECK(contains(error_text(s, "write_clipboard", text_arg("nope")), "clipboardWrite"));
  ok_text(s, "request_access", R"({"apps":["xterm"],"reason":"r","clipboardWrite":true})");
  CHECK(ok_text(s, "write_clipboard", text_arg("yes")) == "wrote 3 characters to the clipboard");
}

TEST_CASE("read_clipboard of a clipboard nobody owns is empty text, not an error") {
  xvfb x;
  x_observer obs(x.display());
  REQUIRE(obs.selection_owner("CLIPBOARD") == XCB_NONE);
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  auto r = s.call_tool("read_clipboard");
  INFO(r->text);
  CHECK_FALSE(is_error(*r));
  std::string_view type;
  REQUIRE(r->root["result"]["content"].at(0)["type"].get(type) == simdjson::SUCCESS);
  CHECK(type == "text");
  CHECK(text_of(*r) == "");
}

TEST_CASE("write_clipboard serves the text to other clients as UTF8_STRING with the standard targets") {
  xvfb x;
  x_observer obs(x.display());
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  const std::string text = "Grüße, 世界! 😀 tab\tand a newline\nend";
  CHECK(ok_text(s, "write_clipboard", text_arg(text)) ==
        wrote(code_points(text)));
  CHECK(obs.selection_owner("CLIPBOARD") != XCB_NONE);
  CHECK(xclip_out(x.display()) == text);
  CHECK(xclip_out(x.display(), "UTF8_STRING") == text);
  const std::string targets = xclip_out(x.display(), "TARGETS");
  INFO("TARGETS: " << targets);
  std::vector<std::string> names;
  std::istringstream lines(targets);
  for (std::string line; std::getline(lines, line);) names.push_back(line);
  for (const char* want : {"TARGETS", "UTF8_STRING", "STRING", "TEXT"}) {
    INFO(want);
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  }
  // The server reads back what it owns itself.
  CHECK(ok_text(s, "read_clipboard") == text);
}

TEST_CASE("read_clipboard returns exactly what xclip put on the clipboard") {
  xvfb x;
  x_observer obs(x.display());
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  const std::string text = "from xclip: ünïcödé ✓ 🚀\nsecond line\n";
  auto xclip = xclip_in(x.display(), obs, text);
  CHECK(ok_text(s, "read_clipboard") == text);
}

TEST_CASE("2 MiB of mixed UTF-8 written by write_clipboard reaches xclip intact") {
  xvfb x;
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  const std::string text = mixed_utf8(kTwoMiB, 7);
  REQUIRE(text.size() == kTwoMiB);
  CHECK(ok_text(s, "write_clipboard", text_arg(text)) ==
        wrote(code_points(text)));
  const std::string got = xclip_out(x.display());
  INFO(first_difference(got, text));
  CHECK(got == text);
}

TEST_CASE("2 MiB of mixed UTF-8 from xclip is what read_clipboard returns") {
  xvfb x;
  x_observer obs(x.display());
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  const std::string text = mixed_utf8(kTwoMiB, 11);
  auto xclip = xclip_in(x.display(), obs, text);
  const std::string got = ok_text(s, "read_clipboard");
  INFO(first_difference(got, text));
  CHECK(got == text);
}

TEST_CASE("2 MiB one server owns reaches another server's read_clipboard by INCR") {
  // xclip -i offers 2 MiB in one property (BIG-REQUESTS allows it), so the
  // INCR read path needs an owner that sends pieces: the server itself does
  // above 256 KiB.
  xvfb x;
  server_process owner(x.display());
  server_process reader(x.display());
  ok_text(owner, "request_access", kGrantClipboard);
  ok_text(reader, "request_access", kGrantClipboard);
  const std::string text = mixed_utf8(kTwoMiB, 13);
  CHECK(ok_text(owner, "write_clipboard", text_arg(text)) == wrote(code_points(text)));
  const std::string got = ok_text(reader, "read_clipboard");
  INFO(first_difference(got, text));
  CHECK(got == text);
}

TEST_CASE("a clipboard owner that never answers makes read_clipboard fail with 'did not answer' within 5 s") {
  xvfb x;
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  {
    silent_clipboard_owner squatter(x.display());
    const int64_t start = now_ms();
    auto r = s.call_tool("read_clipboard");
    const int64_t elapsed = now_ms() - start;
    INFO(r->text << " after " << elapsed << " ms");
    CHECK(is_error(*r));
    CHECK(contains(text_of(*r), "did not answer"));
    CHECK(elapsed < 5000);
  }
  // Once the squatter has gone, the clipboard is unowned and reads as empty.
  CHECK(ok_text(s, "read_clipboard") == "");
}

TEST_CASE("after write_clipboard, another client taking the clipboard is what read_clipboard sees") {
  xvfb x;
  x_observer obs(x.display());
  server_process s(x.display());
  ok_text(s, "request_access", kGrantClipboard);
  ok_text(s, "write_clipboard", text_arg("the server's text"));
  REQUIRE(ok_text(s, "read_clipboard") == "the server's text");
  auto xclip = xclip_in(x.display(), obs, "xclip's text");
  CHECK(ok_text(s, "read_clipboard") == "xclip's text");
  // And the server can take it back.
  ok_text(s, "write_clipboard", text_arg("mine again"));
  CHECK(xclip_out(x.display()) == "mine again");
}

// --- open_application ------------------------------------------------------

TEST_CASE("open_application focuses a running xterm by name, case-insensitively, without launching one") {
  xvfb x;
  x_observer obs(x.display());
  xterm_window xt(x.display());
  server_process s(x.display());
  INFO("xterm top level " << hex(xt.top_level()));

  obs.set_input_focus(obs.root());
  json_ptr r = parse_json(ok_text(s, "open_application", R"({"app":"xterm"})"));
  INFO(r->text);
  CHECK(string_field(*r, "app") == "xterm");
  CHECK(bool_field(*r, "focused") == true);
  CHECK(bool_field(*r, "launched") == false);
  CHECK(string_field(*r, "via") == "x11");
  CHECK(window_field(*r) == xt.top_level());
  CHECK(focus_is(obs, xt.top_level()));

  obs.set_input_focus(obs.root());
  json_ptr upper = parse_json(ok_text(s, "open_application", R"({"app":"XTerm"})"));
  INFO(upper->text);
  CHECK(bool_field(*upper, "focused") == true);
  CHECK(bool_field(*upper, "launched") == false);
  CHECK(window_field(*upper) == xt.top_level());
  CHECK(focus_is(obs, xt.top_level()));

  CHECK(processes_on_display("xterm", x.display()).size() == 1);
}

TEST_CASE("open_application finds a window by its title") {
  xvfb x;
  x_observer obs(x.display());
  std::string first_title = "cu-first-", second_title = "cu-second-";
  first_title.append(std::to_string(getpid()));
  second_title.append(std::to_string(getpid()));
  xterm_window first(x.display(), first_title, 0, 0);
  xterm_window second(x.display(), second_title, 700, 400);
  REQUIRE(obs.title(first.top_level()) == first_title);
  REQUIRE(obs.title(second.top_level()) == second_title);
  server_process s(x.display());
  for (auto [title, window] : {std::pair{second_title, second.top_level()},
                               std::pair{first_title, first.top_level()}}) {
    INFO(title << " is " << hex(window));
    obs.set_input_focus(obs.root());
    json_ptr r = parse_json(ok_text(s, "open_application", app_args(title)));
    INFO(r->text);
    CHECK(bool_field(*r, "focused") == true);
    CHECK(bool_field(*r, "launched") == false);
    CHECK(window_field(*r) == window);
    CHECK(focus_is(obs, window));
  }
}

TEST_CASE("open_application launches xclock when none runs and focuses its window") {
  xvfb x;
  launched_reaper reaper("xclock", x.display());
  x_observer obs(x.display());
  REQUIRE(processes_on_display("xclock", x.display()).empty());
  REQUIRE(obs.windows_with_class("XClock").empty());
  server_process s(x.display());

  json_ptr r = parse_json(ok_text(s, "open_application", R"({"app":"xclock"})"));
  INFO(r->text);
  CHECK(bool_field(*r, "launched") == true);
  CHECK(bool_field(*r, "focused") == true);
  const xcb_window_t w = window_field(*r);
  REQUIRE(w != XCB_NONE);
  auto cls = obs.wm_class(w);
  REQUIRE(cls);
  CHECK(cls->second == "XClock");
  CHECK(obs.viewable(w));
  CHECK(focus_is(obs, w));
  const std::vector<pid_t> clocks = processes_on_display("xclock", x.display());
  CHECK(clocks.size() == 1);
  if (auto pid = obs.net_wm_pid(w)) {
    CHECK(std::find(clocks.begin(), clocks.end(), pid_t(*pid)) != clocks.end());
  }

  // Asked again, it focuses the one that runs now instead of starting another.
  obs.set_input_focus(obs.root());
  json_ptr again = parse_json(ok_text(s, "open_application", R"({"app":"xclock"})"));
  INFO(again->text);
  CHECK(bool_field(*again, "launched") == false);
  CHECK(window_field(*again) == w);
  CHECK(focus_is(obs, w));
  CHECK(processes_on_display("xclock", x.display()).size() == 1);
}

TEST_CASE("under a window manager open_application activates through _NET_ACTIVE_WINDOW") {
  xvfb x;
  x_observer obs(x.display());
  launched_reaper reaper("xclock", x.display());
  background_program wm({"openbox", "--sm-disable"}, x.display());
  // Waiting on another program: poll, with a deadline, for the manager to
  // announce itself.
  const int64_t deadline = now_ms() + 20000;
  while (obs.window_property(obs.root(), "_NET_SUPPORTING_WM_CHECK") == XCB_NONE) {
    REQUIRE(wm.running());
    REQUIRE(now_ms() < deadline);
    usleep(10000);
  }
  std::string first_title = "cu-wm-first-", second_title = "cu-wm-second-";
  first_title.append(std::to_string(getpid()));
  second_title.append(std::to_string(getpid()));
  xterm_window first(x.display(), first_title, 0, 0);
  xterm_window second(x.display(), second_title, 700, 400);
  server_process s(x.display());
  for (const std::string& title : {first_title, second_title, first_title}) {
    json_ptr r = parse_json(ok_text(s, "open_application", app_args(title)));
    INFO(r->text);
    CHECK(string_field(*r, "via") == "ewmh");
    CHECK(bool_field(*r, "focused") == true);
    CHECK(bool_field(*r, "launched") == false);
    const xcb_window_t w = window_field(*r);
    CHECK(obs.title(w) == title);
    // The server answers once the manager has named the window active.
    CHECK(obs.window_property(obs.root(), "_NET_ACTIVE_WINDOW") == w);
    CHECK(focus_is(obs, w));
  }
  // xclock declines the keyboard focus (ICCCM input hint false): the
  // manager raises it, and the answer says it is not focused.
  json_ptr clock = parse_json(ok_text(s, "open_application", R"({"app":"xclock"})"));
  INFO(clock->text);
  CHECK(bool_field(*clock, "launched") == true);
  CHECK(bool_field(*clock, "focused") == false);
  CHECK(contains(string_field(*clock, "note").value_or(""), "does not take the keyboard focus"));
}

TEST_CASE("open_application of an app that neither runs nor can be launched answers focused:false with a note") {
  xvfb x;
  x_observer obs(x.display());
  server_process s(x.display());
  auto r = s.call_tool("open_application", R"({"app":"no-such-app-xyz"})");
  INFO(r->text);
  CHECK_FALSE(is_error(*r));
  json_ptr body = body_of(*r);
  CHECK(bool_field(*body, "focused") == false);
  CHECK(bool_field(*body, "launched") == false);
  auto note = string_field(*body, "note");
  REQUIRE(note);
  CHECK_FALSE(note->empty());
}

// --- switch_display --------------------------------------------------------

TEST_CASE("switch_display naming the current X display changes nothing and says so") {
  xvfb x;
  server_process s(x.display());
  json_ptr r = parse_json(ok_text(s, "switch_display", switch_args(x.display())));
  INFO(r->text);
  CHECK(string_field(*r, "display") == x.display());
  CHECK(bool_field(*r, "switched") == false);
  CHECK(string_field(*r, "requested") == x.display());
  CHECK(string_field(*r, "note").has_value());
  auto shot = s.call_tool("screenshot");
  REQUIRE_FALSE(is_error(*shot));
  CHECK(image_of(*shot).width == 1366);
}

TEST_CASE("switch_display onto a RandR monitor confines screenshots and coordinates to it") {
  split_screen screen;
  const std::string& display = screen.x.display();
  server_process s(display);
  rgb_image whole = image_of(*s.call_tool("screenshot"));
  REQUIRE(whole.width == 1568);

  json_ptr r = parse_json(ok_text(s, "switch_display", switch_args("right")));
  INFO(r->text);
  CHECK(bool_field(*r, "switched") == true);
  CHECK(string_field(*r, "monitor") == "right");
  CHECK(string_field(*r, "geometry") == "1920x1080+1920+0");
  CHECK(string_field(*r, "requested") == "right");
  CHECK(string_field(*r, "display").has_value());

  // The switch ends the coordinate session of the whole screen.
  CHECK(contains(error_text(s, "left_click", R"({"coordinate":[10,10]})"), "no screenshot session yet"));

  rgb_image img = image_of(*s.call_tool("screenshot"));
  REQUIRE(img.width == 1366);
  REQUIRE(img.height == 768);
  // Only the right monitor: its colour in every corner and along the left
  // edge, and nothing of the left half anywhere.
  CHECK(img.at(0, 0) == kRight);
  CHECK(img.at(1365, 0) == kRight);
  CHECK(img.at(0, 767) == kRight);
  CHECK(img.at(1365, 767) == kRight);
  CHECK(img.at(1, 100) == kRight);
  size_t left_pixels = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int xx = 0; xx < img.width; ++xx) left_pixels += img.at(xx, y) == kLeft;
  }
  CHECK(left_pixels == 0);
  // The mark at its scaled place, pure inside and background just outside.
  const int mx0 = to_image_x(kMarkX), mx1 = to_image_x(kMarkX + kMarkW);
  const int my0 = to_image_y(kMarkY), my1 = to_image_y(kMarkY + kMarkH);
  const int mcy = to_image_y(kMarkY + kMarkH / 2.0);
  CHECK(img.at(to_image_x(kMarkX + kMarkW / 2.0), mcy) == kMark);
  CHECK(img.at(mx0 + 2, my0 + 2) == kMark);
  CHECK(img.at(mx1 - 3, my1 - 3) == kMark);
  CHECK(img.at(mx0 - 2, mcy) == kRight);
  CHECK(img.at(mx1 + 2, mcy) == kRight);
  CHECK(img.at(to_image_x(kMarkX + kMarkW / 2.0), my0 - 2) == kRight);
  // The edge mark, right at the image's left edge.
  const int ecy = to_image_y(kEdgeY + kEdgeH / 2.0);
  CHECK(img.at(0, ecy) == kEdgeMark);
  CHECK(img.at(to_image_x(kEdgeW) - 3, ecy) == kEdgeMark);
  CHECK(img.at(to_image_x(kEdgeW) + 2, ecy) == kRight);

  // Clicks land on the right monitor at the device pixel of the image point.
  input_probe probe(display, 1920, 0, 1920, 1080);
  constexpr std::pair<int, int> points[] = {{0, 0}, {1365, 767}, {683, 384}, {100, 700}, {977, 123}};
  for (auto [ix, iy] : points) {
    INFO("image " << ix << "," << iy);
    ok_text(s, "left_click", click_args(ix, iy));
    std::vector<input_event> events = probe.take();
    INFO(describe(events));
    std::vector<input_event> presses;
    for (const input_event& e : events) {
      if (e.type == XCB_BUTTON_PRESS) presses.push_back(e);
    }
    REQUIRE(presses.size() == 1);
    CHECK(presses[0].root_x == 1920 + device_x(ix));
    CHECK(presses[0].root_y == device_y(iy));
    CHECK(presses[0].x == device_x(ix));
  }
  ok_text(s, "mouse_move", R"({"coordinate":[500,300]})");
  CHECK(probe.pointer() == std::pair{1920 + device_x(500), device_y(300)});
  CHECK(int_array(ok_text(s, "cursor_position")) == std::vector<int64_t>{500, 300});
}

TEST_CASE("switch_display takes a monitor's index in GetMonitors order, and auto returns to the whole screen") {
  split_screen screen;
  const std::string& display = screen.x.display();
  const std::vector<monitor> monitors = list_monitors(display);
  INFO(monitors.size() << " monitors");
  REQUIRE(monitors.size() >= 2);
  server_process s(display);
  for (const monitor& m : monitors) {
    INFO("monitor " << m.index << " " << m.name << " " << m.geometry());
    json_ptr r = parse_json(ok_text(s, "switch_display", switch_args(std::to_string(m.index))));
    INFO(r->text);
    CHECK(string_field(*r, "monitor") == m.name);
    CHECK(string_field(*r, "geometry") == m.geometry());
    if (m.name == "left" || m.name == "right") CHECK(bool_field(*r, "switched") == true);
    rgb_image img = image_of(*s.call_tool("screenshot"));
    if (m.width == 1920) {
      CHECK(img.width == 1366);
      CHECK(img.height == 768);
      CHECK(img.at(683, 100) == (m.x == 0 ? kLeft : kRight));
    } else {
      // No model resolution has its aspect: scaled to the long-edge cap.
      CHECK(img.width == 1568);
      CHECK(img.height == m.height * 1568 / m.width);
    }
  }

  ok_text(s, "switch_display", switch_args("right"));
  ok_text(s, "screenshot");
  json_ptr back = parse_json(ok_text(s, "switch_display", switch_args("auto")));
  INFO(back->text);
  CHECK(contains(error_text(s, "left_click", R"({"coordinate":[10,10]})"), "no screenshot session yet"));
  // 3840x1080 matches no model resolution's aspect ratio: scaled, aspect
  // kept, to the 1568 px long-edge cap (the area cap allows more).
  rgb_image img = image_of(*s.call_tool("screenshot"));
  REQUIRE(img.width == 1568);
  REQUIRE(img.height == 441);
  auto wx = [](double dx) { return int(dx * 1568 / 3840); };
  auto wy = [](double dy) { return int(dy * 441 / 1080); };
  CHECK(img.at(4, 4) == kLeft);
  CHECK(img.at(wx(1920) - 2, 439) == kLeft);
  CHECK(img.at(wx(1920) + 2, 0) == kRight);
  CHECK(img.at(1567, 440) == kRight);
  CHECK(img.at(wx(1920 + kMarkX + kMarkW / 2.0), wy(kMarkY + kMarkH / 2.0)) == kMark);
  CHECK(img.at(wx(1920 + kEdgeW / 2.0), wy(kEdgeY + kEdgeH / 2.0)) == kEdgeMark);
}

TEST_CASE("switch_display to an unknown monitor is an error listing the monitors there are") {
  split_screen screen;
  server_process s(screen.x.display());
  const std::string text = error_text(s, "switch_display", switch_args("middle"));
  INFO(text);
  for (const monitor& m : list_monitors(screen.x.display())) CHECK(contains(text, m.name));
  CHECK(contains(text, "left"));
  CHECK(contains(text, "right"));
  // Nothing changed: a screenshot is still the whole screen.
  CHECK(image_of(*s.call_tool("screenshot")).width == 1568);
}

// --- What the server executes ----------------------------------------------

TEST_CASE("the strace log reader reads an exec whether it comes whole or split in two") {
  const std::vector<exec_call> calls = exec_calls(
      "100 execve(\"/opt/cu/computer-use-mcp\", [\"computer-use-mcp\"], 0x7ffd /* 9 vars */) = 0\n"
      "101 execve(\"/usr/bin/xclock\", [\"xclock\"], 0x7ffe /* 9 vars */ <unfinished ...>\n"
      "102 +++ exited with 0 +++\n"
      "103 execve(\"/nonexistent/x\", [\"x\"], 0x7fff /* 9 vars */ <unfinished ...>\n"
      "101 <... execve resumed>) = 0\n"
      "103 <... execve resumed>) = -1 ENOENT (No such file or directory)\n"
      "104 execveat(3, \"/usr/bin/y\", [\"y\"], 0x7, 0 <unfinished ...>\n"
      "104 <... execveat resumed>) = 0\n");
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].path == "/opt/cu/computer-use-mcp");
  CHECK(calls[0].result == "0");
  CHECK(calls[1].pid == "101");
  CHECK(calls[1].path == "/usr/bin/xclock");
  CHECK(calls[1].result == "0");
  CHECK(calls[2].result.rfind("-1 ENOENT", 0) == 0);
  CHECK(calls[3].path == "/usr/bin/y");
  CHECK(calls[3].result == "0");
}

TEST_CASE("under strace a whole session execs only the server itself and the one application it launches") {
  xvfb x;
  launched_reaper reaper("xclock", x.display());
  x_observer obs(x.display());
  xterm_window xt(x.display(), "cu-strace-term");
  temp_dir dir;
  REQUIRE_FALSE(dir.path.empty());
  const std::string log = dir.path + "/execs.log";
  const char* binary_env = getenv("CU_BINARY");
  REQUIRE(binary_env != nullptr);
  const std::string binary = binary_env;
  // LeakSanitizer cannot run under ptrace: in the sanitizer build it would
  // fail the server's exit. Everything else it checks stays on.
  std::string asan = getenv("ASAN_OPTIONS") != nullptr ? getenv("ASAN_OPTIONS") : "";
  asan.append(asan.empty() ? "" : ":").append("detect_leaks=0");
  {
    server_process s(x.display(), {{"ASAN_OPTIONS", asan}}, {},
                     {"strace", "-f", "-qq", "-e", "trace=execve,execveat", "-o", log});
    s.send(R"({"jsonrpc":"2.0","id":"first","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"session-test","version":"1"}}})");
    json_ptr init = s.read_response("\"first\"", 30000);
    if (!init) {
      s.expect_exit_status(std::nullopt);
      FAIL("the server under strace never answered initialize (can strace attach here? "
           "EPERM means ptrace is not allowed); its stderr:\n"
           << s.stderr_text());
    }
    REQUIRE(init->root["result"].is_object());
    s.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

    REQUIRE(image_of(*s.call_tool("screenshot")).width == 1366);
    ok_text(s, "left_click", R"({"coordinate":[100,100]})");
    ok_text(s, "type", text_arg("hi"));
    ok_text(s, "request_access", kGrantClipboard);
    ok_text(s, "write_clipboard", text_arg("traced"));
    CHECK(ok_text(s, "read_clipboard") == "traced");
    json_ptr existing = parse_json(ok_text(s, "open_application", R"({"app":"xterm"})"));
    CHECK(bool_field(*existing, "launched") == false);
    CHECK(window_field(*existing) == xt.top_level());
    json_ptr launched = parse_json(ok_text(s, "open_application", R"({"app":"xclock"})"));
    CHECK(bool_field(*launched, "launched") == true);
    json_ptr same = parse_json(ok_text(s, "switch_display", switch_args(x.display())));
    CHECK(bool_field(*same, "switched") == false);

    // strace -f waits for every tracee, the detached xclock among them.
    CHECK(kill_and_wait_gone(processes_on_display("xclock", x.display())));
    s.close_stdin();
    CHECK(s.wait_exit(30000) == 0);
  }

  const std::string text = read_file(log);
  std::vector<exec_call> calls = exec_calls(text);
  std::string summary;
  for (const exec_call& c : calls) summary.append(c.line).append("\n");
  INFO("execs strace logged:\n" << summary);
  REQUIRE_FALSE(calls.empty());
  CHECK(calls[0].path == binary);
  CHECK(calls[0].result.rfind("0", 0) == 0);
  const size_t of_binary = size_t(std::count_if(
      calls.begin(), calls.end(), [&](const exec_call& c) { return c.path == binary; }));
  CHECK(of_binary == 1);
  const std::string xclock = real_path("/usr/bin/xclock");
  const size_t of_xclock = size_t(std::count_if(
      calls.begin(), calls.end(), [&](const exec_call& c) { return real_path(c.path) == xclock; }));
  CHECK(of_xclock == 1);
  for (const exec_call& c : calls) {
    if (real_path(c.path) == xclock) CHECK(c.result.rfind("0", 0) == 0);
  }
  // Nothing else at all: no helper program, no shell, and no failed attempts
  // along PATH either.
  CHECK(calls.size() == 2);
}
