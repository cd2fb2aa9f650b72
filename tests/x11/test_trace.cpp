// The flight recorder (docs/trace.md) against a real Xvfb: the server runs
// with CU_TRACE_DIR, and the test reads the trace file it wrote, record by
// record (each a <script type="application/json" class="cu"> line): a start
// record and a key frame; one call record per call with its tool, id,
// arguments, outcome, text and input at the root pixel it went to; no frame
// for a screen that did not change; a frame of crops covering only what the
// test repainted; typed text redacted on request; rotation under a size
// bound keeping CU_TRACE_KEEP files; and a SIGKILLed server's file readable
// up to its last whole record. The writer is asynchronous: the test waits
// for a record to be in the file (polling the file, whose growth no event
// of ours tells) before it changes the screen again.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <xcb/xcb.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/harness.h"
#include "support/tool_calls.h"

using namespace cu::test;

namespace {

constexpr std::string_view kOpen = R"(<script type="application/json" class="cu">)";
constexpr std::string_view kClose = "</script>";

struct trace_file {
  std::string path;
  std::string bytes;
  // Each whole record, parsed; a partial last line is counted apart.
  std::vector<json_ptr> records;
  int partial = 0;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

trace_file read_trace(const std::string& path) {
  trace_file t;
  t.path = path;
  t.bytes = slurp(path);
  std::istringstream in(t.bytes);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(kOpen, 0) != 0) continue;
    if (line.size() < kOpen.size() + kClose.size() ||
        line.compare(line.size() - kClose.size(), kClose.size(), kClose) != 0) {
      ++t.partial;
      continue;
    }
    std::string json = line.substr(kOpen.size(), line.size() - kOpen.size() - kClose.size());
    json_ptr r = parse_json(json);
    if (!r) {
      ++t.partial;
      continue;
    }
    t.records.push_back(std::move(r));
  }
  return t;
}

std::string kind_of(const json_line& r) {
  std::string_view k;
  if (r.root["kind"].get(k) != simdjson::SUCCESS) return "";
  return std::string(k);
}

std::vector<const json_line*> of_kind(const trace_file& t, std::string_view kind) {
  std::vector<const json_line*> out;
  for (const json_ptr& r : t.records) {
    if (kind_of(*r) == kind) out.push_back(r.get());
  }
  return out;
}

const json_line* call_record(const trace_file& t, int64_t seq) {
  for (const json_line* r : of_kind(t, "call")) {
    if (num(r->root, "seq") == seq) return r;
  }
  return nullptr;
}

