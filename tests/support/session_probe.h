// Owns: what the session tests (grants, clipboard, open_application,
// switch_display, what the server executes) observe the server with: other
// programs run to completion or kept in the background on the test display,
// an X connection that reads the input focus, selection owners and window
// properties, a CLIPBOARD owner that never answers, an xterm whose top-level
// window is known, and processes found through /proc.
// Thread affinity: the test thread.
#pragma once

#include <sys/types.h>
#include <xcb/xcb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cu::test {

// What a program run to completion left behind.
struct run_result {
  std::optional<int> status;  // Exit status (128 + signal); nothing when it was killed on timeout.
  std::string out;            // Everything it wrote to stdout, byte for byte.
  std::string err;
};

// Runs argv (argv[0] searched in PATH) with DISPLAY set to display, its
// stdin fed from stdin_data, and returns once it has exited; after
// timeout_ms it is killed and status is empty.
run_result run_program(const std::vector<std::string>& argv, const std::string& display,
                       std::string_view stdin_data = {}, int timeout_ms = 30000);

// A program left running in the background on the display (stdin fed from
// stdin_data, stdout and stderr to a log). The destructor kills and reaps it.
class background_program {
 public:
  background_program(const std::vector<std::string>& argv, const std::string& display,
                     std::string_view stdin_data = {});
  ~background_program();
  background_program(const background_program&) = delete;
  background_program& operator=(const background_program&) = delete;

  pid_t pid() const { return pid_; }
  // False once it has exited (and then it is reaped).
  bool running();
  // What it wrote to stdout and stderr so far.
  std::string log() const;
  // The directory it runs in, private to it.
  const std::string& dir() const { return dir_; }

 private:
  pid_t pid_ = -1;
  std::string dir_;
};

// An X connection of the test's own for looking at windows, the focus and
// selections. Every query is a round trip, so it sees everything other
// clients' requests did before it was sent, as far as the X server has
// processed them.
class x_observer {
 public:
  explicit x_observer(const std::string& display);
  ~x_observer();
  x_observer(const x_observer&) = delete;
  x_observer& operator=(const x_observer&) = delete;

  xcb_connection_t* connection() const { return conn_; }
  xcb_window_t root() const { return root_; }
  void sync();
  xcb_atom_t atom(std::string_view name);

  xcb_window_t input_focus();
  // SetInputFocus (revert to PointerRoot) and a round trip.
  void set_input_focus(xcb_window_t w);
  xcb_window_t selection_owner(std::string_view selection);
  // Polls until the owner of the selection is neither None nor not_this;
  // returns None after timeout_ms.
  xcb_window_t wait_selection_owner_other_than(std::string_view selection, xcb_window_t not_this,
                                               int timeout_ms = 10000);

  // The children of the root window, bottom to top.
  std::vector<xcb_window_t> top_levels();
  // The ancestor of w that is a child of the root (w itself when it is one).
  xcb_window_t top_level_of(xcb_window_t w);
  bool viewable(xcb_window_t w);
  // WM_CLASS as {instance, class}, or nothing when unset.
  std::optional<std::pair<std::string, std::string>> wm_class(xcb_window_t w);
  // _NET_WM_NAME, or WM_NAME when that is unset.
  std::string title(xcb_window_t w);
  std::optional<uint32_t> net_wm_pid(xcb_window_t w);
  // The first window a WINDOW-typed property names (_NET_ACTIVE_WINDOW,
  // _NET_SUPPORTING_WM_CHECK), or None.
  xcb_window_t window_property(xcb_window_t w, std::string_view name);
  // Top-level windows whose WM_CLASS class part is exactly cls.
  std::vector<xcb_window_t> windows_with_class(std::string_view cls);
  // The 32-bit values of a property (CARDINAL or WINDOW), at most 256.
  std::vector<uint32_t> cardinals(xcb_window_t w, std::string_view prop);
  // The viewable window whose title is this, among the root's children and
  // theirs (a reparenting manager puts a client inside its frame); None
  // when there is none.
  xcb_window_t client_named(const std::string& title);

 private:
  std::optional<std::string> property(xcb_window_t w, xcb_atom_t prop, xcb_atom_t type);

  xcb_connection_t* conn_ = nullptr;
  xcb_window_t root_ = 0;
  std::map<std::string, xcb_atom_t, std::less<>> atoms_;
};

// A client that owns CLIPBOARD and never reads its events, so every
// SelectionRequest sent to it goes unanswered.
class silent_clipboard_owner {
 public:
  explicit silent_clipboard_owner(const std::string& display);
  ~silent_clipboard_owner();
  silent_clipboard_owner(const silent_clipboard_owner&) = delete;
  silent_clipboard_owner& operator=(const silent_clipboard_owner&) = delete;

  xcb_window_t window() const { return window_; }

 private:
  xcb_connection_t* conn_ = nullptr;
  xcb_window_t window_ = 0;
};

// An xterm (optionally with a title given by -T) running a shell that only
// waits; the constructor returns once its top-level window is viewable.
class xterm_window {
 public:
  explicit xterm_window(const std::string& display, const std::string& title = {}, int x = 0,
                        int y = 0);
  ~xterm_window();
  xterm_window(const xterm_window&) = delete;
  xterm_window& operator=(const xterm_window&) = delete;

  // The shell window, child of the root, that carries WM_CLASS (WINDOWID is
  // the VT100 widget inside it).
  xcb_window_t top_level() const { return top_level_; }
  pid_t pid() const { return program_->pid(); }

 private:
  std::optional<background_program> program_;
  xcb_window_t top_level_ = 0;
};

// Processes whose /proc/<pid>/comm is comm and whose environment has DISPLAY
// set to display (or display followed by a screen number).
std::vector<pid_t> processes_on_display(std::string_view comm, const std::string& display);

// Whether the process no longer exists or is a zombie.
bool process_gone(pid_t pid);

// SIGKILLs each process and polls until all are gone; false after timeout_ms.
bool kill_and_wait_gone(const std::vector<pid_t>& pids, int timeout_ms = 5000);

// Kills, at the end of a scope, every process named comm that runs on the
// display: what the server launched outlives it otherwise.
class launched_reaper {
 public:
  launched_reaper(std::string comm, std::string display)
      : comm_(std::move(comm)), display_(std::move(display)) {}
  ~launched_reaper() { kill_and_wait_gone(processes_on_display(comm_, display_)); }
  launched_reaper(const launched_reaper&) = delete;
  launched_reaper& operator=(const launched_reaper&) = delete;

 private:
  std::string comm_, display_;
};

// A readable note on where two long strings first differ ("" when equal).
std::string first_difference(std::string_view got, std::string_view want);

}  // namespace cu::test
