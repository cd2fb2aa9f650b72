// The pointer and keyboard tools. Each handler validates its arguments and
// maps coordinates on the loop thread (where the coordinate session lives),
// then hands a gesture (input/gestures.h) to the input actor, which performs
// it with XTest. With the marks toolset on, the pointer tools take a mark of
// the latest screenshot_marks map in place of a coordinate: the marks room
// resolves it (toolsets/mark_resolver.h), and the gesture checks on the
// actor, after its pacing and right before it presses, that nothing was
// drawn in the mark's box since its map; when something was, it presses
// nothing and the marks room finds the element again or refuses.
#include <charconv>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "input/gestures.h"
#include "input/keys.h"
#include "toolsets/args.h"
#include "toolsets/computer/room.h"
#include "toolsets/mark_resolver.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"
#include "util/utf8.h"

namespace cu {
namespace {

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

// The device pixel the image-space coordinate argument `name` maps to (a
// window's own pixel in a window's session).
result<device_target> device_point(tool_call& call, std::string_view name,
                                   const std::array<double, 2>& c) {
  auto s = call.session();
  if (!s) return no_session();
  auto p = image_to_device(*s, c[0], c[1]);
  if (!p) return make_error(p.err().code, str_cat("Invalid argument \"", name, "\": ", p.err().message));
  return device_target{*p, s->window};
}

// How an answer names a target: "(x, y)", and the window in its session.
std::string target_text(const device_target& t) {
  if (t.window == 0) return point_text(t.p);
  char id[16];
  snprintf(id, sizeof id, "0x%x", unsigned(t.window));
  return str_cat(point_text(t.p), " of window ", id);
}

result<device_target> required_point(tool_call& call, std::string_view name) {
  auto c = arg_coordinate(call.args, name);
  if (!c) return c.take_error();
  return device_point(call, name, *c);
}

result<std::optional<device_target>> optional_point(tool_call& call, std::string_view name) {
  auto c = arg_optional_coordinate(call.args, name);
  if (!c) return c.take_error();
  if (!*c) return std::optional<device_target>();
  auto p = device_point(call, name, **c);
  if (!p) return p.take_error();
  return std::optional<device_target>(*p);
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

result<std::optional<held_keys>> optional_modifiers(tool_call& call) {
  simdjson::dom::element e;
  if (call.args.at_key("text").get(e) != simdjson::SUCCESS || e.is_null()) {
    return std::optional<held_keys>();
  }
  auto text = arg_string(call.args, "text");
  if (!text) return text.take_error();
  auto chords = parse_key_sequence(*text);
  if (!chords) return chords.take_error();
  // Modifiers only: any other key would go to the window holding the
  // keyboard focus, which the click's point does not judge.
  for (const key_chord& c : *chords) {
    for (keysym_t k : c.keys) {
      if (is_modifier_key(k)) continue;
      return invalid_argument("text", "modifier keys only (shift, ctrl, alt, super, meta, "
                                      "hyper, altgr, and their sides such as lshift)",
                              str_cat("\"", text->substr(0, 128), "\""));
    }
  }
  if (auto no = system_combo_refusal(call.grants(), *call.policy().view(), *chords,
                                     call.tool_name(), *text)) {
    return make_error(errc::refused, std::move(*no));
  }
  auto all = held_together(*chords);
  if (!all) return all.take_error();
  return std::optional<held_keys>(held_keys{std::move(*all), std::string(*text)});
}

// A point a pointer tool takes: a coordinate, or, with the marks toolset,
// a mark of the latest map.
struct point_arg {
  std::string_view coordinate;
  std::string_view mark;
  bool required;
};

// A point as read: where, and how the answer names it when it was a mark.
struct aimed_point {
  std::optional<device_target> at;
  std::string by_mark;  // "mark 12 (push button \"Apply\")"; empty for a coordinate.
};

// What a gesture checks on the input actor right before it presses:
// whether the pointer reaches the window each mark it aims at is in, and
// whether the mark was drawn on since its map. When either fails it presses
// nothing, and unreachable (why) or stale says which mark.
struct press_check {
  std::vector<std::function<bool()>> drawn_on;  // One per mark; null: none.
  std::vector<device_target> at;                // One per mark.
  std::vector<uint32_t> window;                 // One per mark; 0: not known.
  std::shared_ptr<std::vector<bool>> stale;
  std::shared_ptr<std::vector<std::string>> unreachable;

  // Runs the checks: nothing when the gesture may press, else what it
  // answers instead. Both are made for every mark: a mark that is not
  // reached where its map saw it may have moved with its window (then it
  // was drawn on, and is found where it went) or be under another window
  // (a window mapped over it draws in its box too, and the search for it
  // among the elements shown does not find it, or finds it in its place).
  std::optional<tool_result> refuse(input_context& ctx) const {
    bool reached = true, clear = true;
    for (size_t i = 0; i < at.size(); ++i) {
      auto why = ctx.unreachable(at[i], window[i]);
      if (!why) return tool_result::failure(why.err());
      if (!why->empty()) {
        (*unreachable)[i] = std::move(*why);
        reached = false;
      }
      if (drawn_on[i] && drawn_on[i]()) {
        (*stale)[i] = true;
        clear = false;
      }
    }
    if (!clear) return tool_result::failure("stale");
    if (!reached) return tool_result::failure("unreachable");
    return std::nullopt;
  }
};

using aimed_action = std::function<void(tool_call&, std::vector<aimed_point>, press_check)>;

// How a target is named in an answer: the mark's name beside the place.
std::string aimed_text(const aimed_point& a) {
  return a.by_mark.empty() ? target_text(*a.at) : str_cat(a.by_mark, " at ", target_text(*a.at));
}

// The points as read, before the marks among them are resolved.
struct read_points {
  std::vector<aimed_point> points;
  std::vector<mark_ref> refs;
  std::vector<size_t> by_mark;  // Which points the refs fill.
};

// Reads the points: coordinates are mapped now, marks only checked to be
// numbers (aim resolves them).
result<read_points> read_pointer_args(tool_call& call, std::initializer_list<point_arg> wanted) {
  const bool marks_on = has(call.toolsets(), toolset::marks);
  read_points out;
  for (const point_arg& w : wanted) {
    const bool coordinate = arg_present(call.args, w.coordinate);
    const bool mark = marks_on && arg_present(call.args, w.mark);
    if (coordinate && mark) {
      return make_error(errc::invalid_argument,
                        str_cat("Invalid argument \"", w.mark, "\": give ", w.coordinate, " or ",
                                w.mark, ", not both"));
    }
    if (mark) {
      auto n = arg_integer(call.args, w.mark, 1, int64_t(1) << 30);
      if (!n) return n.take_error();
      out.by_mark.push_back(out.points.size());
      out.refs.push_back(mark_ref{w.mark, *n});
      out.points.push_back({});
      continue;
    }
    if (!coordinate && w.required && marks_on) {
      return make_error(errc::invalid_argument,
                        str_cat("Missing required argument \"", w.coordinate, "\" (or \"", w.mark,
                                "\", a number of the latest screenshot_marks map)"));
    }
    if (w.required) {
      auto p = required_point(call, w.coordinate);
      if (!p) return p.take_error();
      out.points.push_back({*p, {}});
    } else {
      auto p = optional_point(call, w.coordinate);
      if (!p) return p.take_error();
      out.points.push_back({*p, {}});
    }
  }
  return out;
}

// Hands the gesture (act) its points with the marks' aims filled in, and
// its check; a mark drawn on at the press is found again by the marks room
// (once: drawn on again, it is refused) and the gesture handed on anew.
// The notes of marks found elsewhere than their map drew them open the
// answer. A mark the pointer does not reach at the press is handed to the
// marks room, which presses it through its element's own action when
// by_action says the gesture is a plain left click, or refuses it.
void press(tool_call& call, std::vector<aimed_point> points, std::vector<size_t> by_mark,
           std::vector<mark_aim> aims, aimed_action act, bool by_action, bool found_again) {
  std::string notes;
  press_check check;
  check.stale = std::make_shared<std::vector<bool>>(aims.size(), false);
  check.unreachable = std::make_shared<std::vector<std::string>>(aims.size());
  for (size_t i = 0; i < aims.size(); ++i) {
    points[by_mark[i]].at = aims[i].at;
    points[by_mark[i]].by_mark = aims[i].text;
    if (!aims[i].note.empty()) notes += aims[i].note + "\n";
    check.drawn_on.push_back(aims[i].drawn_on);
    check.at.push_back(aims[i].at);
    check.window.push_back(aims[i].window);
  }
  // The input job is then checked against the X server the session was
  // captured from, as a coordinate's is.
  (void)call.session();
  call.then([notes, stale = check.stale, unreachable = check.unreachable, points, by_mark, aims,
             act, by_action, found_again](tool_call& after, tool_result r) mutable {
    bool any = false;
    for (size_t i = 0; i < aims.size(); ++i) {
      if (!(*stale)[i]) continue;
      any = true;
      if (found_again) {
        return after.fail(str_cat(aims[i].text, " is stale: the screen changed there again "
                                  "while it was found; take a new screenshot_marks"));
      }
    }
    auto* resolver = dynamic_cast<mark_resolver*>(after.service(toolset::marks));
    if (!any) {
      for (size_t i = 0; i < aims.size(); ++i) {
        if ((*unreachable)[i].empty()) continue;
        if (resolver == nullptr) return after.fail("acting by mark needs the marks toolset");
        return resolver->unreachable(after, aims[i], (*unreachable)[i], by_action);
      }
      if (!notes.empty() && !r.content.empty() &&
          r.content[0].type == content_block::kind::text) {
        r.content[0].text = notes + r.content[0].text;
      }
      return after.finish(std::move(r));
    }
    if (resolver == nullptr) return after.fail("acting by mark needs the marks toolset");
    resolver->again(after, aims, *stale, *unreachable, by_action,
                    [points = std::move(points), by_mark = std::move(by_mark), act, by_action](
                        tool_call& next, std::vector<mark_aim> found) mutable {
                      press(next, std::move(points), std::move(by_mark), std::move(found), act,
                            by_action, true);
                    });
  });
  act(call, std::move(points), std::move(check));
}

// Calls act with the points, in order, and the check its gesture makes
// before it presses; or fails the call, and nothing is pressed. by_action:
// the gesture is a plain left click, which an element's own action can
// stand in for where the pointer cannot reach it.
void aim(tool_call& call, read_points read, aimed_action act, bool by_action = false) {
  if (read.refs.empty()) return act(call, std::move(read.points), press_check{});
  auto* resolver = dynamic_cast<mark_resolver*>(call.service(toolset::marks));
  if (resolver == nullptr) return call.fail("acting by mark needs the marks toolset");
  auto aims = resolver->aim(call, read.refs);
  if (!aims) return call.fail(aims.err().message);
  press(call, std::move(read.points), std::move(read.by_mark), std::move(*aims), std::move(act),
        by_action, false);
}

void click(tool_call& call, uint8_t button, int count) {
  auto points = read_pointer_args(call, {{"coordinate", "mark", true}});
  if (!points) return call.fail(points.err().message);
  auto mods = optional_modifiers(call);
  if (!mods) return call.fail(mods.err().message);
  const bool plain_left = button == 1 && count == 1 && !*mods;
  aim(call, std::move(*points),
              [button, count, mods = std::move(*mods)](
                  tool_call& c, std::vector<aimed_point> at, press_check check) mutable {
                std::string label = std::string(c.tool_name()) + " at " + aimed_text(at[0]);
                if (mods) label += " holding " + mods->text;
                c.input([p = *at[0].at, button, count, mods = std::move(mods), label, check](
                            input_context& ctx, job_control&) {
                  if (auto no = check.refuse(ctx)) return *no;
                  return gesture::click(ctx, p, button, count, mods, label);
                });
              },
              plain_left);
}

}  // namespace

void handle_left_click(tool_call& call) { click(call, 1, 1); }
void handle_right_click(tool_call& call) { click(call, 3, 1); }
void handle_middle_click(tool_call& call) { click(call, 2, 1); }
void handle_double_click(tool_call& call) { click(call, 1, 2); }
void handle_triple_click(tool_call& call) { click(call, 1, 3); }

void handle_mouse_move(tool_call& call) {
  auto points = read_pointer_args(call, {{"coordinate", "mark", true}});
  if (!points) return call.fail(points.err().message);
  aim(call, std::move(*points), [](tool_call& c, std::vector<aimed_point> at, press_check check) {
    c.input([p = *at[0].at, check](input_context& ctx, job_control&) {
      if (auto no = check.refuse(ctx)) return *no;
      return gesture::move(ctx, p);
    });
  });
}

void handle_left_click_drag(tool_call& call) {
  auto points =
      read_pointer_args(call, {{"coordinate", "mark", true}, {"start_coordinate", "start_mark", false}});
  if (!points) return call.fail(points.err().message);
  aim(call, std::move(*points),
              [](tool_call& c, std::vector<aimed_point> at, press_check check) {
                c.input([to = *at[0].at, from = at[1].at, check](input_context& ctx,
                                                                 job_control&) {
                  if (auto no = check.refuse(ctx)) return *no;
                  return gesture::drag(ctx, from, to);
                });
              });
}

void handle_scroll(tool_call& call) {
  auto points = read_pointer_args(call, {{"coordinate", "mark", true}});
  if (!points) return call.fail(points.err().message);
  auto dir = arg_choice(call.args, "scroll_direction", {"up", "down", "left", "right"});
  if (!dir) return call.fail(dir.err().message);
  auto amount = arg_integer(call.args, "scroll_amount", 1, 1000);
  if (!amount) return call.fail(amount.err().message);
  auto mods = optional_modifiers(call);
  if (!mods) return call.fail(mods.err().message);
  // X wheel buttons: 4 up, 5 down, 6 left, 7 right.
  uint8_t button = *dir == "up" ? 4 : *dir == "down" ? 5 : *dir == "left" ? 6 : 7;
  aim(call, std::move(*points),
              [button, n = int(*amount), d = std::string(*dir), mods = std::move(*mods)](
                  tool_call& c, std::vector<aimed_point> at, press_check check) mutable {
                std::string label =
                    "scrolled " + d + " " + std::to_string(n) + " at " + aimed_text(at[0]);
                if (mods) label += " holding " + mods->text;
                c.input([p = *at[0].at, button, n, mods = std::move(mods), label, check](
                            input_context& ctx, job_control&) {
                  if (auto no = check.refuse(ctx)) return *no;
                  return gesture::scroll(ctx, p, button, n, mods, label);
                });
              });
}

void handle_left_mouse_down(tool_call& call) {
  auto p = optional_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  call.input([p = *p](input_context& ctx, job_control&) { return gesture::left_down(ctx, p); });
}

void handle_left_mouse_up(tool_call& call) {
  auto p = optional_point(call, "coordinate");
  if (!p) return call.fail(p.err().message);
  call.input([p = *p](input_context& ctx, job_control&) { return gesture::left_up(ctx, p); });
}

void handle_type(tool_call& call) {
  size_t characters = 0;
  auto keys = text_keystrokes(call.args, call.tool_name(), &characters);
  if (!keys) return call.fail(keys.err().message);
  call.input([keys = std::move(*keys), characters](input_context& ctx, job_control&) {
    return gesture::type(ctx, keys, characters);
  });
}

void handle_key(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  auto chords = parse_key_sequence(*text);
  if (!chords) return call.fail(chords.err().message);
  auto repeat = arg_integer(call.args, "repeat", 1, 1000, 1);
  if (!repeat) return call.fail(repeat.err().message);
  if (auto no = system_combo_refusal(call.grants(), *call.policy().view(), *chords,
                                     call.tool_name(), *text)) {
    return call.fail(*no);
  }
  if (chords->size() * size_t(*repeat) > kMaxKeyTaps) {
    return call.fail(str_cat("Invalid argument \"repeat\": key taps at most ",
                             std::to_string(kMaxKeyTaps), " chords per call, got ",
                             std::to_string(chords->size()), " chord(s) x ",
                             std::to_string(*repeat), " = ",
                             std::to_string(chords->size() * size_t(*repeat))));
  }
  std::string label = "pressed " + std::string(*text);
  if (*repeat > 1) label += " x" + std::to_string(*repeat);
  call.input([chords = std::move(*chords), n = *repeat, label](input_context& ctx,
                                                                job_control&) {
    return gesture::key(ctx, chords, n, label);
  });
}

void handle_hold_key(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  auto chords = parse_key_sequence(*text);
  if (!chords) return call.fail(chords.err().message);
  auto duration = arg_number(call.args, "duration", 0, true, 100);
  if (!duration) return call.fail(duration.err().message);
  if (auto no = system_combo_refusal(call.grants(), *call.policy().view(), *chords,
                                     call.tool_name(), *text)) {
    return call.fail(*no);
  }
  auto all = held_together(*chords);
  if (!all) return call.fail(all.err().message);
  std::string label = "held " + std::string(*text) + " for " + number_text(*duration) + "s";
  // A hold's length is known: progress can say how far along it is.
  call.expect_seconds(*duration);
  call.input([all = std::move(*all), d = *duration, label](input_context& ctx, job_control& ctl) {
    return gesture::hold(ctx, ctl, all, d, label);
  });
}

// Before any screenshot, the answer is in the image space a screenshot of
// the screen (or the switch_display area) would have now, as the reference
// server answers; no capture is made and no session is established.
void handle_cursor_position(tool_call& call) {
  std::optional<coord_session> session = call.session();
  std::optional<rect> area = call.display_area();
  call.input(
      [session, area](input_context& ctx, job_control&) {
        return gesture::cursor_position(ctx, session, area);
      },
      /*read_only=*/true);
}

}  // namespace cu
