// The pointer and keyboard tools. Each handler validates its arguments and
// maps coordinates on the loop thread (where the coordinate session lives),
// then hands a gesture to the input actor, which performs it with XTest.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "input/keys.h"
#include "tools/args.h"
#include "tools/handlers.h"
#include "tools/tool_call.h"
#include "util/str_cat.h"

namespace cu {
namespace {

// Presses of a double or triple click are this far apart: well inside any
// toolkit's double-click time (250 ms at the least), yet distinct events.
constexpr double kMultiClickGapMs = 10;
// A drag pauses after the press and before the release so drag-and-drop
// protocols between clients (XDND) keep up, and moves in steps this long.
constexpr double kDragSettleMs = 30;
constexpr double kDragStepMs = 4;

std::string point_text(point p) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "(" + string.
  std::string out = "(";
  out += std::to_string(p.x);
  out += ", ";
  out += std::to_string(p.y);
  out += ')';
  return out;
}

std::string number_text(double d) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

error no_session() {
  return make_error(errc::no_session,
                    "no screenshot session yet: take a screenshot first, so coordinates have "
                    "an image to refer to");
}

// The device pixel the image-space coordinate argument `name` maps to.
result<point> device_point(tool_call& call, std::string_view name,
                           const std::array<double, 2>& c) {
  auto s = call.session();
  if (!s) return no_session();
  auto p = image_to_device(*s, c[0], c[1]);
  if (!p) return make_error(p.err().code, str_cat("Invalid argument \"", name, "\": ", p.err().message));
  return p;
}

result<point> required_point(tool_call& call, std::string_view name) {
  auto c = arg_coordinate(call.args, name);
  if (!c) return c.take_error();
  return device_point(call, name, *c);
}

result<std::optional<point>> optional_point(tool_call& call, std::string_view name) {
  auto c = arg_optional_coordinate(call.args, name);
  if (!c) return c.take_error();
  if (!*c) return std::optional<point>();
  auto p = device_point(call, name, **c);
  if (!p) return p.take_error();
  return std::optional<point>(*p);
}

// The keys of all chords as one chord, held together (a click's modifiers,
// a hold): at most kMaxChordKeys of them.
result<key_chord> held_together(const std::vector<key_chord>& chords) {
  key_chord all;
  for (const key_chord& c : chords) all.keys.insert(all.keys.end(), c.keys.begin(), c.keys.end());
  if (all.keys.size() > kMaxChordKeys) {
    return invalid_argument("text", str_cat("at most ", std::to_string(kMaxChordKeys),
                                            " keys to hold together"),
                            std::to_string(all.keys.size()) + " keys");
  }
  return all;
}

// Keys written as one or more chords, held together (modifiers for a click,
// the keys of a hold).
struct held_keys {
  key_chord chord;
  std::string text;
};

result<std::optional<held_keys>> optional_modifiers(tool_call& call) {
  simdjson::dom::element e;
  if (call.args.at_key("text").get(e) != simdjson::SUCCESS || e.is_null()) {
    return std::optional<held_keys>();
  }
  auto text = arg_string(call.args, "text");
  if (!text) return text.take_error();
  auto chords = parse_key_sequence(*text);
  if (!chords) return chords.take_error();
  auto all = held_together(*chords);
  if (!all) return all.take_error();
  return std::optional<held_keys>(held_keys{std::move(*all), std::string(*text)});
}

tool_result failed(const error& e) { return tool_result::failure(e.message); }

// Presses the modifiers (if any) and runs gesture, releasing them whatever
// happens.
template <class F>
tool_result with_modifiers(input_context& ctx, const std::optional<held_keys>& mods, F gesture) {
  std::vector<uint8_t> held;
  if (mods) {
    auto pressed = ctx.press_chord(mods->chord);
    if (!pressed) return failed(pressed.err());
    held = std::move(*pressed);
  }
  tool_result r = gesture();
  ctx.release_keys(held);
  if (auto s = ctx.sync(); !s && !r.is_error) return failed(s.err());
  return r;
}

void click(tool_call& call, uint8_t button, int count) {
  auto p = required_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  auto mods = optional_modifiers(call);
  if (!mods) return call.fail(mods.err().message);
  std::string label = std::string(call.tool_name()) + " at " + point_text(*p);
  if (*mods) label += " holding " + (*mods)->text;
  call.input([p = *p, button, count, mods = std::move(*mods), label](input_context& ctx,
                                                                     job_control&) {
    if (auto s = ctx.move_to(p); !s) return failed(s.err());
    return with_modifiers(ctx, mods, [&] {
      for (int i = 0; i < count; ++i) {
        if (i > 0 && !ctx.pause_ms(kMultiClickGapMs)) break;
        if (auto s = ctx.button(button, true); !s) return failed(s.err());
        if (auto s = ctx.button(button, false); !s) return failed(s.err());
      }
      return tool_result::text(label);
    });
  });
}

}  // namespace

