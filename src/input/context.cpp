#include "input/context.h"

#include <unistd.h>
#include <xcb/xtest.h>
#include <xkbcommon/xkbcommon.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "input/marker.h"

#include "util/log.h"
#include "x11/app_identity.h"
#include "x11/request.h"

namespace cu {
namespace {

// A borrowed keycode is rebound to another keysym only this long after it
// was last typed with. Xlib looks a key event's keysym up when the program
// handles the event, from a copy of the keymap it refreshes then if it has
// read a mapping notification since (XkbMapPending): a key still unhandled
// when the keycode is rebound types the new keysym. No round trip tells
// when a program has handled its events, so this is a time: on the 2-core
// test machine xterm typed wrong characters with 20 ms (idle) and 30 ms
// (sharing its core with a busy loop), none with 40 ms; GTK none with 10 ms
// (tools/measure-typing, docs/input.md).
constexpr auto kRebindGrace = std::chrono::milliseconds(100);
// And not before the screen has changed since that last use (the program
// drew the key, so it has handled it), or this long has passed: on a
// loaded machine xterm took longer than the grace to read its keys
// (x11-input's rebinding case lost a character at a load of 7 on 2 cores).
constexpr auto kRebindMost = std::chrono::seconds(1);
// A keycode bound a moment ago needs no pause before its first key: the
// mapping notification reaches each program ahead of the key event, and the
// keymap it then fetches already has the binding (the server has processed
// it: borrow() ends with a round trip). Measured: no pause after binding,
// even one keycode at a time, lost nothing in xterm or GTK.
// Borrowed keycodes go back to NoSymbol after this long unused.
constexpr auto kRestoreAfter = std::chrono::seconds(1);

error lost_display(const std::string& display) {
  return make_error(errc::x_unavailable, "lost the connection to X display " + display);
}

}  // namespace

input_context::input_context(std::string display, input_guard guard, double type_delay_ms,
                             server_generation& generation, std::string marker)
    : display_(std::move(display)),
      generations_(generation),
      guard_(std::move(guard)),
      type_delay_ms_(type_delay_ms),
      xkb_(xkb_context_new(xkb_context_flags(XKB_CONTEXT_NO_DEFAULT_INCLUDES |
                                                XKB_CONTEXT_NO_ENVIRONMENT_NAMES))),
      marker_(std::move(marker)),
      stranded_by_(dead_marker_pid(marker_)) {}

input_context::~input_context() {
  identifier_.reset();
  release_all();
  // Released (or the display is gone, and what was held with it): nothing
  // of ours is left for the next server to clear.
  if (marker_written_) remove_input_marker(marker_, getpid());
  keyboard_.reset();
  if (xkb_ != nullptr) xkb_context_unref(xkb_);
}

status input_context::begin_job() {
  elsewhere_.reset();
  if (still_connected()) return {};
  auto c = reconnect();
  if (!c) return c.take_error();
  return {};
}

result<xcb_connection_t*> input_context::connection() {
  if (conn_ && !xcb_connection_has_error(conn_.get())) return conn_.get();
  // begin_job connected, so the connection was lost since.
  return lost_display(display_);
}

void input_context::note_event(void* self, xcb_generic_event_t* ev) {
  // Events that say the keymap changed, and those of the windows the
  // focus judgement read (or an error a watch of a window gone made).
  auto* ctx = static_cast<input_context*>(self);
  if (is_keymap_change(ctx->conn_.get(), ev)) {
    ctx->reload_keymap_ = true;
  } else if (!ctx->identifier_ || ctx->identifier_->changes_identity(ev)) {
    ctx->focus_judged_.reset();
  }
}

bool input_context::still_connected() {
  if (!conn_) return false;
  if (x11_alive(conn_.get(), &input_context::note_event, this)) return true;
  drop_connection();
  return false;
}

bool input_context::confirm_connected() {
  if (!still_connected()) return false;
  if (sync()) return true;
  drop_connection();
  return false;
}

result<xcb_connection_t*> input_context::reconnect() {
  if (conn_) drop_connection();
  conn_generation_ = generations_.current();
  int screen = 0;
  auto c = x11_connect(display_, &screen);
  if (!c) return c.take_error();
  xcb_screen_t* s = x11_screen(c->get(), screen);
  const xcb_query_extension_reply_t* xtest = xcb_get_extension_data(c->get(), &xcb_test_id);
  if (s == nullptr || xtest == nullptr || !xtest->present) {
    return make_error(errc::x_failed, "X display " + display_ + " lacks the XTEST extension");
  }
  conn_ = std::move(*c);
  root_ = s->root;
  auto dev = x11_setup_xkb(conn_.get());
  if (dev) {
    device_ = *dev;
  } else {
    device_ = -1;
    log(log_level::warn, "keyboard input unavailable: %s", dev.err().message.c_str());
  }
  clear_stranded();
  return conn_.get();
}

void input_context::drop_connection() {
  if (conn_ && x11_server_gone(conn_.get())) {
    generations_.lost(conn_generation_);
    lost_buttons_ = buttons_;
    if (holds_anything()) {
      log(log_level::warn, "input: lost X display %s while holding input; nothing is held there "
          "now", display_.c_str());
    }
  }
  // Whatever we held lived on that server connection's display state; a
  // new connection starts from nothing.
  for (size_t k = 0; k < down_.size(); ++k) {
    if (down_[k]) guard_.key(uint8_t(k), false);
  }
  for (uint8_t b = 1; b < 32; ++b) {
    if (button_is_down(b)) guard_.button(b, false);
  }
  for (auto& [kc, b] : borrowed_) guard_.borrowed(kc, false);
  identifier_.reset();
  conn_.reset();
  key_refs_ = {};
  down_ = {};
  shared_keys_ = {};
  buttons_ = 0;
  shared_buttons_ = 0;
  elsewhere_.reset();
  borrowed_.clear();
  keyboard_.reset();
  layout_valid_ = false;
}

void input_context::clear_stranded() {
  // Without a dead server's marker, what is down belongs to whoever is
  // using the display beside us (x11vnc's input is XTest input too), or
  // to a predecessor whose guard or clean exit already released it.
  if (!stranded_by_) return;
  const pid_t dead = *stranded_by_;
  stranded_by_.reset();
  xcb_connection_t* c = conn_.get();
  auto pc = xcb_query_pointer(c, root_);
  auto kc = xcb_query_keymap(c);
  reply_ptr<xcb_query_pointer_reply_t> p(xcb_query_pointer_reply(c, pc, nullptr));
  reply_ptr<xcb_query_keymap_reply_t> k(xcb_query_keymap_reply(c, kc, nullptr));
  int released = 0;
  // A release only affects what the XTest devices hold, never a physical
  // keyboard or mouse, so this clears exactly what synthetic input left.
  if (p) {
    for (uint8_t b = 1; b <= 5; ++b) {
      if (p->mask & (XCB_BUTTON_MASK_1 << (b - 1))) {
        fake(XCB_BUTTON_RELEASE, b);
        ++released;
      }
    }
  }
  if (k) {
    for (int i = 8; i < 256; ++i) {
      if (k->keys[i / 8] & (1 << (i % 8))) {
        fake(XCB_KEY_RELEASE, uint8_t(i));
        ++released;
      }
    }
  }
  if (released > 0) x11_sync(c);
  log(log_level::info, "server %d died leaving input pressed on %s; released %d key(s)/button(s)",
      int(dead), display_.c_str(), released);
  remove_input_marker(marker_, dead);
}

void input_context::fake(uint8_t type, uint8_t detail, int16_t x, int16_t y) {
  // Not while the server is held: the recorder's frame is taken through
  // another connection, which waits for the hold (hold_server asked first).
  if (before_event && !server_held_) before_event();
  xcb_test_fake_input(conn_.get(), type, detail, XCB_CURRENT_TIME, root_, x, y, 0);
  if (on_event) report(type, detail, x, y);
}

void input_context::report(uint8_t type, uint8_t detail, int16_t x, int16_t y) {
  input_event e;
  e.seq = event_seq;
  e.at = clock_type::now();
  switch (type) {
    case XCB_MOTION_NOTIFY:
      e.type = input_event::kind::move;
      e.x = x;
      e.y = y;
      break;
    case XCB_BUTTON_PRESS:
    case XCB_BUTTON_RELEASE:
      e.type = type == XCB_BUTTON_PRESS ? input_event::kind::press : input_event::kind::release;
      e.button = detail;
      break;
    default:
      e.type = input_event::kind::key;
      e.keycode = detail;
      e.down = type == XCB_KEY_PRESS;
      e.keysym = detail == hint_keycode_ && hint_keysym_ != 0 ? hint_keysym_
                                                               : layout_.base_keysym(detail);
      break;
  }
  on_event(e);
}

bool input_context::pause_ms(double ms) {
  if (conn_) xcb_flush(conn_.get());
  auto until = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                       std::chrono::duration<double, std::milli>(ms));
  return wait_until ? wait_until(until) : true;
}

