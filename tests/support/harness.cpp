#include "support/harness.h"

#include <fcntl.h>
#include <poll.h>
#include <spng.h>
#include <jpeglib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "util/base64.h"

extern char** environ;

namespace cu::test {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string make_temp_dir() {
  char tmpl[] = "/tmp/cu-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) fail("mkdtemp failed");
  return tmpl;
}

// Waits for fd to become readable; false on timeout.
bool wait_readable(int fd, int64_t deadline) {
  for (;;) {
    int left = int(deadline - now_ms());
    if (left < 0) left = 0;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, left);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

std::string binary_path() {
  const char* p = getenv("CU_BINARY");
  if (p == nullptr || *p == '\0') fail("CU_BINARY is not set (run the tests through meson)");
  return p;
}

}  // namespace

namespace {

// Starts an X server program with args plus -displayfd; returns its pid
// once it accepts connections, with *display set to ":N". host_display,
// when not empty, is the DISPLAY the program itself runs on (Xephyr).
pid_t start_x_server(std::vector<std::string> args, std::string* display,
                     const std::string& host_display = {}) {
  int fds[2];
  if (pipe(fds) != 0) fail("pipe failed");
  args.insert(args.begin() + 1, {"-displayfd", std::to_string(fds[1])});
  const std::string program = args[0];
  pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    close(fds[0]);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    if (!host_display.empty()) setenv("DISPLAY", host_display.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(program.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  // The server writes its display number once it accepts connections.
  std::string number;
  int64_t deadline = now_ms() + 20000;
  char c;
  while (wait_readable(fds[0], deadline) && read(fds[0], &c, 1) == 1 && c != '\n') number += c;
  close(fds[0]);
  if (number.empty()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    fail(program + " did not start");
  }
  *display = ":" + number;
  return pid;
}

}  // namespace

xvfb::xvfb(int width, int height, int display_number, std::vector<std::string> extra_args) {
  std::string geometry = std::to_string(width) + "x" + std::to_string(height) + "x24";
  std::vector<std::string> args = {"Xvfb"};
  if (display_number >= 0) args.push_back(":" + std::to_string(display_number));
  for (const char* a : {"-screen", "0"}) args.push_back(a);
  args.push_back(geometry);
  for (const char* a : {"-nolisten", "tcp", "-noreset"}) args.push_back(a);
  for (auto& a : extra_args) args.push_back(std::move(a));
  pid_ = start_x_server(std::move(args), &display_);
}

xephyr::xephyr(const std::string& host_display, int width, int height) {
  std::vector<std::string> args = {"Xephyr", "-resizeable", "-screen",
                                   std::to_string(width) + "x" + std::to_string(height),
                                   "-nolisten", "tcp", "-noreset"};
  pid_ = start_x_server(std::move(args), &display_, host_display);
}

xephyr::~xephyr() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

xvfb::~xvfb() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

int unused_display_number() {
  for (int n = 200 + int(getpid() % 500);; ++n) {
    std::string sock = "/tmp/.X11-unix/X" + std::to_string(n);
    std::string lock = "/tmp/.X" + std::to_string(n) + "-lock";
    struct stat st;
    if (stat(sock.c_str(), &st) != 0 && stat(lock.c_str(), &st) != 0) return n;
  }
}

json_ptr parse_json(std::string text) {
  auto j = std::make_unique<json_line>();
  j->text = std::move(text);
  if (j->parser.parse(j->text).get(j->root) != simdjson::SUCCESS) {
    fail("not JSON: " + j->text.substr(0, 200));
  }
  return j;
}

server_process::server_process(const std::string& display,
                               std::map<std::string, std::string> extra_env,
                               const std::string& stdin_file,
                               std::vector<std::string> wrapper) {
  tmp_dir_ = make_temp_dir();
  lock_path_ = tmp_dir_ + "/lock";
  save_dir_ = tmp_dir_ + "/saved";
  stderr_path_ = tmp_dir_ + "/stderr";
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["DISPLAY"] = display;
  env["CU_LOCK_PATH"] = lock_path_;
  env["CU_SAVE_DIR"] = save_dir_;
  env["CU_SCREENSHOT_DELAY"] = "0";
  for (auto& [k, v] : extra_env) env[k] = v;
  std::vector<std::string> env_strings;
  for (auto& [k, v] : env) env_strings.push_back(k + "=" + v);

  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) fail("pipe failed");
  const bool tty = stdin_file == kStdinTty;
  std::string slave_name;
  if (tty) {
    // Swap the stdin pipe for a pseudo terminal.
    close(in_pipe[0]);
    close(in_pipe[1]);
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) fail("no pty");
    slave_name = ptsname(master);
    in_pipe[1] = master;
    in_pipe[0] = -1;
  }
  std::string binary = binary_path();
  pid_ = fork();
  if (pid_ < 0) fail("fork failed");
  if (pid_ == 0) {
    if (tty) {
      setsid();  // A session of its own, so the pty is only its stdin.
      dup2(open(slave_name.c_str(), O_RDWR | O_NOCTTY), 0);
    } else if (!stdin_file.empty()) {
      int f = open(stdin_file.c_str(), O_RDONLY);
      dup2(f, 0);
    } else {
      dup2(in_pipe[0], 0);
    }
    dup2(out_pipe[1], 1);
    int err = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(err, 2);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    if (!wrapper.empty()) {
      std::vector<char*> argv;
      for (auto& a : wrapper) argv.push_back(a.data());
      argv.push_back(binary.data());
      argv.push_back(nullptr);
      execvpe(wrapper[0].c_str(), argv.data(), envp.data());
      _exit(127);
    }
    char* argv[] = {binary.data(), nullptr};
    execve(binary.c_str(), argv, envp.data());
    _exit(127);
  }
  if (in_pipe[0] >= 0) close(in_pipe[0]);
  close(out_pipe[1]);
  in_ = in_pipe[1];
  out_ = out_pipe[0];
  if (!stdin_file.empty() && !tty) close_stdin();
}

server_process::~server_process() {
  close_stdin();
  std::optional<int> status = wait_exit(20000);
  if (!status) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (expected_status_ && std::uncaught_exceptions() == 0) {
    INFO("server stderr:\n" << stderr_text());
    CHECK(status == expected_status_);
  }
  if (out_ >= 0) close(out_);
  std::string cmd = "rm -rf '" + tmp_dir_ + "'";
  int ignored = system(cmd.c_str());
  (void)ignored;
}

void server_process::write_raw(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(in_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write to the server failed");
    done += size_t(n);
  }
}

std::optional<std::string> server_process::read_line(int timeout_ms) {
  int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (!wait_readable(out_, deadline)) return std::nullopt;
    char chunk[65536];
    ssize_t n = read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, size_t(n));
  }
}