// The trace files in dir, sorted by name (part 1's name sorts first only
// among equals, so callers sort by part when it matters).
std::vector<std::string> trace_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("trace-", 0) == 0 && n.size() > 5 && n.ends_with(".html")) {
        out.push_back(dir + "/" + n);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A fresh directory for a trace, removed with the others when the test
// program ends (a failed case's trace is gone too: its records are in the
// failure's messages).
std::string make_dir() {
  struct made {
    std::vector<std::string> dirs;
    ~made() {
      std::error_code ignored;
      for (const std::string& d : dirs) std::filesystem::remove_all(d, ignored);
    }
  };
  static made all;
  char tmpl[] = "/tmp/cu-trace-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  all.dirs.push_back(tmpl);
  return tmpl;
}

// Waits until the file holds needle (the writer thread is behind the answer).
void wait_for_record(const std::string& dir, const std::string& needle) {
  wait_until(
      [&] {
        for (const std::string& f : trace_files(dir)) {
          if (slurp(f).find(needle) != std::string::npos) return true;
        }
        return false;
      },
      needle.c_str());
}

std::string settled(int64_t seq) {
  return "{\"kind\":\"settled\",\"seq\":" + std::to_string(seq) + ",";
}

struct box {
  int64_t x = 0, y = 0, w = 0, h = 0;
};

std::vector<box> crops_of(const json_line& frame) {
  std::vector<box> out;
  simdjson::dom::array crops;
  REQUIRE(frame.root["crops"].get(crops) == simdjson::SUCCESS);
  for (simdjson::dom::element c : crops) {
    std::vector<int64_t> v;
    simdjson::dom::array a;
    REQUIRE(c["box"].get(a) == simdjson::SUCCESS);
    for (simdjson::dom::element n : a) v.push_back(n.get_int64().value());
    REQUIRE(v.size() == 4);
    out.push_back(box{v[0], v[1], v[2], v[3]});
  }
  return out;
}

const json_line* frame_n(const trace_file& t, int64_t n) {
  for (const json_line* r : of_kind(t, "frame")) {
    if (num(r->root, "n") == n) return r;
  }
  return nullptr;
}

int64_t settled_frame(const trace_file& t, int64_t seq) {
  for (const json_line* r : of_kind(t, "settled")) {
    if (num(r->root, "seq") == seq) return num(r->root, "frame");
  }
  return -1;
}

const json_line* settled_record(const trace_file& t, int64_t seq) {
  for (const json_line* r : of_kind(t, "settled")) {
    if (num(r->root, "seq") == seq) return r;
  }
  return nullptr;
}

bool is_key(const json_line& frame) {
  bool k = false;
  REQUIRE(frame.root["key"].get(k) == simdjson::SUCCESS);
  return k;
}

std::string str(simdjson::dom::element e, const char* k) {
  std::string_view v;
  INFO(k);
  REQUIRE(e[k].get(v) == simdjson::SUCCESS);
  return std::string(v);
}

bool boolean(simdjson::dom::element e, const char* k) {
  bool v = false;
  INFO(k);
  REQUIRE(e[k].get(v) == simdjson::SUCCESS);
  return v;
}

// Frame n as the viewer paints it: the latest key frame at or before it,
// then every later frame's crops over it in order, through n's own.
rgb_image frame_image(const trace_file& t, int64_t n) {
  std::vector<const json_line*> frames = of_kind(t, "frame");
  size_t last = frames.size();
  for (size_t i = 0; i < frames.size(); ++i) {
    if (num(frames[i]->root, "n") == n) last = i;
  }
  REQUIRE(last < frames.size());
  size_t first = last;
  while (first > 0 && !is_key(*frames[first])) --first;
  REQUIRE(is_key(*frames[first]));
  rgb_image img;
  for (size_t i = first; i <= last; ++i) {
    simdjson::dom::array crops;
    REQUIRE(frames[i]->root["crops"].get(crops) == simdjson::SUCCESS);
    std::vector<box> boxes = crops_of(*frames[i]);
    size_t k = 0;
    for (simdjson::dom::element c : crops) {
      std::string_view png;
      REQUIRE(c["png"].get(png) == simdjson::SUCCESS);
      rgb_image part = decode_png_base64(png);
      const box& b = boxes[k++];
      if (i == first) {
        img = part;
        continue;
      }
      for (int y = 0; y < part.height; ++y) {
        std::memcpy(&img.pixels[(size_t(b.y + y) * size_t(img.width) + size_t(b.x)) * 3],
                    &part.pixels[size_t(y) * size_t(part.width) * 3], size_t(part.width) * 3);
      }
    }
  }
  return img;
}

constexpr rgb kGrey{90, 90, 90};
constexpr rgb kBlue{20, 40, 200};

}  // namespace