bool input_context::pace() {
  if (pacing_.quiet_ms <= 0 || !last_input_) return true;
  using ms = std::chrono::duration<double, std::milli>;
  auto after = [](clock_type::time_point t, double millis) {
    return t + std::chrono::duration_cast<clock_type::duration>(ms(millis));
  };
  const clock_type::time_point bound = after(*last_input_, pacing_.max_ms);
  // An application's own timers (a completion, a file chooser's lookup)
  // count from the last keystroke, and draw nothing until they fire: after
  // typed text the wait is the text window from the input at least.
  const clock_type::time_point floor =
      after(*last_input_, last_was_text_ ? std::max(pacing_.text_quiet_ms, pacing_.quiet_ms)
                                         : pacing_.quiet_ms);
  for (;;) {
    // Quiet since the last change drawn after the input; the record may
    // learn of a change only now, so it is read again after every wait.
    clock_type::time_point ready = floor;
    if (pacing_.screen_changed_at) {
      if (auto changed = pacing_.screen_changed_at(); changed && *changed > *last_input_) {
        ready = std::max(ready, after(*changed, pacing_.quiet_ms));
      }
    }
    ready = std::min(ready, bound);
    if (ready <= clock_type::now()) return true;
    if (wait_until && !wait_until(ready)) return false;
  }
}

result<point> input_context::pointer() {
  if (pointer_snapshot_) return *pointer_snapshot_;
  auto c = connection();
  if (!c) return c.take_error();
  reply_ptr<xcb_query_pointer_reply_t> p(
      xcb_query_pointer_reply(*c, xcb_query_pointer(*c, root_), nullptr));
  if (!p) return lost_display(display_);
  pointer_snapshot_ = point{p->root_x, p->root_y};
  return *pointer_snapshot_;
}

namespace {

std::string window_text(uint32_t w) {
  char buf[16];
  snprintf(buf, sizeof buf, "0x%x", unsigned(w));
  return buf;
}

error window_gone(uint32_t w) {
  return make_error(errc::x_failed,
                    "window " + window_text(w) +
                        " of the screenshot session no longer exists (it was closed); take a "
                        "new screenshot");
}

}  // namespace