json_ptr server_process::read_response(std::string_view id_json, int timeout_ms) {
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    simdjson::dom::element id;
    if ((*it)->root["id"].get(id) == simdjson::SUCCESS && simdjson::minify(id) == id_json) {
      json_ptr j = std::move(*it);
      kept_.erase(it);
      return j;
    }
  }
  int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    auto line = read_line(int(std::max<int64_t>(0, deadline - now_ms())));
    if (!line) return nullptr;
    json_ptr j = parse_json(std::move(*line));
    simdjson::dom::element id;
    if (j->root["id"].get(id) == simdjson::SUCCESS && simdjson::minify(id) == id_json) return j;
    kept_.push_back(std::move(j));
  }
}

json_ptr server_process::request(std::string_view method, std::string_view params_json) {
  std::string id = std::to_string(next_id_++);
  send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + std::string(method) +
       R"(","params":)" + std::string(params_json) + "}");
  json_ptr r = read_response(id);
  if (!r) fail("no response to " + std::string(method));
  return r;
}

json_ptr server_process::call_tool(std::string_view name, std::string_view arguments_json) {
  return request("tools/call", R"({"name":")" + std::string(name) + R"(","arguments":)" +
                                   std::string(arguments_json) + "}");
}

void server_process::close_stdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

std::optional<int> server_process::wait_exit(int timeout_ms) {
  if (status_) return status_;
  int64_t deadline = now_ms() + timeout_ms;
  // A pidfd becomes readable when the process exits: wait on it rather than
  // polling waitpid on a timer.
  int pidfd = int(syscall(SYS_pidfd_open, pid_, 0));
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      if (pidfd >= 0) close(pidfd);
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (now_ms() > deadline) {
      if (pidfd >= 0) close(pidfd);
      return std::nullopt;
    }
    if (pidfd >= 0) {
      wait_readable(pidfd, deadline);
    } else {
      usleep(2000);  // Kernels before 5.3 have no pidfd.
    }
  }
}

