#include "input/gestures.h"

#include <algorithm>
#include <cmath>

#include "util/seconds_text.h"
#include "util/str_cat.h"

namespace cu::gesture {
namespace {

// Presses of a double or triple click are this far apart: well inside any
// toolkit's double-click time (250 ms at the least), yet distinct events.
constexpr double kMultiClickGapMs = 10;
// A drag pauses after the press and before the release so drag-and-drop
// protocols between clients (XDND) keep up, and moves in steps this long.
constexpr double kDragSettleMs = 30;
constexpr double kDragStepMs = 4;

tool_result failed(const error& e) { return tool_result::failure(e); }

// Presses the modifiers (if any) and runs body, releasing them whatever
// happens.
template <class F>
tool_result with_modifiers(input_context& ctx, const std::optional<held_keys>& mods, F body) {
  std::vector<uint8_t> held;
  if (mods) {
    auto pressed = ctx.press_chord(mods->chord);
    if (!pressed) return failed(pressed.err());
    held = std::move(*pressed);
  }
  tool_result r = body();
  ctx.release_keys(held);
  if (auto s = ctx.sync(); !s && !r.is_error) return failed(s.err());
  return r;
}

}  // namespace

tool_result click(input_context& ctx, device_target t, uint8_t button, int count,
                  const std::optional<held_keys>& mods, const std::string& label) {
  auto p = ctx.place(t, true);
  if (!p) return failed(p.err());
  // The server is held from the judgement to the last release: no window
  // can map over the point in between (docs/grants.md, "One moment").
  auto held = ctx.hold_server();
  if (auto s = ctx.allowed_at(*p, "the click"); !s) return failed(s.err());
  if (auto s = ctx.move_to(*p); !s) return failed(s.err());
  return with_modifiers(ctx, mods, [&] {
    for (int i = 0; i < count; ++i) {
      if (i > 0 && !ctx.pause_ms(kMultiClickGapMs)) break;
      if (auto s = ctx.button(button, true); !s) return failed(s.err());
      if (auto s = ctx.button(button, false); !s) return failed(s.err());
    }
    return tool_result::text(label);
  });
}

tool_result move(input_context& ctx, device_target t) {
  auto p = ctx.place(t, false);
  if (!p) return failed(p.err());
  // Moving over a window reaches it too (hover, enter and motion events).
  auto held = ctx.hold_server();
  if (auto s = ctx.allowed_at(*p, "the move"); !s) return failed(s.err());
  if (auto s = ctx.move_to(*p); !s) return failed(s.err());
  if (auto s = ctx.sync(); !s) return failed(s.err());
  return tool_result::text("moved to " + point_text(*p));
}

tool_result drag(input_context& ctx, std::optional<device_target> from, device_target target) {
  point start;
  if (from) {
    auto p = ctx.place(*from, true);
    if (!p) return failed(p.err());
    start = *p;
  } else {
    auto here = ctx.pointer();
    if (!here) return failed(here.err());
    start = *here;
  }
  auto end = ctx.place(target, false);
  if (!end) return failed(end.err());
  const point to = *end;
  // Both ends, before anything is pressed: the release is a drop there.
  {
    auto held = ctx.hold_server();
    if (auto s = ctx.allowed_at(start, "the drag's start"); !s) return failed(s.err());
    if (auto s = ctx.allowed_at(to, "the drag's end"); !s) return failed(s.err());
    if (auto s = ctx.move_to(start); !s) return failed(s.err());
    if (auto s = ctx.button(1, true); !s) return failed(s.err());
    if (auto s = ctx.sync(); !s) return failed(s.err());
  }
  // Whatever happens from here on, the button comes back up.
  bool go_on = ctx.pause_ms(kDragSettleMs);
  double dist = std::hypot(double(to.x - start.x), double(to.y - start.y));
  int steps = std::clamp(int(dist / 8), 8, 40);
  for (int i = 1; go_on && i < steps; ++i) {
    point p{start.x + int(std::lround(double(to.x - start.x) * i / steps)),
            start.y + int(std::lround(double(to.y - start.y) * i / steps))};
    ctx.move_to(p);
    go_on = ctx.pause_ms(kDragStepMs);
  }
  ctx.move_to(to);
  if (go_on) ctx.pause_ms(kDragSettleMs);
  ctx.button(1, false);
  if (auto s = ctx.sync(); !s) return failed(s.err());
  return tool_result::text("dragged from " + point_text(start) + " to " + point_text(to));
}

tool_result scroll(input_context& ctx, device_target t, uint8_t button, int n,
                   const std::optional<held_keys>& mods, const std::string& label) {
  auto p = ctx.place(t, true);
  if (!p) return failed(p.err());
  {
    auto held = ctx.hold_server();
    if (auto s = ctx.allowed_at(*p, "the scroll"); !s) return failed(s.err());
    if (auto s = ctx.move_to(*p); !s) return failed(s.err());
    if (auto s = ctx.sync(); !s) return failed(s.err());
  }
  // Wheel clicks are paced (docs/input.md, "Pacing"): a browser sends a
  // wheel to the scroller under the pointer as it last knew it, and keeps
  // a burst latched to that target, so the first click waits until the
  // move has been taken; the clicks after it go one pacing window apart,
  // as a hand turns a wheel. A burst is dropped or merged in part, and
  // the same call scrolled a different distance each time.
  const double gap_ms = ctx.pacing_window_ms();
  if (gap_ms > 0) {
    if (auto s = ctx.sync(); !s) return failed(s.err());
    ctx.note_input();
    if (!ctx.pace()) return failed(error{errc::cancelled, "stopped"});
  }
  return with_modifiers(ctx, mods, [&] {
    for (int i = 0; i < n; ++i) {
      if (i > 0 && gap_ms > 0) {
        if (auto s = ctx.sync(); !s) return failed(s.err());
        if (!ctx.pause_ms(gap_ms)) return failed(error{errc::cancelled, "stopped"});
      }
      // Each wheel click is judged where it goes, with the server held:
      // a window may have mapped there during the pause.
      auto held = ctx.hold_server();
      if (auto s = ctx.allowed_at(*p, "the scroll"); !s) return failed(s.err());
      if (auto s = ctx.button(button, true); !s) return failed(s.err());
      if (auto s = ctx.button(button, false); !s) return failed(s.err());
      if (auto s = ctx.sync(); !s) return failed(s.err());
    }
    return tool_result::text(label);
  });
}

tool_result left_down(input_context& ctx, std::optional<device_target> at) {
  if (ctx.button_is_down(1)) {
    return tool_result::failure(
        "the left button is already held (from left_mouse_down); call left_mouse_up first");
  }
  {
    auto held = ctx.hold_server();
    if (at) {
      auto p = ctx.place(*at, true);
      if (!p) return failed(p.err());
      if (auto s = ctx.allowed_at(*p, "the press"); !s) return failed(s.err());
      if (auto s = ctx.move_to(*p); !s) return failed(s.err());
    } else {
      auto here = ctx.pointer();
      if (!here) return failed(here.err());
      if (auto s = ctx.allowed_at(*here, "the press"); !s) return failed(s.err());
    }
    if (auto s = ctx.button(1, true); !s) return failed(s.err());
    // A round trip, so the answer is never about a press that went to a
    // server that had already gone.
    if (auto s = ctx.sync(); !s) return failed(s.err());
  }
  auto here = ctx.pointer();
  if (!here) return failed(here.err());
  return tool_result::text("left button down at " + point_text(*here));
}

tool_result left_up(input_context& ctx, std::optional<device_target> at) {
  if (!ctx.button_is_down(1)) {
    if (ctx.button_lost(1)) {
      return tool_result::text(
          "left button not held: the X server went away while it was down, and nothing is "
          "pressed on the display now; nothing to release");
    }
    return tool_result::text("left button not held (no left_mouse_down); nothing to release");
  }
  if (at) {
    // The button comes up wherever the window went: only a window that is
    // gone or off screen stops it here, and then it is released below.
    auto p = ctx.place(*at, false);
    if (p) {
      if (auto s = ctx.allowed_at(*p, "the release"); !s) p = s.err();
    }
    if (p) {
      if (auto s = ctx.move_to(*p); !s) return failed(s.err());
    } else {
      // Never left down: released where the pointer is.
      ctx.button(1, false);
      ctx.sync();
      return failed(p.err());
    }
  }
  if (auto s = ctx.button(1, false); !s) return failed(s.err());
  if (auto s = ctx.sync(); !s) return failed(s.err());
  auto here = ctx.pointer();
  if (!here) return failed(here.err());
  return tool_result::text("left button up at " + point_text(*here));
}

tool_result type(input_context& ctx, const std::vector<typed_char>& keys, size_t characters) {
  size_t typed = 0;
  if (auto s = ctx.allowed_keys("typing"); !s) return failed(s.err());
  if (auto s = ctx.type(keys, &typed); !s) {
    if (typed == 0) return failed(s.err());
    return tool_result::failure("typed " + std::to_string(typed) + " of " +
                                std::to_string(keys.size()) + " keystroke(s), then: " +
                                s.err().message);
  }
  return tool_result::text("typed " + std::to_string(characters) + " character(s)");
}

tool_result key(input_context& ctx, const std::vector<key_chord>& chords, int64_t n,
                const std::string& label) {
  size_t tapped = 0;
  if (auto s = ctx.allowed_keys("pressing keys"); !s) return failed(s.err());
  const size_t total = chords.size() * size_t(n);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t c = 0; c < chords.size(); ++c) {
      if (tapped > 0) {
        // Paced as typing is: a round trip, then CU_TYPE_DELAY_MS if set;
        // without it, timers and cancellation are still served every 64.
        if (auto s = ctx.sync(); !s) return failed(s.err());
        bool go_on = ctx.type_delay_ms() > 0 ? ctx.pause_ms(ctx.type_delay_ms())
                     : (tapped % 64 == 0 && ctx.wait_until) ? ctx.wait_until(clock_type::now())
                                                             : true;
        if (!go_on) return tool_result::failure("stopped");
      }
      // Each key is judged as it goes down (input_context::judge_keys):
      // the focus may have moved since the last chord.
      if (auto s = ctx.tap_chord(chords[c], "pressing keys"); !s) {
        if (tapped == 0) return failed(s.err());
        return tool_result::failure("pressed " + std::to_string(tapped) + " of " +
                                    std::to_string(total) + " chord(s), then: " +
                                    s.err().message);
      }
      ++tapped;
    }
  }
  if (auto s = ctx.sync(); !s) return failed(s.err());
  return tool_result::text(label);
}