status input_context::allowed_at(point p, std::string_view doing) {
  if (grants == nullptr) return {};
  const std::shared_ptr<const grant_view> view = grants->view();
  if (!view->filtering()) return {};
  auto c = connection();
  if (!c) return c.err();
  if (!identifier_) identifier_ = std::make_unique<app_identifier>(*c, root_);
  auto app = identifier_->at_point(p);
  if (!app) return app.err();
  const grant_view::verdict v = view->judge(*app);
  if (v == grant_view::verdict::allowed) return {};
  return make_error(errc::refused, view->refusal(doing, "its point is on", *app, v));
}

status input_context::allowed_keys(std::string_view doing) {
  if (grants == nullptr) return {};
  const std::shared_ptr<const grant_view> view = grants->view();
  if (!view->filtering()) return {};
  auto app = focus_app();
  if (!app) return app.err();
  // No focus: keys go nowhere, and nothing is there to keep them from.
  if (!*app) return {};
  const grant_view::verdict v = view->judge(**app);
  if (v == grant_view::verdict::allowed) return {};
  return make_error(errc::refused, view->refusal(doing, "the keyboard focus is on", **app, v));
}

void input_context::watch(uint32_t window, uint32_t mask) {
  if (window == XCB_NONE || window == root_) return;
  xcb_change_window_attributes(conn_.get(), window, XCB_CW_EVENT_MASK, &mask);
  if (focus_judged_) focus_judged_->watched.push_back(window);
}

result<std::optional<app_identity>> input_context::focus_app() {
  auto c = connection();
  if (!c) return c.take_error();
  if (!identifier_) identifier_ = std::make_unique<app_identifier>(*c, root_);
  // The focus now; the reply also means every event sent before it is in
  // the queue, so a watched window's change has dropped the judgement.
  reply_ptr<xcb_get_input_focus_reply_t> f(
      xcb_get_input_focus_reply(*c, xcb_get_input_focus(*c), nullptr));
  if (!f) return lost_display(display_);
  while (xcb_generic_event_t* ev = xcb_poll_for_queued_event(*c)) {
    note_event(this, ev);
    free(ev);
  }
  uint32_t focus = f->focus;
  if (focus == XCB_NONE) return std::optional<app_identity>();
  if (focus == XCB_INPUT_FOCUS_POINTER_ROOT) {
    // The keys go to the window under the pointer.
    reply_ptr<xcb_query_pointer_reply_t> q(
        xcb_query_pointer_reply(*c, xcb_query_pointer(*c, root_), nullptr));
    if (!q) return lost_display(display_);
    focus = q->child == XCB_NONE ? root_ : q->child;
  }
  if (focus == root_) {
    app_identity d;
    d.what = app_identity::kind::desktop;
    d.window = root_;
    return std::optional<app_identity>(d);
  }
  const uint64_t epoch = grants != nullptr ? grants->view()->epoch : 0;
  if (focus_judged_ && focus_judged_->focus == focus && focus_judged_->epoch == epoch) {
    return focus_judged_->app;
  }
  // Stop watching what the last judgement read.
  if (focus_judged_) {
    const uint32_t none = 0;
    for (uint32_t w : focus_judged_->watched) {
      xcb_change_window_attributes(*c, w, XCB_CW_EVENT_MASK, &none);
    }
  }
  focus_judged_ = focus_judgement{focus, epoch, std::nullopt, {}};
  // Watched before anything is read, so a change after the read is an
  // event; read twice, so one between the watch and the read is seen too.
  const uint32_t self = XCB_EVENT_MASK_STRUCTURE_NOTIFY | XCB_EVENT_MASK_PROPERTY_CHANGE;
  watch(focus, self);
  auto identify = [&]() -> result<app_identity> {
    auto top = identifier_->top_of(focus);
    if (!top) return top.take_error();
    if (focus_judged_) watch(*top, self | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY);
    auto app = identifier_->of_top(*top);
    if (!app) return app.take_error();
    if (focus_judged_ && app->window != *top) watch(app->window, self);
    return app;
  };
  auto first = identify();
  if (!first) {
    focus_judged_.reset();
    return first.take_error();
  }
  auto again = identify();
  if (!again) {
    focus_judged_.reset();
    return again.take_error();
  }
  // Drain what the reads brought: a change in between drops the judgement.
  while (xcb_generic_event_t* ev = xcb_poll_for_queued_event(*c)) {
    note_event(this, ev);
    free(ev);
  }
  if (focus_judged_ && *first == *again) {
    focus_judged_->app = *again;
  } else {
    focus_judged_.reset();
  }
  return std::optional<app_identity>(std::move(*again));
}