void handle_left_click(tool_call& call) { click(call, 1, 1); }
void handle_right_click(tool_call& call) { click(call, 3, 1); }
void handle_middle_click(tool_call& call) { click(call, 2, 1); }
void handle_double_click(tool_call& call) { click(call, 1, 2); }
void handle_triple_click(tool_call& call) { click(call, 1, 3); }

void handle_mouse_move(tool_call& call) {
  auto p = required_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  call.input([p = *p](input_context& ctx, job_control&) {
    if (auto s = ctx.move_to(p); !s) return failed(s.err());
    if (auto s = ctx.sync(); !s) return failed(s.err());
    return tool_result::text("moved to " + point_text(p));
  });
}

void handle_left_click_drag(tool_call& call) {
  auto to = required_point(call, "coordinate");
  if (!to) return call.fail(to.err().message);
  auto from = optional_point(call, "start_coordinate");
  if (!from) return call.fail(from.err().message);
  call.input([to = *to, from = *from](input_context& ctx, job_control&) {
    point start;
    if (from) {
      start = *from;
    } else {
      auto here = ctx.pointer();
      if (!here) return failed(here.err());
      start = *here;
    }
    if (auto s = ctx.move_to(start); !s) return failed(s.err());
    if (auto s = ctx.button(1, true); !s) return failed(s.err());
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
  });
}

void handle_scroll(tool_call& call) {
  auto p = required_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  auto dir = arg_choice(call.args, "scroll_direction", {"up", "down", "left", "right"});
  if (!dir) return call.fail(dir.err().message);
  auto amount = arg_integer(call.args, "scroll_amount", 1, 1000);
  if (!amount) return call.fail(amount.err().message);
  auto mods = optional_modifiers(call);
  if (!mods) return call.fail(mods.err().message);
  // X wheel buttons: 4 up, 5 down, 6 left, 7 right.
  uint8_t button = *dir == "up" ? 4 : *dir == "down" ? 5 : *dir == "left" ? 6 : 7;
  std::string label = "scrolled " + std::string(*dir) + " " + std::to_string(*amount) + " at " +
                      point_text(*p);
  if (*mods) label += " holding " + (*mods)->text;
  call.input([p = *p, button, n = int(*amount), mods = std::move(*mods), label](
                 input_context& ctx, job_control&) {
    if (auto s = ctx.move_to(p); !s) return failed(s.err());
    return with_modifiers(ctx, mods, [&] {
      for (int i = 0; i < n; ++i) {
        if (auto s = ctx.button(button, true); !s) return failed(s.err());
        if (auto s = ctx.button(button, false); !s) return failed(s.err());
      }
      return tool_result::text(label);
    });
  });
}

void handle_left_mouse_down(tool_call& call) {
  auto p = optional_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  call.input([p = *p](input_context& ctx, job_control&) {
    if (ctx.button_is_down(1)) {
      return tool_result::failure(
          "the left button is already held (from left_mouse_down); call left_mouse_up first");
    }
    if (p) {
      if (auto s = ctx.move_to(*p); !s) return failed(s.err());
    }
    if (auto s = ctx.button(1, true); !s) return failed(s.err());
    // A round trip, so the answer is never about a press that went to a
    // server that had already gone.
    if (auto s = ctx.sync(); !s) return failed(s.err());
    auto at = ctx.pointer();
    if (!at) return failed(at.err());
    return tool_result::text("left button down at " + point_text(*at));
  });
}

