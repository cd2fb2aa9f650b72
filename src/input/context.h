// Owns: everything the input actor touches: its X connection, the keyboard
// layout and the keycodes it borrows for keysyms the layout lacks, every key
// and button this server holds (reference-counted, so a click's "shift"
// inside a hold_key of shift leaves it down), and the guard that learns of
// each press. Tools compose gestures from these primitives.
// Thread affinity: the input actor thread only.
#pragma once

#include <sys/types.h>
#include <xcb/xcb.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/geometry.h"
#include "core/grant_policy.h"
#include "core/input_event.h"
#include "input/guard.h"
#include "input/keys.h"
#include "util/result.h"
#include "x11/connection.h"
#include "core/generation.h"
#include "x11/keymap.h"

struct xkb_context;

namespace cu {

class app_identifier;

using clock_type = std::chrono::steady_clock;

class input_context {
 public:
  // marker: the pressed-input marker beside the lock (input/marker.h;
  // empty: none). A dead server's marker found here is what makes the
  // first connection release what the display's XTest devices hold.
  input_context(std::string display, input_guard guard, double type_delay_ms,
                server_generation& generation, std::string marker = {});
  ~input_context();
  input_context(const input_context&) = delete;
  input_context& operator=(const input_context&) = delete;

  // Called before every job: checks that the X server is still at the
  // other end of the connection (reading is how a closed socket shows), and
  // connects anew when it is not, or when there was no connection. The
  // first connection releases whatever XTest input is left down on the
  // display when, and only when, a previous server died leaving its
  // pressed-input marker (a stranded button from a predecessor killed with
  // its guard); otherwise what is down is someone else's, a person's
  // through VNC say, and stays down. A connection is never replaced in the
  // middle of a job: what the job sent before would have gone to a server
  // that is gone, and its answer must say so. Forgets what others held
  // (see held_elsewhere).
  status begin_job();

  // The connection, or an error naming the display once it has failed.
  result<xcb_connection_t*> connection();

  // Whether the X server is still there (see begin_job); when it is not,
  // the connection and all held state are dropped, and nothing reconnects.
  // Events that say the keymap changed (the only ones selected) are noted.
  bool still_connected();
  // The same, with a round trip: when the desktop thread has seen the
  // server go away, it may not have closed this connection yet, and the
  // reply (or the closed socket) settles it.
  bool confirm_connected();

  // Whether button b was down when the connection to the X server was lost
  // (and so went with it); cleared by the next press of b.
  bool button_lost(uint8_t b) const { return (lost_buttons_ >> b) & 1; }

  // Waits until the deadline while the actor keeps serving due timers and
  // cancellations; false when the running job should stop (it was
  // cancelled, or the server is stopping). Set by the actor.
  std::function<bool(clock_type::time_point)> wait_until;
  bool pause_ms(double ms);
  // The flight recorder's sink (empty: none): told of every move, button
  // and key sent, with event_seq, the call of the job running (the actor
  // sets it). Called on this thread; it must not block.
  std::function<void(const input_event&)> on_event;
  // The flight recorder's hook (empty: none): called before each event
  // goes to X, so a frame still pending of the screen after the
  // last answer is taken before this input changes it. It may wait, for a
  // bounded time (recorder::before_input).
  std::function<void()> before_event;
  uint64_t event_seq = 0;
  // What the agent may touch (docs/grants.md); null: everything.
  const grant_policy* grants = nullptr;

  // The grants' checks, made right before input goes out (after pacing),
  // with the current view and what X shows now: empty when the grants let
  // it through, else a refused error saying what was refused, which
  // application and how to grant it. doing names the input ("the click").
  // At a root point: the application whose window a press there reaches.
  status allowed_at(point p, std::string_view doing);
  // Keys: the application holding the keyboard focus.
  status allowed_keys(std::string_view doing);
  // Judges keys about to go down (adding: their keysyms), at the moment
  // they would, against everything this server has down with them
  // (a hold_key's keys included): a chord that reaches the X server itself
  // (is_server_chord) in any mode; enforcing without the systemKeyCombos
  // grant, a system key combo (is_system_combo); and, when doing is not
  // empty, the application holding the keyboard focus now (allowed_keys).
  // press_chord and type call it before every key they press, so a focus
  // that moves to a window not allowed in the middle of a call stops the
  // call there. Empty doing: a click's or scroll's modifiers, which go
  // with the pointer and are judged at its point.
  status judge_keys(const std::vector<keysym_t>& adding, std::string_view doing);

  // Holds the X server (GrabServer on this connection) while a pointer
  // gesture judges its point and presses, so no window can map, move or
  // change its name between the judgement and the press; released when
  // the returned guard ends. Nothing is grabbed when the grants' view does
  // not filter.
  class server_hold {
   public:
    server_hold(xcb_connection_t* c, bool* held) : c_(c), held_(held) {}
    server_hold(server_hold&& o) noexcept
        : c_(std::exchange(o.c_, nullptr)), held_(o.held_) {}
    server_hold& operator=(server_hold&&) = delete;
    ~server_hold();