status input_context::judge_keys(const std::vector<keysym_t>& adding, std::string_view doing) {
  std::vector<keysym_t> held;
  for (size_t kc = 8; kc < down_.size(); ++kc) {
    if (down_[kc] && held_sym_[kc] != 0) held.push_back(held_sym_[kc]);
  }
  held.insert(held.end(), adding.begin(), adding.end());
  auto name_of = [](const std::vector<keysym_t>& keys) {
    std::string out;
    for (keysym_t k : keys) {
      char name[64];
      if (xkb_keysym_get_name(k, name, sizeof name) <= 0) continue;
      if (!out.empty()) out += '+';
      out += name;
    }
    return out;
  };
  if (is_server_chord(held)) {
    return make_error(errc::refused,
                      "the keys " + name_of(held) +
                          " were refused: held together they reach the X server itself rather "
                          "than a window (ending it, switching virtual terminals, breaking grabs, "
                          "changing the video mode or turning on a keyboard control), so this "
                          "server never sends them, whatever the grants (docs/grants.md)");
  }
  const std::shared_ptr<const grant_view> view =
      grants != nullptr ? grants->view() : std::shared_ptr<const grant_view>();
  if (view && view->mode == grants_mode::enforce && !view->system_keys &&
      is_system_combo(key_chord{held})) {
    return make_error(errc::refused,
                      "the keys " + name_of(held) +
                          " were refused: held together (a hold_key's keys included) they are "
                          "a system key combo, which needs the systemKeyCombos grant while "
                          "grants are enforced (CU_GRANTS=enforce); call request_access with "
                          "systemKeyCombos: true first");
  }
  if (doing.empty()) return {};
  return allowed_keys(doing);
}

input_context::server_hold input_context::hold_server() {
  // Held already (a click's modifiers inside its hold): the outer hold
  // ends it.
  if (server_held_ || grants == nullptr || !grants->view()->filtering() || !conn_ ||
      xcb_connection_has_error(conn_.get())) {
    return server_hold(nullptr, nullptr);
  }
  // A frame the recorder still owes of the screen is taken first: it reads
  // the screen through a connection of its own, which the hold would stop.
  if (before_event) before_event();
  server_held_ = true;
  xcb_grab_server(conn_.get());
  return server_hold(conn_.get(), &server_held_);
}

input_context::server_hold::~server_hold() {
  if (c_ == nullptr) return;
  xcb_ungrab_server(c_);
  xcb_flush(c_);
  *held_ = false;
}

result<point> input_context::place(const device_target& t, bool pressing) {
  if (t.window == 0) return t.p;
  auto c = connection();
  if (!c) return c.take_error();
  auto at_cookie = xcb_translate_coordinates(*c, t.window, root_, int16_t(t.p.x), int16_t(t.p.y));
  auto attributes_cookie = xcb_get_window_attributes(*c, t.window);
  auto screen_cookie = xcb_get_geometry(*c, root_);
  reply_ptr<xcb_translate_coordinates_reply_t> at(
      xcb_translate_coordinates_reply(*c, at_cookie, nullptr));
  reply_ptr<xcb_get_window_attributes_reply_t> attributes(
      xcb_get_window_attributes_reply(*c, attributes_cookie, nullptr));
  reply_ptr<xcb_get_geometry_reply_t> screen(xcb_get_geometry_reply(*c, screen_cookie, nullptr));
  if (!screen) return lost_display(display_);
  if (!at || !attributes) return window_gone(t.window);
  if (attributes->map_state != XCB_MAP_STATE_VIEWABLE) {
    return make_error(errc::x_failed,
                      "window " + window_text(t.window) +
                          " of the screenshot session is not on screen (minimized or "
                          "unmapped); bring it back (set_window_state normal, focus_window) "
                          "and take a new screenshot");
  }
  const point p{at->dst_x, at->dst_y};
  if (p.x < 0 || p.y < 0 || p.x >= screen->width || p.y >= screen->height) {
    return make_error(errc::x_failed,
                      point_text(t.p) + " of window " + window_text(t.window) +
                          " is off the screen now, at " + point_text(p) +
                          "; move the window (set_window_geometry) and take a new screenshot");
  }
  if (!pressing) return p;
  // The top-level window at the point, and the one holding ours.
  reply_ptr<xcb_translate_coordinates_reply_t> here(xcb_translate_coordinates_reply(
      *c, xcb_translate_coordinates(*c, root_, root_, int16_t(p.x), int16_t(p.y)), nullptr));
  if (!here) return lost_display(display_);
  xcb_window_t top = t.window;
  for (int depth = 0; depth < 64; ++depth) {
    reply_ptr<xcb_query_tree_reply_t> tree(
        xcb_query_tree_reply(*c, xcb_query_tree(*c, top), nullptr));
    if (!tree) return window_gone(t.window);
    if (tree->parent == root_ || tree->parent == XCB_NONE) break;
    top = tree->parent;
  }
  if (here->child == top) return p;
  if (here->child != XCB_NONE) {
    reply_ptr<xcb_get_window_attributes_reply_t> other(xcb_get_window_attributes_reply(
        *c, xcb_get_window_attributes(*c, here->child), nullptr));
    if (other && other->override_redirect) return p;
  }
  return make_error(errc::x_failed,
                    point_text(t.p) + " of window " + window_text(t.window) +
                        " is covered by another window on the screen, which would get the "
                        "press; focus_window " + window_text(t.window) +
                        " first, then act (nothing was pressed)");
}