TEST_CASE("a trace holds a start, a key frame, each call with its input, and crops of only what was repainted") {
  xvfb x(640, 480);
  x_client painter(x.display());
  xcb_window_t win = painter.create_window(100, 100, 200, 150, kGrey);
  painter.sync();
  const std::string dir = make_dir();
  server_process s(x.display(), {{"CU_TRACE_DIR", dir}});

  ok_call(s, "screenshot");                        // seq 1
  wait_for_record(dir, settled(1));
  ok_call(s, "screenshot");                        // seq 2: the screen is still
  wait_for_record(dir, settled(2));
  painter.fill(win, 10, 20, 40, 30, kBlue);        // root (110, 120) 40x30
  painter.sync();
  ok_call(s, "screenshot");                        // seq 3
  wait_for_record(dir, settled(3));
  ok_call(s, "left_click", R"({"coordinate":[500,400]})");  // seq 4
  ok_call(s, "type", R"({"text":"abc"})");                  // seq 5
  CHECK(!error_text(s, "zoom", R"({"region":[1,2]})").empty());  // seq 6
  ok_call(s, "computer_batch",
          R"({"actions":[{"name":"mouse_move","arguments":{"coordinate":[20,30]}},{"name":"screenshot"}]})");  // seq 7
  s.close_stdin();
  REQUIRE(s.wait_exit() == 0);

  std::vector<std::string> files = trace_files(dir);
  REQUIRE(files.size() == 1);
  trace_file t = read_trace(files[0]);
  INFO(t.bytes.substr(0, 2000));
  CHECK(t.bytes.rfind("<!doctype html>", 0) == 0);
  CHECK(t.partial == 0);
  REQUIRE(!t.records.empty());

  SECTION("the file starts with the start record and a key frame of the whole screen") {
    const json_line& start = *t.records[0];
    CHECK(kind_of(start) == "start");
    CHECK(num(start.root, "part") == 1);
    CHECK(int_array(simdjson::minify(start.root["screen"])) == std::vector<int64_t>{640, 480});
    CHECK(boolean(start.root, "redact_text") == false);
    REQUIRE(t.records.size() > 1);
    CHECK(kind_of(*t.records[1]) == "frame");
    CHECK(num(t.records[1]->root, "n") == 1);
    CHECK(is_key(*t.records[1]));
    std::vector<box> c = crops_of(*t.records[1]);
    REQUIRE(c.size() == 1);
    CHECK((c[0].x == 0 && c[0].y == 0 && c[0].w == 640 && c[0].h == 480));
    CHECK(kind_of(*t.records.back()) == "end");
    CHECK(str(t.records.back()->root, "why") == "stdin closed");
  }

  SECTION("each call has one record with its tool, id, arguments, outcome and text") {
    CHECK(of_kind(t, "call").size() == 7);
    const std::vector<std::string> tools = {"screenshot", "screenshot", "screenshot", "left_click",
                                            "type", "zoom", "computer_batch"};
    for (int64_t seq = 1; seq <= 7; ++seq) {
      const json_line* c = call_record(t, seq);
      INFO("seq " << seq);
      REQUIRE(c != nullptr);
      CHECK(str(c->root, "tool") == tools[size_t(seq - 1)]);
      CHECK(num(c->root, "id") == 999 + seq);
      CHECK(boolean(c->root, "ok") == (seq != 6));
      double t0 = 0, t1 = 0;
      REQUIRE(c->root["t0"].get(t0) == simdjson::SUCCESS);
      REQUIRE(c->root["t1"].get(t1) == simdjson::SUCCESS);
      CHECK(t0 <= t1);
    }
    const json_line* shot = call_record(t, 1);
    simdjson::dom::array images;
    REQUIRE(shot->root["images"].get(images) == simdjson::SUCCESS);
    CHECK(images.size() == 1);
    CHECK(simdjson::minify(call_record(t, 4)->root["args"]) == R"({"coordinate":[500,400]})");
    CHECK(str(call_record(t, 4)->root, "text") == "left_click at (500, 400)");
    CHECK(contains(str(call_record(t, 6)->root, "text"), "Invalid argument \"region\""));
    CHECK(simdjson::minify(call_record(t, 5)->root["args"]) == R"({"text":"abc"})");
  }

  SECTION("the click's input is a move to its root pixel, a press and a release of button 1") {
    simdjson::dom::array in;
    REQUIRE(call_record(t, 4)->root["input"].get(in) == simdjson::SUCCESS);
    std::vector<std::string> seen;
    for (simdjson::dom::element e : in) {
      std::string type = str(e, "type");
      if (type == "move") {
        CHECK(num(e, "x") == 500);
        CHECK(num(e, "y") == 400);
      } else {
        CHECK(num(e, "button") == 1);
      }
      seen.push_back(type);
    }
    CHECK(seen == std::vector<std::string>{"move", "press", "release"});
  }

  SECTION("type's input names each key it typed, down then up") {
    simdjson::dom::array in;
    REQUIRE(call_record(t, 5)->root["input"].get(in) == simdjson::SUCCESS);
    std::string downs;
    for (simdjson::dom::element e : in) {
      CHECK(str(e, "type") == "key");
      if (boolean(e, "down")) downs += str(e, "keysym");
    }
    CHECK(downs == "abc");
  }

  SECTION("a still screen writes no frame, and a repaint writes crops of only the repainted part") {
    CHECK(settled_frame(t, 1) == 1);
    CHECK(settled_frame(t, 2) == 1);
    const int64_t after = settled_frame(t, 3);
    REQUIRE(after == 2);
    const json_line* f = frame_n(t, 2);
    REQUIRE(f != nullptr);
    CHECK_FALSE(is_key(*f));
    std::vector<box> crops = crops_of(*f);
    REQUIRE(!crops.empty());
    // The frame is the screen's own size here (640x480 has no smaller model
    // resolution), so frame pixels are root pixels; crops are padded by 2.
    int64_t covered = 0;
    for (const box& b : crops) {
      INFO(b.x << "," << b.y << " " << b.w << "x" << b.h);
      CHECK(b.x >= 110 - 3);
      CHECK(b.y >= 120 - 3);
      CHECK(b.x + b.w <= 150 + 3);
      CHECK(b.y + b.h <= 150 + 3);
      covered += b.w * b.h;
    }
    CHECK(covered >= 40 * 30);
    // The call's "before" is the frame the screen showed at its start.
    CHECK(num(call_record(t, 3)->root, "before") == 1);
  }
}

