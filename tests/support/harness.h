// Owns: what the X11 suite needs to drive the real server: a private Xvfb,
// the server binary as a child process on pipes, JSON parsing of its lines,
// PNG decoding of its images, and an X client that paints test windows.
// Thread affinity: the test thread.
#pragma once

#include <simdjson.h>
#include <sys/types.h>
#include <xcb/xcb.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cu::test {

// Whether the binaries were built with AddressSanitizer (the tests are
// built with the server's flags): its figures of time and memory include
// the sanitizer's own work (slow unwinding on malloc, the quarantine, the
// leak scan at exit).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// A private Xvfb. With display_number < 0 it picks a free one itself
// (-displayfd); either way the constructor returns once the server accepts
// connections.
class xvfb {
 public:
  explicit xvfb(int width = 1920, int height = 1080, int display_number = -1,
                std::vector<std::string> extra_args = {});
  ~xvfb();
  xvfb(const xvfb&) = delete;
  xvfb& operator=(const xvfb&) = delete;

  const std::string& display() const { return display_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
};

// A nested X server (Xephyr) in a window on host_display. Unlike Xvfb, its
// screen can be resized at run time (xrandr -s WxH, up to 1600x1200).
class xephyr {
 public:
  xephyr(const std::string& host_display, int width, int height);
  ~xephyr();
  xephyr(const xephyr&) = delete;
  xephyr& operator=(const xephyr&) = delete;

  const std::string& display() const { return display_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
};

// A display number with no X server behind it (no socket, no lock file).
int unused_display_number();

// Milliseconds on the steady clock, for deadlines.
int64_t now_ms();

// Whether the child pid is still running; once it has exited it is reaped
// and pid becomes -1. False for a pid of -1.
bool child_running(pid_t& pid);

// A process's memory from /proc/PID/status, in KiB: its resident set now
// (VmRSS) and at its peak (VmHWM); 0 when unreadable.
struct memory_kib {
  int64_t rss = 0;
  int64_t peak = 0;
};
memory_kib process_memory(pid_t pid);

// A JSON array of integers ("[12, 34]"); empty when it is not one.
std::vector<int64_t> int_array(const std::string& json_text);

// A parsed JSON line; the element stays valid as long as this object lives.
struct json_line {
  std::string text;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
};
using json_ptr = std::unique_ptr<json_line>;
json_ptr parse_json(std::string text);

// The server binary running on pipes. Environment: the test's own, plus
// DISPLAY, a private CU_LOCK_PATH and CU_SAVE_DIR, CU_SCREENSHOT_DELAY=0 and
// whatever extra_env adds or overrides.
class server_process {
 public:
  // When it goes out of scope it closes stdin and checks that the server
  // exits with the expected status (so a crash, a sanitizer report or a hang
  // at shutdown fails the test that caused it).
  //
  // A non-empty wrapper runs the server under another program: the process
  // started is wrapper[0] (searched in PATH) with the rest of wrapper and
  // then the server binary as its arguments, e.g. {"strace", "-f", "-o",
  // LOG}. pid() is then the wrapper's.
  explicit server_process(const std::string& display,
                          std::map<std::string, std::string> extra_env = {},
                          const std::string& stdin_file = {},
                          std::vector<std::string> wrapper = {});

  // Special stdin: TTY gives the server the slave side of a new pseudo
  // terminal (write_raw and send then type into its master).
  static constexpr const char* kStdinTty = "<tty>";
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  // Writes bytes as they are (no newline added).
  void write_raw(std::string_view bytes);
  // Writes one line (a newline is added).
  void send(std::string_view line) { write_raw(std::string(line) + "\n"); }

  // The next line from stdout, or nothing after timeout_ms or EOF.
  std::optional<std::string> read_line(int timeout_ms = 20000);

  // Sends a request with the next id and returns its response; responses to
  // other ids that arrive first are kept for read_response.
  json_ptr request(std::string_view method, std::string_view params_json = "{}");
  json_ptr call_tool(std::string_view name, std::string_view arguments_json = "{}");
  // The response with this id (from the kept ones or the pipe), or null.
  json_ptr read_response(std::string_view id_json, int timeout_ms = 20000);

  void close_stdin();
  // The exit status the destructor insists on after closing stdin (0 unless
  // told otherwise); nothing means the test does not care.
  void expect_exit_status(std::optional<int> status) { expected_status_ = status; }
  // The exit status once the process has ended, or nothing after timeout_ms.
  std::optional<int> wait_exit(int timeout_ms = 20000);
  void signal(int signo);

  pid_t pid() const { return pid_; }
  const std::string& lock_path() const { return lock_path_; }
  const std::string& save_dir() const { return save_dir_; }
  // Everything the server wrote to stderr so far (read after it exits).
  std::string stderr_text();

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string tmp_dir_, lock_path_, save_dir_, stderr_path_;
  std::string buffer_;
  std::vector<json_ptr> kept_;
  int next_id_ = 1000;
  std::optional<int> status_;
  std::optional<int> expected_status_ = 0;
};

struct rgb_image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // RGB, row-major.
  std::array<uint8_t, 3> at(int x, int y) const {
    const uint8_t* p = &pixels[(size_t(y) * size_t(width) + size_t(x)) * 3];
    return {p[0], p[1], p[2]};
  }
};

// Decodes a base64 PNG (as the server sends it) to RGB; throws on failure.
rgb_image decode_png_base64(std::string_view b64);

// Decodes a base64 JPEG to RGB; throws on failure (a corrupt stream too).
rgb_image decode_jpeg_base64(std::string_view b64);

// The image of a tools/call response's first content block, PNG or JPEG
// by its mimeType; throws when the result is not an image.
rgb_image image_of(const json_line& response);

// The text of content block i of a tools/call response ("" if absent).
std::string text_of(const json_line& response, size_t i = 0);
bool is_error(const json_line& response);

using rgb = std::array<uint8_t, 3>;

// The sequence paint_blocks draws from: advances state, returns the next value.
uint32_t next_block_value(uint32_t& state);

// An X client for painting known pixels.
class x_client {
 public:
  explicit x_client(const std::string& display);
  ~x_client();
  x_client(const x_client&) = delete;
  x_client& operator=(const x_client&) = delete;

  // An override-redirect window, mapped, filled with background.
  xcb_window_t create_window(int x, int y, int w, int h, rgb background);
  // An application's window (not override-redirect, with WM_CLASS), mapped
  // and, without a window manager, viewable; filled with background. Only
  // such windows are window ids the server's tools take.
  xcb_window_t create_app_window(int x, int y, int w, int h, rgb background);
  void fill(xcb_window_t w, int x, int y, int width, int height, rgb colour);
  // Paints pseudo-random pixels (from seed) over the window's area: a screen
  // that compresses as badly as a photograph, or worse.
  void paint_noise(xcb_window_t w, int width, int height, uint32_t seed);
  // Paints 24 blocks of pseudo-random sizes, places and colours (from
  // seed) inside a w x h window: edges and flat areas, as a user interface
  // has, the same for the same seed. Returns the generator's state, for a
  // caller that paints more from the same sequence (next_block_value).
  uint32_t paint_blocks(xcb_window_t win, int w, int h, uint32_t seed);
  // Waits for the X server to have processed everything sent so far.
  void sync();

  xcb_connection_t* connection() const { return conn_; }
  xcb_screen_t* screen() const { return screen_; }

 private:
  uint32_t pixel(rgb c) const;
  xcb_connection_t* conn_ = nullptr;
  xcb_screen_t* screen_ = nullptr;
  xcb_gcontext_t gc_ = 0;
};

}  // namespace cu::test