result<std::string> input_context::unreachable(const device_target& t, uint32_t owner) {
  auto c = connection();
  if (!c) return c.take_error();
  point p = t.p;
  if (t.window != 0) {
    auto placed = place(t, false);
    if (!placed) return placed.take_error();
    p = *placed;
  }
  auto screen = screen_rect();
  if (!screen) return screen.take_error();
  if (p.x < screen->x || p.y < screen->y || p.x >= screen->x + screen->w ||
      p.y >= screen->y + screen->h) {
    return std::string("is off the screen");
  }
  if (owner == 0) return std::string();
  reply_ptr<xcb_translate_coordinates_reply_t> here(xcb_translate_coordinates_reply(
      *c, xcb_translate_coordinates(*c, root_, root_, int16_t(p.x), int16_t(p.y)), nullptr));
  if (!here) return lost_display(display_);
  xcb_window_t top = owner;
  for (int depth = 0; depth < 64; ++depth) {
    reply_ptr<xcb_query_tree_reply_t> tree(
        xcb_query_tree_reply(*c, xcb_query_tree(*c, top), nullptr));
    if (!tree) return std::string("is in a window that is gone");
    if (tree->parent == root_ || tree->parent == XCB_NONE) break;
    top = tree->parent;
  }
  if (here->child == top) return std::string();
  // Nothing but the root there: the window went elsewhere (or closed).
  if (here->child == XCB_NONE) return std::string("is where its window no longer is");
  // A toolkit's popup (a menu, a combo box's list) is an override-redirect
  // window of the same process over its own window: a press there is one
  // the application opened it for. Another process's, or one naming no
  // process (a bare X window), is what the press would reach instead.
  reply_ptr<xcb_get_window_attributes_reply_t> other(xcb_get_window_attributes_reply(
      *c, xcb_get_window_attributes(*c, here->child), nullptr));
  if (!other || !other->override_redirect) return std::string("is under another window");
  static constexpr char kPid[] = "_NET_WM_PID";
  reply_ptr<xcb_intern_atom_reply_t> atom(
      xcb_intern_atom_reply(*c, xcb_intern_atom(*c, 1, sizeof kPid - 1, kPid), nullptr));
  if (!atom || atom->atom == XCB_NONE) return std::string("is under another window");
  auto pid_of = [&](xcb_window_t w) -> uint32_t {
    reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(
        *c, xcb_get_property(*c, 0, w, atom->atom, XCB_ATOM_CARDINAL, 0, 1), nullptr));
    if (!r || r->format != 32 || xcb_get_property_value_length(r.get()) < 4) return 0;
    return *static_cast<const uint32_t*>(xcb_get_property_value(r.get()));
  };
  const uint32_t mine = pid_of(owner);
  if (mine != 0 && pid_of(here->child) == mine) return std::string();
  return std::string("is under another window");
}

result<point> input_context::pointer_in(uint32_t window) {
  auto c = connection();
  if (!c) return c.take_error();
  reply_ptr<xcb_query_pointer_reply_t> p(
      xcb_query_pointer_reply(*c, xcb_query_pointer(*c, window), nullptr));
  if (!p) {
    if (!still_connected()) return lost_display(display_);
    return window_gone(window);
  }
  return point{p->win_x, p->win_y};
}

result<rect> input_context::screen_rect() {
  auto c = connection();
  if (!c) return c.take_error();
  reply_ptr<xcb_get_geometry_reply_t> g(
      xcb_get_geometry_reply(*c, xcb_get_geometry(*c, root_), nullptr));
  if (!g) return lost_display(display_);
  return rect{0, 0, g->width, g->height};
}

status input_context::move_to(point p) {
  pointer_snapshot_.reset();
  auto c = connection();
  if (!c) return c.take_error();
  fake(XCB_MOTION_NOTIFY, 0, int16_t(p.x), int16_t(p.y));
  return {};
}

status input_context::button(uint8_t b, bool down) {
  auto c = connection();
  if (!c) return c.take_error();
  if (button_is_down(b) == down) return {};
  const uint32_t bit = 1u << b;
  if (down) {
    lost_buttons_ &= ~bit;
    buttons_ |= bit;
    if (button_held_elsewhere(b)) {
      shared_buttons_ |= bit;
      return {};
    }
    note_pressing();
    guard_.button(b, true);
    fake(XCB_BUTTON_PRESS, b);
  } else {
    buttons_ &= ~bit;
    if (shared_buttons_ & bit) {
      shared_buttons_ &= ~bit;
      return {};
    }
    fake(XCB_BUTTON_RELEASE, b);
    guard_.button(b, false);
  }
  return {};
}

const input_context::elsewhere& input_context::held_elsewhere() {
  if (elsewhere_) return *elsewhere_;
  // Assigned, not emplaced: clang takes a nested struct with member
  // initializers as not default-constructible inside its class.
  elsewhere_ = elsewhere{};
  xcb_connection_t* c = conn_.get();
  auto kc = xcb_query_keymap(c);
  auto pc = xcb_query_pointer(c, root_);
  reply_ptr<xcb_query_keymap_reply_t> k(xcb_query_keymap_reply(c, kc, nullptr));
  reply_ptr<xcb_query_pointer_reply_t> p(xcb_query_pointer_reply(c, pc, nullptr));
  // Without a reply (the display going away) nothing counts as held
  // elsewhere: the presses go out as before and fail with the connection.
  if (k) std::copy(std::begin(k->keys), std::end(k->keys), elsewhere_->keys.begin());
  if (p) elsewhere_->buttons_mask = p->mask;
  return *elsewhere_;
}

bool input_context::key_held_elsewhere(uint8_t kc) {
  return (held_elsewhere().keys[kc / 8] >> (kc % 8)) & 1;
}

bool input_context::button_held_elsewhere(uint8_t b) {
  // The core pointer's mask has bits for buttons 1 to 5 only.
  if (b < 1 || b > 5) return false;
  return held_elsewhere().buttons_mask & (XCB_BUTTON_MASK_1 << (b - 1));
}

void input_context::note_pressing() {
  if (marker_written_ || marker_.empty()) return;
  marker_written_ = true;
  if (!write_input_marker(marker_, getpid())) {
    log(log_level::warn, "cannot write %s; input left down if this server is killed with its "
        "guard will stay down for the next server", marker_.c_str());
  }
}

