// open_application as a desktop-thread operation: focus the window that
// matches, or start the program and wait for its window to appear (or for
// it to exit first, which ends the wait at once).
#include <sys/wait.h>
#include <xcb/xcb.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>

#include "core/json_writer.h"

#include "desktop/activation.h"
#include "desktop/app_lookup.h"
#include "desktop/desktop_op.h"
#include "desktop/spawn.h"
#include "util/ascii.h"
#include "util/str_cat.h"
#include "x11/windows.h"

namespace cu {
namespace {

using namespace std::chrono_literals;

// How long a launched program has to show a window.
constexpr auto kLaunchPatience = 10s;
// While waiting for a launched program's window, look again this often
// even without an event (a window may get its WM_CLASS after mapping), and
// ask whether the program has exited.
constexpr auto kRescan = 100ms;
// A program that exits with status 0 before showing a window may have
// handed over to another process (a launcher script that backgrounds the
// real program, a single-instance application passing the request to the
// copy that runs): its window may still come, found by name, for this long.
// With StartupWMClass the entry says which window to expect, and the whole
// kLaunchPatience applies.
constexpr auto kHandOverPatience = 2s;

// "exited with status 1", "was killed by signal 9".
std::string exit_text(int status) {
  if (WIFEXITED(status)) return str_cat("exited with status ", std::to_string(WEXITSTATUS(status)));
  if (WIFSIGNALED(status)) {
    return str_cat("was killed by signal ", std::to_string(WTERMSIG(status)));
  }
  return str_cat("ended (wait status ", std::to_string(status), ")");
}

// The note for desktop entries that matched but could not be started: each
// by its path and why, so that a broken entry is not mistaken for a missing
// one.
std::string rejected_text(const std::string& app, const std::vector<rejected_entry>& rejected) {
  std::string text = str_cat("no window matches \"", app,
                             "\" and no executable of that name is on PATH; nothing was started, "
                             "as ",
                             rejected.size() == 1 ? "the desktop entry of that name was"
                                                  : "the desktop entries of that name were",
                             " rejected: ");
  for (size_t i = 0; i < rejected.size(); ++i) {
    text += str_cat(i == 0 ? "" : "; ", rejected[i].file, " (", rejected[i].why, ")");
  }
  return text;
}

class open_application final : public desktop_op {
 public:
  open_application(std::string app, view_ptr view) : app_(std::move(app)), view_(std::move(view)) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    auto windows = list_client_windows(d.conn, *d.atoms, d.root);
    withhold_titles(d, view_, windows);
    if (auto w = match_window(windows, app_)) return activate(d, *w);
    const launch_env env = launch_env::from_environment();
    std::vector<rejected_entry> rejected;
    auto spec = find_launchable(app_, env, &rejected);
    if (!spec && rejected.empty()) {
      return answer(false, str_cat("no window matches \"", app_,
                                   "\" and no executable or desktop entry of that name was found"));
    }
    // Entries that exist but cannot run are an error, as an entry whose
    // Terminal= or Path= cannot be honoured is below: the entry needs fixing.
    if (!spec) return desktop_result{tool_result::failure(rejected_text(app_, rejected)), {}};
    auto command = prepare_launch(*spec, env);
    if (!command) return desktop_result{tool_result::failure(command.err()), {}};
    // What it runs as, where that can be known before it runs: a denied
    // program is not started under another name.
    if (view_) {
      for (const launch_name& n : launch_names(*spec, *command)) {
        if (!view_->name_denied(n.name)) continue;
        return desktop_result{
            tool_result::failure(str_cat(
                "open_application \"", app_, "\" was refused: ", n.what, " is \"", n.name,
                "\", an application the operator keeps from the agent (CU_DENY_APPS); no grant "
                "lifts that, and nothing was started")),
            {}};
      }
    }
    auto program = spawn_watched(command->argv, spawn_options{command->working_dir});
    if (!program) return desktop_result{tool_result::failure(program.err()), {}};
    program_ = std::move(*program);
    pid_ = program_.pid();
    launched_ = true;
    in_terminal_ = !command->terminal.empty();
    program_path_ = command->argv.front();
    startup_wm_class_ = spec->startup_wm_class;
    for (const window_info& w : windows) there_before_.push_back(w.id);
    give_up_ = desktop_clock::now() + kLaunchPatience;
    wake_at = desktop_clock::now() + kRescan;
    return std::nullopt;
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    uint8_t type = event_type(ev);
    if (activation_.waiting()) {
      if (auto done = activation_.on_event(d, ev)) return answer(done->focused, done->note);
      return std::nullopt;
    }
    if (launched_ && (type == XCB_MAP_NOTIFY || type == XCB_PROPERTY_NOTIFY)) return look(d);
    return std::nullopt;
  }