tool_result hold(input_context& ctx, job_control& ctl, const key_chord& all, double seconds,
                 const std::string& label) {
  const auto started = clock_type::now();
  if (auto s = ctx.allowed_keys("hold_key"); !s) return failed(s.err());
  auto pressed = ctx.press_chord(all, "hold_key");
  if (!pressed) return failed(pressed.err());
  if (auto s = ctx.sync(); !s) {
    // The server went away with the keys down: they went up with it. Said
    // as a hold that ends early says it (input_actor::finish_hold).
    ctx.release_keys(*pressed);
    return tool_result::failure("hold_key ended early after " +
                                elapsed_text(clock_type::now() - started) + "s: " +
                                s.err().message + " during the hold; nothing is held on the display");
  }
  ctl.held_keys = std::move(*pressed);
  ctl.answer_at = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                          std::chrono::duration<double>(seconds));
  return tool_result::text(label);
}

tool_result cursor_position(input_context& ctx, const std::optional<coord_session>& session,
                            const std::optional<rect>& area) {
  coord_session s;
  if (session) {
    s = *session;
  } else {
    auto screen = ctx.screen_rect();
    if (!screen) return failed(screen.err());
    rect device = area ? intersect(*area, *screen) : *screen;
    if (device.w == 0) device = *screen;
    s = make_session(device);
  }
  auto p = s.window != 0 ? ctx.pointer_in(s.window) : ctx.pointer();
  if (!p) return failed(p.err());
  point img = device_to_image(s, *p);
  std::string json = "[";
  json += std::to_string(img.x);
  json += ", ";
  json += std::to_string(img.y);
  json += ']';
  tool_result r = tool_result::text(std::move(json));
  r.structured = str_cat("{\"x\":", std::to_string(img.x), ",\"y\":", std::to_string(img.y), "}");
  return r;
}

}  // namespace cu::gesture