void input_context::set_down(uint8_t kc, bool down, bool share) {
  if (down_[kc] == down || !conn_) return;
  down_[kc] = down;
  if (down) {
    if (share && key_held_elsewhere(kc)) {
      shared_keys_[kc] = true;
      return;
    }
    note_pressing();
    guard_.key(kc, true);
    fake(XCB_KEY_PRESS, kc);
  } else {
    if (std::exchange(shared_keys_[kc], false)) return;
    fake(XCB_KEY_RELEASE, kc);
    guard_.key(kc, false);
  }
}

void input_context::press_key(uint8_t kc, keysym_t sym) {
  if (key_refs_[kc]++ == 0) {
    held_sym_[kc] = sym;
    set_down(kc, true);
  }
}

void input_context::release_key(uint8_t kc) {
  if (key_refs_[kc] == 0) return;
  if (--key_refs_[kc] == 0) set_down(kc, false);
}

status input_context::ensure_layout() {
  auto c = connection();
  if (!c) return c.take_error();
  if (device_ < 0) return make_error(errc::x_failed, "keyboard input is unavailable on this display");
  // Someone may have changed the keymap (setxkbmap, xmodmap) since we last
  // looked; the events say so.
  x11_alive(*c, &input_context::note_event, this);
  if (reload_keymap_ || !keyboard_) {
    auto kb = x11_load_keyboard(*c, xkb_, device_);
    if (!kb) return kb.take_error();
    keyboard_ = std::move(*kb);
    reload_keymap_ = false;
    layout_valid_ = false;
  }
  auto st = x11_keyboard_state(*c, device_);
  if (!st) return st.take_error();
  if (!layout_valid_ || st->first != layout_.locked_mods() || st->second != layout_.group()) {
    layout_ = key_layout::build(keyboard_->keymap, st->first, st->second, keyboard_->modmap);
    layout_valid_ = true;
    // A keymap change (setxkbmap) may have taken over keycodes we had
    // borrowed; those are no longer ours to restore.
    for (auto it = borrowed_.begin(); it != borrowed_.end();) {
      if (layout_.base_keysym(it->first) != it->second.sym) {
        guard_.borrowed(it->first, false);
        it = borrowed_.erase(it);
      } else {
        ++it;
      }
    }
  }
  return {};
}

keysym_t input_context::keysym_to_type(const typed_char& k) {
  auto in_layout = layout_.find(k.sym);
  if (in_layout && borrowed_.count(in_layout->keycode) == 0) return k.sym;
  // Not on the keyboard: bind the character's Unicode keysym, which every
  // client reads the same way. Some legacy keysyms are not (xterm types
  // ballotcross, U+2717, as U+2612).
  if (k.code_point >= 0x100 && k.code_point != '\n') return 0x01000000 | k.code_point;
  return k.sym;
}

std::optional<key_stroke> input_context::lookup(keysym_t sym) {
  // A keycode we borrowed may still appear in the layout under the keysym
  // it had when the layout was read; only borrowed_ knows what it is now.
  if (auto s = layout_.find(sym); s && borrowed_.count(s->keycode) == 0) return s;
  for (auto& [kc, b] : borrowed_) {
    if (b.sym == sym) {
      b.last_used = clock_type::now();
      return key_stroke{kc, 0};
    }
  }
  return std::nullopt;
}

size_t input_context::spare_keys() const {
  size_t n = borrowed_.size();
  for (uint8_t u : layout_.unused_keycodes()) n += borrowed_.count(u) == 0 ? 1 : 0;
  return n;
}

status input_context::borrow(const std::vector<keysym_t>& syms) {
  std::vector<keysym_t> want;
  for (keysym_t s : syms) {
    if (!lookup(s) && std::find(want.begin(), want.end(), s) == want.end()) want.push_back(s);
  }
  if (want.empty()) return {};
  std::vector<uint8_t> keys;
  for (uint8_t u : layout_.unused_keycodes()) {
    if (keys.size() < want.size() && borrowed_.count(u) == 0) keys.push_back(u);
  }
  auto ready = clock_type::time_point::min();
  auto last_use = clock_type::time_point::min();  // Of the keycodes taken back.
  if (keys.size() < want.size()) {
    // Take back the keycodes used longest ago whose keysyms are not wanted
    // now, once clients have surely finished looking them up.
    // A keycode that is down (a hold_key's, a chord's being pressed) is
    // never rebound: its release must still mean the same key.
    std::vector<std::pair<clock_type::time_point, uint8_t>> idle;
    for (auto& [kc, b] : borrowed_) {
      if (std::find(syms.begin(), syms.end(), b.sym) == syms.end() && key_refs_[kc] == 0 &&
          !down_[kc]) {
        idle.emplace_back(b.last_used, kc);
      }
    }
    std::sort(idle.begin(), idle.end());
    for (auto& [used, kc] : idle) {
      if (keys.size() == want.size()) break;
      keys.push_back(kc);
      ready = std::max(ready, used + kRebindGrace);
      last_use = std::max(last_use, used);
    }
  }
  if (keys.empty()) {
    char name[64];
    xkb_keysym_get_name(want.front(), name, sizeof name);
    return make_error(errc::x_failed, std::string("no key produces ") + name +
                                          " and the keymap has no spare keycode to bind it to");
  }
  if (ready > clock_type::now()) {
    if (auto s = sync(); !s) return s;
    if (wait_until && !wait_until(ready)) return make_error(errc::cancelled, "stopped");
  }
  // On a loaded machine a program may not have read its key events even
  // after the grace: until the screen shows a change made after the last
  // key typed with a keycode taken back (the program drew what it typed, so
  // it has handled that key), or kRebindMost has passed, the keycodes wait.
  if (last_use != clock_type::time_point::min() && pacing_.screen_changed_at && wait_until) {
    const auto most = last_use + kRebindMost;
    while (clock_type::now() < most) {
      const auto changed = pacing_.screen_changed_at();
      // Unknown (no DAMAGE watch): the grace alone, as before.
      if (!changed || *changed > last_use) break;
      if (!wait_until(std::min(most, clock_type::now() + std::chrono::milliseconds(5)))) {
        return make_error(errc::cancelled, "stopped");
      }
    }
  }
  // Two identical levels make the server give each key a TWO_LEVEL type, so
  // neither Shift nor Caps Lock changes what it types.
  for (size_t i = 0; i < keys.size(); ++i) {
    const xcb_keysym_t pair[2] = {want[i], want[i]};
    guard_.borrowed(keys[i], true);
    xcb_change_keyboard_mapping(conn_.get(), 1, keys[i], 2, pair);
    borrowed_[keys[i]] = borrowing{want[i], clock_type::now()};
  }
  reload_keymap_ = true;
  // The server has the new bindings before the first key that uses them.
  if (auto s = sync(); !s) return s;
  // And the applications have taken them: X sends every client the mapping
  // change before the key, yet Chromium at times read the first key on a
  // new binding as nothing (tests/apps typed "hllo" for "héllo" in 3 of 6
  // runs, the later borrowed characters arriving). Nothing on screen says
  // when a client has reloaded its keymap, so this waits the pacing window,
  // once per batch of new bindings (docs/input.md, "Pacing").
  if (pacing_.quiet_ms > 0 && !pause_ms(pacing_.quiet_ms)) {
    return make_error(errc::cancelled, "stopped");
  }
  return {};
}