  std::optional<desktop_result> on_wake(desktop_context& d) override {
    if (activation_.waiting()) {
      auto done = activation_.on_wake(d);
      return answer(done.focused, done.note);
    }
    if (auto r = look(d)) return r;
    const auto now = desktop_clock::now();
    if (!exit_status_) {
      exit_status_ = program_.exit_status();
      if (exit_status_) {
        if (*exit_status_ != 0) return exited_answer();
        if (startup_wm_class_.empty()) give_up_ = std::min(give_up_, now + kHandOverPatience);
        // A hand-over may have gone to a copy already running: its window,
        // there before the launch, now counts too. Look again at once.
        if (auto r = look(d)) return r;
      }
    }
    if (now >= give_up_) {
      if (exit_status_) return exited_answer();
      return answer(false, str_cat("started pid ", std::to_string(pid_),
                                   " but no window of it appeared within ",
                                   seconds_text(kLaunchPatience), " s"));
    }
    wake_at = now + kRescan;
    return std::nullopt;
  }

 private:
  // The program ended before any window of it was found.
  desktop_result exited_answer() {
    std::string note = str_cat("started ", program_path_, " (pid ", std::to_string(pid_),
                               ") but it ", exit_text(*exit_status_),
                               " before any window of it appeared");
    if (*exit_status_ != 0 && !in_terminal_) {
      // The usual cause: a terminal program (an editor, a shell tool) run
      // with /dev/null for a terminal gives up at once.
      note += "; if it needs a terminal, start it through a desktop entry with Terminal=true "
              "or inside a terminal emulator";
    }
    return answer(false, note);
  }

  // A launched program's window: the one carrying its pid, else (with
  // StartupWMClass) a new one of that WM_CLASS, or after a clean exit an
  // older one, else the one its name matches; only once it is viewable.
  // Within each kind the topmost wins.
  std::optional<desktop_result> look(desktop_context& d) {
    auto windows = list_client_windows(d.conn, *d.atoms, d.root);
    withhold_titles(d, view_, windows);
    std::optional<window_info> found;
    for (const window_info& w : windows) {
      if (w.pid == uint32_t(pid_) && w.viewable) found = w;
    }
    if (!found && !startup_wm_class_.empty()) {
      std::optional<window_info> newer, older;
      for (const window_info& w : windows) {
        if (!w.viewable ||
            !(iequals(w.instance, startup_wm_class_) || iequals(w.cls, startup_wm_class_))) {
          continue;
        }
        bool old = std::find(there_before_.begin(), there_before_.end(), w.id) !=
                   there_before_.end();
        (old ? older : newer) = w;
      }
      found = newer;
      if (!found && exit_status_ == 0) found = older;
    }
    if (!found) {
      found = match_window(windows, app_);
      if (found && !found->viewable) found.reset();
    }
    if (!found) return std::nullopt;
    return activate(d, *found);
  }

  std::optional<desktop_result> activate(desktop_context& d, const window_info& w) {
    // A name can match a window of another application (by its title), and
    // a launched program can show one: the grants judge the window itself.
    const std::string doing = str_cat("open_application \"", app_, "\"");
    if (auto refused = refuse_window(d, view_, w.id, doing)) {
      if (launched_ && !refused->result.content.empty()) {
        const bool ours =
            w.pid == uint32_t(pid_) ||
            std::find(there_before_.begin(), there_before_.end(), w.id) == there_before_.end();
        if (ours && program_.pid() > 0 && !program_.exit_status()) {
          // The program started is the application the grants refuse (a
          // wrapper such as uxterm that runs a denied xterm): it is ended,
          // with everything in its process group (it has a session of its
          // own), not left running where the agent cannot see it.
          ::kill(-pid_, SIGKILL);
          ::kill(pid_, SIGKILL);
          program_.release();
          refused->result.content.front().text += str_cat(
              " (the program was started, pid ", std::to_string(pid_),
              ", and showed this window, so it was ended with its process group)");
        } else {
          refused->result.content.front().text += str_cat(
              " (the program was started, pid ", std::to_string(pid_),
              "; its window was not focused)");
        }
      }
      return refused;
    }
    target_ = w.id;
    auto done = activation_.start(d, w, wake_at);
    if (done) return answer(done->focused, done->note);
    return std::nullopt;
  }

  desktop_result answer(bool focused, const std::string& note = {}) {
    std::string out;
    json_writer j(out);
    j.begin_object().key("app").string(app_).key("focused").boolean(focused);
    if (!activation_.via().empty()) j.key("via").string(activation_.via());
    if (!note.empty()) j.key("note").string(note);
    j.key("launched").boolean(launched_);
    if (target_ != XCB_NONE) j.key("window").string(window_id_text(target_));
    if (launched_) j.key("pid").number(int64_t(pid_));
    j.end_object();
    return desktop_result{tool_result::json(std::move(out)), {}};
  }

  std::string app_;
  view_ptr view_;
  bool launched_ = false;
  pid_t pid_ = 0;
  // The watch on the launched program; released when the operation ends.
  launched_program program_;
  std::optional<int> exit_status_;  // Once it has exited.
  bool in_terminal_ = false;        // It runs inside a terminal emulator.
  std::string program_path_;        // What was executed (the emulator, if any).
  std::string startup_wm_class_;    // From its desktop entry.
  std::vector<xcb_window_t> there_before_;  // Client windows before the launch.
  desktop_clock::time_point give_up_;
  xcb_window_t target_ = XCB_NONE;  // The window chosen.
  window_activation activation_;
};

}  // namespace

std::unique_ptr<desktop_op> make_open_application(std::string app, view_ptr view) {
  return std::make_unique<open_application>(std::move(app), std::move(view));
}

}  // namespace cu