   private:
    xcb_connection_t* c_;
    bool* held_;
  };
  server_hold hold_server();
  double type_delay_ms() const { return type_delay_ms_; }

  // Pacing (docs/input.md, "Pacing"): input that follows other input waits
  // until the application has taken it, which shows as the screen going
  // quiet. quiet_ms 0 turns pacing off.
  struct pacing {
    // CU_PACE_QUIET_MS: this long after the input, and after the last
    // change the screen showed since.
    double quiet_ms = 0;
    // CU_PACE_TEXT_MS: after typed text, at least this long after the
    // input: applications act on text after timers of their own (GTK's
    // file chooser looks the typed path up 150 ms after the last change;
    // completions and search boxes debounce alike) and draw nothing
    // meanwhile.
    double text_quiet_ms = 0;
    double max_ms = 0;    // CU_PACE_MAX_MS: and never longer than this after it.
    // When the screen last changed (X DAMAGE); nothing when unknown, and
    // then only the window after the input is waited.
    std::function<std::optional<clock_type::time_point>()> screen_changed_at;
  };
  void set_pacing(pacing p) { pacing_ = std::move(p); }
  // Input went out now (the end of a job, a wheel click): the next one paces.
  void note_input() {
    last_input_ = clock_type::now();
    last_was_text_ = text_since_note_;
    text_since_note_ = false;
  }
  // Waits until quiet_ms after the last input (text_quiet_ms when it typed
  // text) and quiet_ms after the last change the screen showed since, or
  // max_ms after the input at the latest; no wait when that is already so.
  // False when the running job should stop.
  bool pace();
  // The quiet window after other input; 0 when pacing is off.
  double pacing_window_ms() const { return pacing_.quiet_ms; }

  // Pointer. Positions are root-window device pixels.
  // The pointer position, queried once and then remembered until the next
  // move_to or forget_pointer(), which the actor calls before every job
  // except a query that directly follows another query: a burst of
  // cursor_position calls costs one round trip.
  result<point> pointer();
  // The root window's size now (a round trip: RandR may have resized it).
  result<rect> screen_rect();
  void forget_pointer() { pointer_snapshot_.reset(); }
  // The root pixel t stands for now (one round trip for a window's
  // target, none otherwise). A window's target fails, naming the window,
  // when it is gone, not on screen, or the point is off the screen; with
  // pressing, also when another window covers the point (a press there
  // would reach that one), unless that is an override-redirect window such
  // as the menu the window opened.
  result<point> place(const device_target& t, bool pressing);
  // Whether a press at t would reach window owner (the X window a mark's
  // element is in): empty when it would; else why not, as an answer says
  // it: "is off the screen" (the point lies outside the root window), "is
  // under another window" (the topmost window at the point, the one X
  // would send the press into, is not owner's top-level window, nor an
  // override-redirect window of owner's process such as the menu it
  // opened), "is where its window no longer is" (only the root is there),
  // "is in a window that is gone". Owner 0 (not known): only the
  // screen is asked. A few round trips.
  result<std::string> unreachable(const device_target& t, uint32_t owner);
  // The pointer in window's own coordinates.
  result<point> pointer_in(uint32_t window);
  status move_to(point p);
  status button(uint8_t button, bool down);
  bool button_is_down(uint8_t button) const { return (buttons_ >> button) & 1; }

  // Keyboard. press_chord returns the keycodes it pressed, in order, for
  // release_keys; on error nothing stays pressed.
  // doing: as judge_keys takes it ("pressing keys"; empty for a click's
  // modifiers).
  result<std::vector<uint8_t>> press_chord(const key_chord& chord, std::string_view doing = {});
  void release_keys(const std::vector<uint8_t>& keycodes);
  status tap_chord(const key_chord& chord, std::string_view doing = {});
  // Types the keystrokes with the configured per-character delay; lifts
  // held modifiers meanwhile so the text arrives exactly. *typed receives
  // how many were typed (fewer when stopped).
  status type(const std::vector<typed_char>& keys, size_t* typed);

  // Waits until the X server has processed everything sent so far.
  status sync();

  // Releases every key and button this server holds. Safe to call when
  // nothing is held or the display is gone.
  void release_all();
  // The same, but borrowed keycodes stay bound (the stop gives them back
  // when restore_due says, so a program still reading the keys typed with
  // them reads them right).
  void release_held();
  bool holds_anything() const;

  // Borrowed keycodes go back to NoSymbol once unused for a while, so
  // clients have long processed the keys typed with them. When that is due:
  std::optional<clock_type::time_point> restore_due() const;
  void restore_borrowed();

 private:
  struct borrowing {
    keysym_t sym = 0;
    clock_type::time_point last_used;
  };