namespace {

// The keysym a modifier bit's key stands for, for judge_keys.
keysym_t modifier_keysym(int bit) {
  switch (bit) {
    case 0: return XKB_KEY_Shift_L;
    case 2: return XKB_KEY_Control_L;
    case 3: return XKB_KEY_Alt_L;
    case 6: return XKB_KEY_Super_L;
    case 7: return XKB_KEY_ISO_Level3_Shift;
    default: return 0;
  }
}

}  // namespace

result<std::vector<uint8_t>> input_context::press_chord(const key_chord& chord,
                                                        std::string_view doing) {
  if (auto s = ensure_layout(); !s) return s.take_error();
  if (auto b = borrow(chord.keys); !b) return b.take_error();
  // Every key has its keycode now, or there were not enough spare ones:
  // binding one more here could take back a keycode this chord needs.
  std::vector<key_stroke> strokes;
  for (keysym_t sym : chord.keys) {
    if (auto stroke = lookup(sym)) strokes.push_back(*stroke);
  }
  if (strokes.size() < chord.keys.size()) {
    size_t lacking = 0;
    for (keysym_t sym : chord.keys) lacking += layout_.find(sym) ? 0 : 1;
    return make_error(errc::invalid_argument,
                      "the keys cannot all be held at once: " + std::to_string(lacking) +
                          " of them are not on the keyboard layout, and only " +
                          std::to_string(spare_keys()) +
                          " spare keycodes can be bound to such keys at a time (some may be "
                          "held by another hold_key); nothing was pressed");
  }
  std::vector<uint8_t> pressed;
  for (size_t i = 0; i < strokes.size(); ++i) {
    const key_stroke& stroke = strokes[i];
    // Judged at the moment each key would go down, with what is down then.
    std::vector<keysym_t> adding;
    for (int bit = 0; bit < 8; ++bit) {
      if ((stroke.mods & (1u << bit)) && modifier_keysym(bit) != 0) {
        adding.push_back(modifier_keysym(bit));
      }
    }
    adding.push_back(chord.keys[i]);
    // Judged and pressed with the server held: the focus cannot move
    // between the judgement and the press.
    auto held = hold_server();
    if (auto s = judge_keys(adding, doing); !s) {
      release_keys(pressed);
      return s.take_error();
    }
    hint_keycode_ = stroke.keycode;
    hint_keysym_ = chord.keys[i];
    for (int bit = 0; bit < 8; ++bit) {
      if (stroke.mods & (1u << bit)) {
        uint8_t mk = layout_.modifier_key(bit);
        press_key(mk, modifier_keysym(bit));
        pressed.push_back(mk);
      }
    }
    press_key(stroke.keycode, chord.keys[i]);
    pressed.push_back(stroke.keycode);
  }
  return pressed;
}

void input_context::release_keys(const std::vector<uint8_t>& keycodes) {
  for (auto it = keycodes.rbegin(); it != keycodes.rend(); ++it) release_key(*it);
}

status input_context::tap_chord(const key_chord& chord, std::string_view doing) {
  auto pressed = press_chord(chord, doing);
  if (!pressed) return pressed.take_error();
  release_keys(*pressed);
  return {};
}