void server_process::signal(int signo) { kill(pid_, signo); }

std::string server_process::stderr_text() {
  std::ifstream f(stderr_path_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

rgb_image decode_png_base64(std::string_view b64) {
  std::vector<uint8_t> png;
  if (!base64_decode(b64, png)) fail("invalid base64");
  spng_ctx* ctx = spng_ctx_new(0);
  spng_set_png_buffer(ctx, png.data(), png.size());
  spng_ihdr ihdr;
  size_t size = 0;
  rgb_image img;
  if (spng_get_ihdr(ctx, &ihdr) != 0 || spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &size) != 0) {
    spng_ctx_free(ctx);
    fail("invalid PNG");
  }
  img.width = int(ihdr.width);
  img.height = int(ihdr.height);
  img.pixels.resize(size);
  int rc = spng_decode_image(ctx, img.pixels.data(), size, SPNG_FMT_RGB8, 0);
  spng_ctx_free(ctx);
  if (rc != 0) fail(std::string("PNG decode failed: ") + spng_strerror(rc));
  return img;
}

rgb_image decode_jpeg_base64(std::string_view b64) {
  std::vector<uint8_t> jpeg;
  if (!base64_decode(b64, jpeg)) fail("invalid base64");
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  // libjpeg's default error handler exits the process: a failed decode is
  // a failed test either way, with libjpeg's message on stderr.
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, jpeg.data(), jpeg.size());
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  rgb_image img;
  img.width = int(cinfo.output_width);
  img.height = int(cinfo.output_height);
  img.pixels.resize(size_t(img.width) * size_t(img.height) * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = &img.pixels[size_t(cinfo.output_scanline) * size_t(img.width) * 3];
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  const long warnings = err.num_warnings;
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  if (warnings != 0) fail("corrupt JPEG (" + std::to_string(warnings) + " decoder warnings)");
  return img;
}

rgb_image image_of(const json_line& r) {
  simdjson::dom::element block;
  std::string_view type, data, mime;
  if (r.root["result"]["content"].at(0).get(block) != simdjson::SUCCESS ||
      block["type"].get(type) != simdjson::SUCCESS || type != "image" ||
      block["data"].get(data) != simdjson::SUCCESS ||
      block["mimeType"].get(mime) != simdjson::SUCCESS) {
    fail("not an image result: " + r.text.substr(0, 300));
  }
  if (mime == "image/jpeg") return decode_jpeg_base64(data);
  if (mime != "image/png") fail("unexpected mimeType " + std::string(mime));
  return decode_png_base64(data);
}

std::string text_of(const json_line& r, size_t i) {
  std::string_view t;
  if (r.root["result"]["content"].at(i)["text"].get(t) != simdjson::SUCCESS) return {};
  return std::string(t);
}

bool is_error(const json_line& r) {
  bool e = false;
  return r.root["result"]["isError"].get(e) == simdjson::SUCCESS && e;
}

x_client::x_client(const std::string& display) {
  int screen_number = 0;
  conn_ = xcb_connect(display.c_str(), &screen_number);
  if (xcb_connection_has_error(conn_)) fail("cannot connect to " + display);
  auto it = xcb_setup_roots_iterator(xcb_get_setup(conn_));
  for (int i = 0; i < screen_number; ++i) xcb_screen_next(&it);
  screen_ = it.data;
  gc_ = xcb_generate_id(conn_);
  xcb_create_gc(conn_, gc_, screen_->root, 0, nullptr);
}

x_client::~x_client() { xcb_disconnect(conn_); }

uint32_t x_client::pixel(rgb c) const {
  // Xvfb's default 24-bit TrueColor visual: 0xRRGGBB.
  return uint32_t(c[0]) << 16 | uint32_t(c[1]) << 8 | c[2];
}

xcb_window_t x_client::create_window(int x, int y, int w, int h, rgb background) {
  xcb_window_t win = xcb_generate_id(conn_);
  uint32_t values[] = {pixel(background), 1};
  xcb_create_window(conn_, XCB_COPY_FROM_PARENT, win, screen_->root, int16_t(x), int16_t(y),
                    uint16_t(w), uint16_t(h), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                    screen_->root_visual, XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT, values);
  xcb_map_window(conn_, win);
  sync();
  return win;
}

xcb_window_t x_client::create_app_window(int x, int y, int w, int h, rgb background) {
  xcb_window_t win = xcb_generate_id(conn_);
  uint32_t values[] = {pixel(background)};
  xcb_create_window(conn_, XCB_COPY_FROM_PARENT, win, screen_->root, int16_t(x), int16_t(y),
                    uint16_t(w), uint16_t(h), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                    screen_->root_visual, XCB_CW_BACK_PIXEL, values);
  const char cls[] = "cu-test\0CuTest";
  xcb_change_property(conn_, XCB_PROP_MODE_REPLACE, win, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8,
                      sizeof cls, cls);
  xcb_map_window(conn_, win);
  sync();
  return win;
}

void x_client::fill(xcb_window_t w, int x, int y, int width, int height, rgb colour) {
  uint32_t fg = pixel(colour);
  xcb_change_gc(conn_, gc_, XCB_GC_FOREGROUND, &fg);
  xcb_rectangle_t r{int16_t(x), int16_t(y), uint16_t(width), uint16_t(height)};
  xcb_poly_fill_rectangle(conn_, w, gc_, 1, &r);
}

void x_client::paint_noise(xcb_window_t w, int width, int height, uint32_t seed) {
  // Rows in bands small enough for one PutImage without BIG-REQUESTS.
  const int band = std::max(1, 60000 / std::max(1, width));
  std::vector<uint32_t> pixels;
  uint32_t state = seed * 2654435761u + 1;
  for (int y0 = 0; y0 < height; y0 += band) {
    int rows = std::min(band, height - y0);
    pixels.resize(size_t(width) * size_t(rows));
    for (uint32_t& p : pixels) {
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      p = state & 0xffffff;
    }
    xcb_put_image(conn_, XCB_IMAGE_FORMAT_Z_PIXMAP, w, gc_, uint16_t(width), uint16_t(rows), 0,
                  int16_t(y0), 0, screen_->root_depth, uint32_t(pixels.size() * 4),
                  reinterpret_cast<const uint8_t*>(pixels.data()));
  }
  sync();
}

uint32_t next_block_value(uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return state >> 8;
}

uint32_t x_client::paint_blocks(xcb_window_t win, int w, int h, uint32_t seed) {
  uint32_t state = seed * 2654435761u + 1;
  auto next = [&] { return next_block_value(state); };
  for (int i = 0; i < 24; ++i) {
    const int bw = 10 + int(next() % 60), bh = 8 + int(next() % 40);
    const int bx = int(next() % uint32_t(w - bw)), by = int(next() % uint32_t(h - bh));
    fill(win, bx, by, bw, bh, rgb{uint8_t(next() % 256), uint8_t(next() % 256), uint8_t(next() % 256)});
  }
  return state;
}

void x_client::sync() {
  free(xcb_get_input_focus_reply(conn_, xcb_get_input_focus(conn_), nullptr));
}

memory_kib process_memory(pid_t pid) {
  memory_kib m;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) m.rss = std::stoll(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) m.peak = std::stoll(line.substr(6));
  }
  return m;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool child_running(pid_t& pid) {
  if (pid <= 0) return false;
  int st;
  if (waitpid(pid, &st, WNOHANG) == pid) {
    pid = -1;
    return false;
  }
  return true;
}

std::vector<int64_t> int_array(const std::string& json_text) {
  json_ptr j = parse_json(json_text);
  std::vector<int64_t> out;
  simdjson::dom::array a;
  if (j->root.get(a) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element e : a) {
    int64_t v;
    if (e.get(v) != simdjson::SUCCESS) return {};
    out.push_back(v);
  }
  return out;
}

}  // namespace cu::test