  status ensure_layout();
  // The stroke for sym from the layout or a borrowed keycode, if any.
  std::optional<key_stroke> lookup(keysym_t sym);
  // The keysym k is typed with: its own when the layout has it, else the
  // Unicode keysym of its character (beyond Latin-1), to borrow a key for.
  keysym_t keysym_to_type(const typed_char& k);
  // How many keycodes can be borrowed at once (free ones and ours).
  size_t spare_keys() const;
  // Binds spare keycodes to those of syms nothing produces yet, as many as
  // there are spare keys for, in one batch.
  status borrow(const std::vector<keysym_t>& syms);
  // Whether the key or button is down on the display without this server
  // having pressed it: someone else holds it, such as a person through a
  // VNC viewer. XTest keeps one down state per key and button for all its
  // clients, so the server neither presses nor releases such a key or
  // button: the other's hold already has the press's effect, and a release
  // of ours would end the other's hold. Asked once per job, at its first
  // press (QueryKeymap and QueryPointer in one round trip), and kept for the
  // rest of the job.
  bool key_held_elsewhere(uint8_t keycode);
  bool button_held_elsewhere(uint8_t button);
  struct elsewhere {
    std::array<uint8_t, 32> keys{};
    uint16_t buttons_mask = 0;
  };
  const elsewhere& held_elsewhere();
  // Called before the first press this server sends: writes the marker.
  void note_pressing();
  // Reference-counted presses: the key goes down on the first and up on
  // the last release.
  void press_key(uint8_t keycode, keysym_t sym);
  void release_key(uint8_t keycode);
  // What XTest has down, whatever the counts say (type lifts held
  // modifiers for a moment); tells the guard first. A key someone else
  // holds counts as down and is neither pressed nor released
  // (key_held_elsewhere), unless share is false: type's own character key,
  // whose press is what types the character.
  void set_down(uint8_t keycode, bool down, bool share = true);
  void fake(uint8_t type, uint8_t detail, int16_t x = 0, int16_t y = 0);
  // Tells on_event of what fake sent.
  void report(uint8_t type, uint8_t detail, int16_t x, int16_t y);
  // The keysym the next press of this keycode is for (type, a chord), so
  // the recorder names what was typed rather than the key's first keysym.
  uint8_t hint_keycode_ = 0;
  keysym_t hint_keysym_ = 0;
  // For x11_alive: notes an event that says the keymap changed.
  static void note_event(void* self, xcb_generic_event_t* ev);
  void clear_stranded();
  // Forgets the connection and everything held on it; when its server went
  // away, a new server generation begins.
  void drop_connection();
  result<xcb_connection_t*> reconnect();

  std::string display_;
  server_generation& generations_;
  uint64_t conn_generation_ = 0;  // When conn_ was made.
  uint32_t lost_buttons_ = 0;     // Down when the server went away.
  input_guard guard_;
  double type_delay_ms_;
  xcb_ptr conn_;
  xcb_window_t root_ = XCB_NONE;
  xkb_context* xkb_ = nullptr;
  int32_t device_ = -1;
  std::optional<x11_keyboard> keyboard_;
  key_layout layout_;
  bool layout_valid_ = false;
  bool reload_keymap_ = false;
  std::array<uint16_t, 256> key_refs_{};
  std::array<bool, 256> down_{};
  // Counted as down by down_ and buttons_, but held by someone else, so
  // never sent (held_elsewhere).
  std::array<bool, 256> shared_keys_{};
  uint32_t shared_buttons_ = 0;
  std::optional<elsewhere> elsewhere_;  // For the job running.
  uint32_t buttons_ = 0;
  std::string marker_;
  bool marker_written_ = false;
  // A dead server's marker was found at start, naming this pid: the first
  // connection releases what is down, then removes it.
  std::optional<pid_t> stranded_by_;
  std::map<uint8_t, borrowing> borrowed_;
  std::optional<point> pointer_snapshot_;
  // Asks X which application a window is (allowed_at, allowed_keys); made
  // on conn_ when first needed, dropped with it.
  std::unique_ptr<app_identifier> identifier_;
  // The keysym each keycode was last pressed for, for judge_keys.
  std::array<keysym_t, 256> held_sym_{};
  // The last judgement of the keyboard focus (judge_keys): for the same
  // focus (or, with PointerRoot, the same window under the pointer) under
  // the same grants, while no event came about the windows it read. Those
  // windows are watched (StructureNotify, PropertyChange) on conn_ from
  // before their names are read, and an event that can change an identity
  // (app_identifier::changes_identity: not a move, a title or a user time)
  // drops the judgement (note_event), so a window destroyed and its id
  // reused, or a WM_CLASS changed, is judged afresh at the next key.
  struct focus_judgement {
    uint32_t focus = 0;
    uint64_t epoch = 0;
    std::optional<app_identity> app;  // Empty: keys go nowhere.
    std::vector<uint32_t> watched;
  };
  std::optional<focus_judgement> focus_judged_;
  bool server_held_ = false;  // Between hold_server and its guard's end.
  result<std::optional<app_identity>> focus_app();
  void watch(uint32_t window, uint32_t mask);
  pacing pacing_;
  std::optional<clock_type::time_point> last_input_;
  bool last_was_text_ = false;    // The input last noted typed text.
  bool text_since_note_ = false;  // type() ran since note_input().
};

}  // namespace cu