status input_context::type(const std::vector<typed_char>& keys, size_t* typed) {
  *typed = 0;
  text_since_note_ = true;
  if (auto s = ensure_layout(); !s) return s.take_error();
  // Held modifiers (a hold_key of shift, say) would change what the keys
  // type: lift them for the duration and put them back afterwards.
  for (size_t kc = 8; kc < down_.size(); ++kc) {
    if (down_[kc] && layout_.is_modifier(uint8_t(kc))) set_down(uint8_t(kc), false);
  }
  status outcome;
  for (size_t i = 0; i < keys.size(); ++i) {
    const typed_char& k = keys[i];
    const keysym_t sym = keysym_to_type(k);
    auto stroke = lookup(sym);
    if (!stroke) {
      // The spare keys should hold the keysyms the layout lacks that are
      // needed soonest (those already bound stay): bind them in one batch,
      // taking back keycodes whose keysyms come later or never.
      std::vector<keysym_t> ahead;
      size_t room = spare_keys();
      for (size_t j = i; j < keys.size() && ahead.size() < room; ++j) {
        keysym_t s = keysym_to_type(keys[j]);
        auto in_layout = layout_.find(s);
        if (in_layout && borrowed_.count(in_layout->keycode) == 0) continue;
        if (std::find(ahead.begin(), ahead.end(), s) == ahead.end()) ahead.push_back(s);
      }
      if (auto b = borrow(ahead); !b) {
        outcome = b.take_error();
        break;
      }
      stroke = lookup(sym);
      if (!stroke) {
        outcome = make_error(errc::x_failed, "could not bind a keycode");
        break;
      }
    }
    uint8_t mods[8];
    keysym_t mod_syms[8];
    size_t nmods = 0;
    std::vector<keysym_t> adding;
    for (int bit = 0; bit < 8; ++bit) {
      if (stroke->mods & (1u << bit)) {
        mod_syms[nmods] = modifier_keysym(bit);
        mods[nmods++] = layout_.modifier_key(bit);
        if (modifier_keysym(bit) != 0) adding.push_back(modifier_keysym(bit));
      }
    }
    adding.push_back(sym);
    // Each character is judged against the focus it would go to, with the
    // server held until it is released: typing that moved the focus (a
    // Return that closed the granted window) stops before the first key
    // that would reach a window not allowed.
    std::optional<server_hold> held;
    held.emplace(hold_server());
    if (auto s = judge_keys(adding, "typing"); !s) {
      outcome = s.take_error();
      break;
    }
    for (size_t m = 0; m < nmods; ++m) {
      held_sym_[mods[m]] = mod_syms[m];
      set_down(mods[m], true);
    }
    // The same key held by a hold is released first, or its press would
    // only be an auto-repeat.
    set_down(stroke->keycode, false);
    hint_keycode_ = stroke->keycode;
    hint_keysym_ = sym;
    held_sym_[stroke->keycode] = sym;
    set_down(stroke->keycode, true, false);
    set_down(stroke->keycode, false);
    for (size_t m = nmods; m-- > 0;) set_down(mods[m], false);
    // Let go before the round trip and the pause: the program must be free
    // to take the key.
    held.reset();
    ++*typed;
    // Paced by the X server: one round trip per character, so each key has
    // been delivered before the next is sent. Keys of the layout arrive in
    // order at any pace (tools/measure-typing typed 1000 without any round
    // trip into xterm and GTK, none lost); the round trip bounds what waits
    // in the server for a slow program and makes the pace the server's.
    // CU_TYPE_DELAY_MS adds a pause for programs slower than that. With a
    // filtering view the next key's judgement asks the focus first, which is
    // that round trip already (the last key's is the sync after the loop).
    const bool judged_next = grants != nullptr && grants->view()->filtering() &&
                             i + 1 < keys.size();
    if (auto s = judged_next ? status{} : sync(); !s) {
      outcome = s.take_error();
      break;
    }
    bool go_on = type_delay_ms_ > 0 ? pause_ms(type_delay_ms_)
                 : (*typed % 64 == 0 && wait_until) ? wait_until(clock_type::now())
                                                     : true;
    if (!go_on) {
      outcome = make_error(errc::cancelled, "stopped");
      break;
    }
  }
  for (size_t kc = 8; kc < down_.size(); ++kc) {
    if (key_refs_[kc] > 0 && !down_[kc]) set_down(uint8_t(kc), true);
  }
  if (auto s = sync(); !s && outcome) return s;
  return outcome;
}

status input_context::sync() {
  if (!conn_) return lost_display(display_);
  if (!x11_sync(conn_.get())) return lost_display(display_);
  return {};
}

bool input_context::holds_anything() const {
  if (buttons_ != 0) return true;
  return std::any_of(key_refs_.begin(), key_refs_.end(), [](uint16_t r) { return r > 0; });
}

void input_context::release_all() {
  if (!conn_ || xcb_connection_has_error(conn_.get())) return;
  release_held();
  restore_borrowed();
}

void input_context::release_held() {
  if (!conn_ || xcb_connection_has_error(conn_.get())) return;
  for (size_t kc = 0; kc < key_refs_.size(); ++kc) {
    key_refs_[kc] = 0;
    set_down(uint8_t(kc), false);
  }
  for (uint8_t b = 1; b < 32; ++b) {
    if (button_is_down(b)) button(b, false);
  }
  sync();
}

std::optional<clock_type::time_point> input_context::restore_due() const {
  if (borrowed_.empty()) return std::nullopt;
  auto last = clock_type::time_point::min();
  for (auto& [kc, b] : borrowed_) last = std::max(last, b.last_used);
  return last + kRestoreAfter;
}

void input_context::restore_borrowed() {
  if (borrowed_.empty() || !conn_) return;
  const xcb_keysym_t none[2] = {0, 0};
  for (auto& [kc, b] : borrowed_) {
    xcb_change_keyboard_mapping(conn_.get(), 1, kc, 2, none);
    guard_.borrowed(kc, false);
  }
  borrowed_.clear();
  reload_keymap_ = true;
  sync();
}

}  // namespace cu