TEST_CASE("with CU_TRACE_REDACT_TEXT=1 typed text appears nowhere in the trace") {
  xvfb x(640, 480);
  const std::string dir = make_dir();
  const std::string secret = "Secr3tPassw0rd";
  {
    server_process s(x.display(), {{"CU_TRACE_DIR", dir}, {"CU_TRACE_REDACT_TEXT", "1"}});
    ok_call(s, "screenshot");
    ok_call(s, "type", "{\"text\":\"" + secret + "\"}");
    ok_call(s, "key", R"({"text":"ctrl+s"})");
    ok_call(s, "computer_batch",
            "{\"actions\":[{\"name\":\"type\",\"arguments\":{\"text\":\"" + secret + "\"}}]}");
    s.close_stdin();
    REQUIRE(s.wait_exit() == 0);
  }
  std::vector<std::string> files = trace_files(dir);
  REQUIRE(files.size() == 1);
  trace_file t = read_trace(files[0]);
  CHECK(t.bytes.find(secret) == std::string::npos);
  CHECK(t.bytes.find("ctrl+s") == std::string::npos);
  CHECK(boolean(t.records[0]->root, "redact_text"));
  CHECK(simdjson::minify(call_record(t, 2)->root["args"]) ==
        R"({"text":"[redacted 14 chars]"})");
  simdjson::dom::array in;
  REQUIRE(call_record(t, 2)->root["input"].get(in) == simdjson::SUCCESS);
  CHECK(in.size() >= 28);
  for (simdjson::dom::element e : in) CHECK(str(e, "keysym") == "[redacted]");
}

TEST_CASE("past CU_TRACE_MAX_BYTES a trace rotates, keeping CU_TRACE_KEEP parts each opening with a start and a key frame") {
  xvfb x(640, 480);
  x_client painter(x.display());
  xcb_window_t win = painter.create_window(50, 50, 80, 80, kGrey);
  painter.sync();
  const std::string dir = make_dir();
  {
    server_process s(x.display(), {{"CU_TRACE_DIR", dir},
                                   {"CU_TRACE_MAX_BYTES", "70000"},
                                   {"CU_TRACE_KEEP", "2"}});
    for (uint32_t i = 1; i <= 12; ++i) {
      painter.paint_noise(win, 80, 80, i);
      painter.sync();
      ok_call(s, "screenshot");
      wait_for_record(dir, settled(i));
    }
    s.close_stdin();
    REQUIRE(s.wait_exit() == 0);
  }
  std::vector<std::string> files = trace_files(dir);
  REQUIRE(files.size() == 2);
  int64_t highest_part = 0;
  for (const std::string& f : files) {
    INFO(f);
    struct stat st{};
    REQUIRE(stat(f.c_str(), &st) == 0);
    CHECK(st.st_size <= 70000);
    trace_file t = read_trace(f);
    REQUIRE(t.records.size() >= 2);
    CHECK(kind_of(*t.records[0]) == "start");
    highest_part = std::max(highest_part, num(t.records[0]->root, "part"));
    CHECK(kind_of(*t.records[1]) == "frame");
    CHECK(is_key(*t.records[1]));
    CHECK(t.partial == 0);
  }
  // Parts before the last two were deleted.
  CHECK(highest_part >= 3);
}

TEST_CASE("a SIGKILLed server leaves a trace that parses up to its last whole record") {
  xvfb x(640, 480);
  const std::string dir = make_dir();
  server_process s(x.display(), {{"CU_TRACE_DIR", dir}});
  s.expect_exit_status(std::nullopt);
  ok_call(s, "screenshot");
  ok_call(s, "left_click", R"({"coordinate":[10,10]})");
  wait_for_record(dir, "\"tool\":\"left_click\"");
  s.signal(SIGKILL);
  s.wait_exit();
  std::vector<std::string> files = trace_files(dir);
  REQUIRE(files.size() == 1);
  trace_file t = read_trace(files[0]);
  CHECK(t.partial <= 1);
  REQUIRE(t.records.size() >= 4);
  CHECK(kind_of(*t.records[0]) == "start");
  CHECK(of_kind(t, "call").size() == 2);
  CHECK(of_kind(t, "end").empty());
}

TEST_CASE("a trace directory that cannot be written leaves the server running untraced") {
  xvfb x(640, 480);
  server_process s(x.display(), {{"CU_TRACE_DIR", "/proc/no-such-dir/trace"}});
  ok_call(s, "screenshot");
  s.close_stdin();
  REQUIRE(s.wait_exit() == 0);
  CHECK(contains(s.stderr_text(), "running without a trace"));
}