void handle_left_mouse_up(tool_call& call) {
  auto p = optional_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  call.input([p = *p](input_context& ctx, job_control&) {
    if (!ctx.button_is_down(1)) {
      if (ctx.button_lost(1)) {
        return tool_result::text(
            "left button not held: the X server went away while it was down, and nothing is "
            "pressed on the display now; nothing to release");
      }
      return tool_result::text("left button not held (no left_mouse_down); nothing to release");
    }
    if (p) {
      if (auto s = ctx.move_to(*p); !s) return failed(s.err());
    }
    if (auto s = ctx.button(1, false); !s) return failed(s.err());
    if (auto s = ctx.sync(); !s) return failed(s.err());
    auto at = ctx.pointer();
    if (!at) return failed(at.err());
    return tool_result::text("left button up at " + point_text(*at));
  });
}

void handle_type(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  size_t characters = 0;
  auto keys = keystrokes_for_text(*text, &characters);
  if (!keys) return call.fail(keys.err().message);
  if (characters > kMaxTypeCharacters) {
    return call.fail(str_cat("Invalid argument \"text\": type takes at most ",
                             std::to_string(kMaxTypeCharacters), " characters per call, got ",
                             std::to_string(characters),
                             "; split the text over several calls, or write_clipboard it and "
                             "paste with key ctrl+v"));
  }
  call.input([keys = std::move(*keys), characters](input_context& ctx, job_control&) {
    size_t typed = 0;
    if (auto s = ctx.type(keys, &typed); !s) {
      return tool_result::failure("typed " + std::to_string(typed) + " of " +
                                  std::to_string(keys.size()) + " keystroke(s), then: " +
                                  s.err().message);
    }
    return tool_result::text("typed " + std::to_string(characters) + " character(s)");
  });
}

void handle_key(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  auto chords = parse_key_sequence(*text);
  if (!chords) return call.fail(chords.err().message);
  auto repeat = arg_integer(call.args, "repeat", 1, 1000, 1);
  if (!repeat) return call.fail(repeat.err().message);
  if (chords->size() * size_t(*repeat) > kMaxKeyTaps) {
    return call.fail(str_cat("Invalid argument \"repeat\": key taps at most ",
                             std::to_string(kMaxKeyTaps), " chords per call, got ",
                             std::to_string(chords->size()), " chord(s) x ",
                             std::to_string(*repeat), " = ",
                             std::to_string(chords->size() * size_t(*repeat))));
  }
  std::string label = "pressed " + std::string(*text);
  if (*repeat > 1) label += " x" + std::to_string(*repeat);
  call.input([chords = std::move(*chords), n = *repeat, label](input_context& ctx, job_control&) {
    for (int64_t i = 0; i < n; ++i) {
      for (size_t c = 0; c < chords.size(); ++c) {
        if ((i > 0 || c > 0) && ctx.type_delay_ms() > 0 && !ctx.pause_ms(ctx.type_delay_ms())) {
          return tool_result::failure("stopped");
        }
        if (auto s = ctx.tap_chord(chords[c]); !s) return failed(s.err());
      }
    }
    if (auto s = ctx.sync(); !s) return failed(s.err());
    return tool_result::text(label);
  });
}

void handle_hold_key(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  auto chords = parse_key_sequence(*text);
  if (!chords) return call.fail(chords.err().message);
  auto duration = arg_number(call.args, "duration", 0, true, 100);
  if (!duration) return call.fail(duration.err().message);
  auto all = held_together(*chords);
  if (!all) return call.fail(all.err().message);
  std::string label = "held " + std::string(*text) + " for " + number_text(*duration) + "s";
  call.input([all = std::move(*all), d = *duration, label](input_context& ctx, job_control& ctl) {
    auto pressed = ctx.press_chord(all);
    if (!pressed) return failed(pressed.err());
    if (auto s = ctx.sync(); !s) {
      ctx.release_keys(*pressed);
      return failed(s.err());
    }
    ctl.held_keys = std::move(*pressed);
    ctl.answer_at = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                            std::chrono::duration<double>(d));
    return tool_result::text(label);
  });
}

// Before any screenshot, the answer is in the image space a screenshot of
// the screen (or the switch_display area) would have now, as the reference
// server answers; no capture is made and no session is established.
void handle_cursor_position(tool_call& call) {
  std::optional<coord_session> session = call.session();
  std::optional<rect> area = call.display_area();
  call.input([session, area](input_context& ctx, job_control&) {
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
    auto p = ctx.pointer();
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
  }, /*read_only=*/true);
}

}  // namespace cu