TEST_CASE("back-to-back clicks each have an after frame showing what that click did, not what the next ones did") {
  xvfb x(640, 480);
  // The test's own application: it repaints its window in the next colour
  // the moment a button press reaches it, on a thread of its own, and
  // counts a repaint once the X server has drawn it.
  x_client app(x.display());
  xcb_window_t win = app.create_window(100, 100, 200, 150, kGrey);
  const uint32_t mask = XCB_EVENT_MASK_BUTTON_PRESS;
  xcb_change_window_attributes(app.connection(), win, XCB_CW_EVENT_MASK, &mask);
  app.sync();
  const std::vector<rgb> colours = {{200, 30, 30}, {30, 200, 30}, {30, 30, 200}};
  std::atomic<bool> quit{false};
  std::atomic<int> presses{0};
  std::atomic<int> painted{0};
  std::thread repainter([&] {
    pollfd p{xcb_get_file_descriptor(app.connection()), POLLIN, 0};
    while (!quit) {
      while (xcb_generic_event_t* e = xcb_poll_for_event(app.connection())) {
        if ((e->response_type & 0x7f) == XCB_BUTTON_PRESS) {
          const int k = presses++;
          app.fill(win, 0, 0, 200, 150, colours[size_t(k) % colours.size()]);
          app.sync();
          ++painted;
        }
        free(e);
      }
      // Woken by the next event; the bound only lets it see quit.
      poll(&p, 1, 50);
    }
  });
  // Joined on every way out, a failed REQUIRE's too.
  struct joiner {
    std::atomic<bool>& quit;
    std::thread& t;
    ~joiner() {
      quit = true;
      t.join();
    }
  } join_repainter{quit, repainter};
  const std::string dir = make_dir();
  {
    // A settle before each frame as servers run it (the harness's 0 would
    // take every frame at once, before the next click could come), its
    // quiet longer than any machine takes from an answer to the next
    // request, so a frame never settles before the next click.
    server_process s(x.display(), {{"CU_TRACE_DIR", dir},
                                   {"CU_SCREENSHOT_DELAY", "2"},
                                   {"CU_SETTLE_QUIET_MS", "1000"}});
    ok_call(s, "screenshot");  // seq 1
    wait_for_record(dir, settled(1));
    // As an agent does: each click sent as soon as the last one is answered,
    // once the application has repainted. A click is answered when X has
    // its press, not when the application has acted on it; sent at the
    // answer, the next click had the frame grabbed before a repaint the
    // application was a moment late with (a descheduled thread), so that
    // frame showed the colour before (1 run in 8 with the repaint 50 ms
    // late, every run at 300 ms). The wait is far shorter than the
    // settle's quiet, so each frame is still the one the next click asks for.
    for (int i = 0; i < 3; ++i) {
      ok_call(s, "left_click", R"({"coordinate":[200,175]})");
      wait_until([&] { return painted == i + 1; }, "the application's repaint");
    }
    wait_for_record(dir, settled(4));
    s.close_stdin();
    REQUIRE(s.wait_exit() == 0);
  }
  REQUIRE(presses == 3);
  std::vector<std::string> files = trace_files(dir);
  REQUIRE(files.size() == 1);
  trace_file t = read_trace(files[0]);
  for (int64_t seq = 2; seq <= 4; ++seq) {
    INFO("click " << seq - 1 << " (seq " << seq << ")");
    const int64_t n = settled_frame(t, seq);
    REQUIRE(n > 0);
    rgb_image img = frame_image(t, n);
    REQUIRE(img.width == 640);
    const rgb want = colours[size_t(seq - 2)];
    const rgb got = img.at(200, 175);
    INFO("frame " << n << " shows " << int(got[0]) << "," << int(got[1]) << "," << int(got[2]));
    CHECK(got == want);
    const json_line* s = settled_record(t, seq);
    REQUIRE(s != nullptr);
    // Taken in time, before the next click's input reached X.
    bool late = false;
    CHECK(s->root["late"].get(late) == simdjson::NO_SUCH_FIELD);
    if (seq < 4) {
      // The next click came before the quiet a settled frame waits for.
      CHECK(boolean(s->root, "settled") == false);
    } else {
      CHECK(s->root["settled"].get(late) == simdjson::NO_SUCH_FIELD);
    }
    // The click's "before" is the screen it acted on: the click before it
    // done, and this one not yet.
    const rgb was = seq == 2 ? kGrey : colours[size_t(seq - 3)];
    CHECK(frame_image(t, num(call_record(t, seq)->root, "before")).at(200, 175) == was);
  }
}
