// The a11y toolset: seed 004's tools over AT-SPI. Each handler validates
// its arguments here, on the loop thread, and hands the work to the a11y
// thread (a11y/app_ops.h); what then needs the screen or the input devices
// is chained (tool_call::then) to the capture pool (get_app_state's image
// of the window) or the input actor (a pointer click where an element has
// no action of its own, keys typed into a window), so the answer is one.
#include <cmath>
#include <string>
#include <vector>

#include "build_config.h"
#include "core/json_writer.h"
#include "input/gestures.h"
#include "input/keys.h"
#include "toolsets/args.h"
#include "toolsets/a11y/room.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"
#include "util/utf8.h"

#if CU_HAVE_A11Y
#include "a11y/app_ops.h"
#include "x11/windows.h"
#endif

namespace cu {

#if CU_HAVE_A11Y
namespace {

// A page of scroll_app, in wheel clicks: GTK scrolls a view by about a
// fifth of its page per click.
constexpr int kWheelClicksPerPage = 5;

// What the jobs judge their application by: the grants' view now, and the
// tool's name for a refusal.
a11y_grant_check grant_check(tool_call& call) {
  return a11y_grant_check{call.policy().view(), std::string(call.tool_name())};
}

result<std::string> app_argument(tool_call& call) {
  auto app = arg_name(call.args, "app", 256);
  if (!app) return app.take_error();
  return std::string(*app);
}

void write_element_ref(json_writer& j, const a11y_element_ref& e) {
  j.key("element").begin_object();
  if (e.index >= 0) j.key("index").number(int64_t(e.index));
  j.key("role").string(e.role).key("name").string(e.name);
  if (!e.resolved.empty() && e.resolved != "focused") j.key("resolved").string(e.resolved);
  j.end_object();
}

// The JSON answer of an action.
tool_result action_result(const a11y_outcome& o, std::optional<point> pointer = std::nullopt) {
  std::string json;
  json_writer j(json);
  j.begin_object().key("app").string(o.app.name);
  if (o.element) write_element_ref(j, *o.element);
  j.key("method").string(o.method);
  if (!o.action.empty()) j.key("action").string(o.action);
  if (pointer) {
    j.key("point").begin_object().key("x").number(int64_t(pointer->x));
    j.key("y").number(int64_t(pointer->y)).end_object();
  }
  if (o.method == "value" || (o.method == "editable_text" && !o.value.empty())) {
    j.key("value").string(o.value);
  }
  std::string note = o.note;
  if (o.element && o.element->resolved == "role_and_name") {
    note += str_cat(note.empty() ? "" : "; ",
                    "the element had moved in the tree; it was found again by its role and name");
  }
  if (!note.empty()) j.key("note").string(note);
  j.end_object();
  return tool_result::json(std::move(json));
}

// The element's frame in the image's pixels: the window's session is in
// the window's own pixels, the screen's in the root's.
std::optional<rect> image_frame(const std::optional<rect>& device, const coord_session& s,
                                const std::optional<app_window>& w) {
  if (!device) return std::nullopt;
  rect r = *device;
  if (s.window != 0) {
    if (!w || w->id != s.window) return std::nullopt;
    r.x -= w->device.x;
    r.y -= w->device.y;
  }
  return device_rect_to_image(s, r);
}

// get_app_state's answer: the tree as text with the image, and the same
// as structured content.
tool_result app_state_result(const a11y_app_state& st, tool_result image,
                             const std::optional<coord_session>& s) {
  std::vector<a11y_element> shown = st.walk.elements;
  for (a11y_element& e : shown) {
    e.frame = s ? image_frame(e.frame, *s, st.window) : std::nullopt;
  }
  std::string text = str_cat("App: ", st.app.name, " (pid ", std::to_string(st.app.pid), ")\n");
  if (st.window) {
    text += str_cat("Window: \"", st.window->title, "\" ", window_id_text(st.window->id));
  } else {
    text += "Window: none found on this display; the image is the whole screen";
  }
  if (s) {
    text += str_cat(", image ", std::to_string(s->image.w), "x", std::to_string(s->image.h),
                    " (frames below are its pixels)");
  }
  text += str_cat("\nSnapshot: ", std::to_string(st.snapshot), "\n");
  if (st.focused) {
    const a11y_element& f = st.walk.elements[size_t(*st.focused)];
    text += str_cat("Focused: ", std::to_string(f.index), " ", f.role, " \"", f.name, "\"\n");
  } else {
    text += "Focused: none\n";
  }
  if (st.selected_text) text += str_cat("Selected text: \"", *st.selected_text, "\"\n");
  text += str_cat("Elements: ", std::to_string(shown.size()));
  if (st.walk.truncated_nodes) text += " (cut at max_nodes)";
  if (st.walk.truncated_depth) text += " (deeper elements left out at max_depth)";
  text += "\n";
  text += render_tree(shown);
  std::string note;
  if (image.is_error) {
    for (const content_block& b : image.content) {
      if (b.type == content_block::kind::text) note = "no image: " + b.text;
    }
    text += "\n" + note + "\n";
  }

  std::string json;
  json_writer j(json);
  j.begin_object().key("app").begin_object().key("name").string(st.app.name);
  j.key("pid").number(int64_t(st.app.pid)).key("bus_name").string(st.app.bus_name).end_object();
  j.key("snapshot").number(int64_t(st.snapshot));
  j.key("window");
  if (st.window) {
    j.begin_object().key("id").string(window_id_text(st.window->id));
    j.key("title").string(st.window->title).key("device");
    write_rect(j, st.window->device);
    j.end_object();
  } else {
    j.null();
  }
  j.key("image").begin_object();
  j.key("width").number(int64_t(s ? s->image.w : 0));
  j.key("height").number(int64_t(s ? s->image.h : 0)).end_object();
  j.key("focused");
  if (st.focused) j.number(int64_t(*st.focused)); else j.null();
  j.key("selected_text");
  if (st.selected_text) j.string(*st.selected_text); else j.null();
  j.key("elements").begin_array();
  for (size_t i = 0; i < shown.size(); ++i) {
    const a11y_element& e = shown[i];
    j.begin_object().key("index").number(int64_t(e.index)).key("depth").number(int64_t(e.depth));
    j.key("role").string(e.role).key("name").string(e.name);
    if (!e.value.empty()) j.key("value").string(e.value);
    j.key("states").begin_array();
    for (const std::string& x : e.states) j.string(x);
    j.end_array().key("actions").begin_array();
    for (const std::string& x : e.actions) j.string(x);
    j.end_array();
    if (e.frame) {
      j.key("frame");
      write_rect(j, *e.frame);
    }
    if (st.walk.elements[i].frame) {
      j.key("device");
      write_rect(j, *st.walk.elements[i].frame);
    }
    j.end_object();
  }
  j.end_array();
  j.key("truncated").boolean(st.walk.truncated_nodes || st.walk.truncated_depth);
  if (st.walk.skipped > 0) j.key("skipped").number(int64_t(st.walk.skipped));
  if (!note.empty()) j.key("note").string(note);
  j.end_object();

  tool_result r = tool_result::text(std::move(text));
  for (content_block& b : image.content) {
    if (b.type == content_block::kind::image) r.content.push_back(std::move(b));
  }
  r.structured = std::move(json);
  return r;
}

// The image pixel (x, y) of the coordinate session, as a device target.
result<device_target> session_point(tool_call& call, std::string_view xname, std::string_view yname) {
  auto x = arg_integer(call.args, xname, -1000000, 1000000);
  if (!x) return x.take_error();
  auto y = arg_integer(call.args, yname, -1000000, 1000000);
  if (!y) return y.take_error();
  auto s = call.session();
  if (!s) {
    return make_error(errc::no_session,
                      "no screenshot yet: call get_app_state (or screenshot) first, so x and y "
                      "have an image to refer to");
  }
  auto p = image_to_device(*s, double(*x), double(*y));
  if (!p) {
    return make_error(p.err().code, str_cat("Invalid argument \"", xname, "\"/\"", yname,
                                            "\": ", p.err().message));
  }
  return device_target{*p, s->window};
}

// Optional element_index, or x and y: exactly one of the two.
struct target_args {
  std::optional<int> index;
  std::optional<device_target> at;
};

result<target_args> element_or_point(tool_call& call) {
  target_args t;
  const bool by_index = arg_present(call.args, "element_index");
  const bool by_x = arg_present(call.args, "x"), by_y = arg_present(call.args, "y");
  if (by_index && (by_x || by_y)) {
    return invalid_argument("element_index", "either element_index or x and y, not both");
  }
  if (by_index) {
    auto i = arg_integer(call.args, "element_index", 0, 1000000);
    if (!i) return i.take_error();
    t.index = int(*i);
    return t;
  }
  if (!by_x && !by_y) {
    return invalid_argument("element_index", "element_index (from get_app_state) or x and y",
                            "neither");
  }
  auto p = session_point(call, "x", "y");
  if (!p) return p.take_error();
  t.at = *p;
  return t;
}

}  // namespace

void handle_list_apps(tool_call& call) {
  call.a11y(make_list_apps(call.policy().view()));
}

void handle_get_app_state(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto nodes = arg_integer(call.args, "max_nodes", 1, 5000, 2000);
  if (!nodes) return call.fail(nodes.err().message);
  auto depth = arg_integer(call.args, "max_depth", 1, 64, 64);
  if (!depth) return call.fail(depth.err().message);
  walk_limits limits;
  limits.max_nodes = int(*nodes);
  limits.max_depth = int(*depth);
  auto st = std::make_shared<a11y_app_state>();
  std::optional<rect> area = call.display_area();
  call.then([st, area](tool_call& next, tool_result r) {
    if (r.is_error) return next.finish(std::move(r));
    // The image of the app's window (the whole screen when X shows none),
    // which becomes the coordinate session.
    capture_job job;
    job.what = capture_job::kind::screenshot;
    job.area = area;
    job.window = st->window ? st->window->id : 0;
    next.then([st](tool_call& last, tool_result image) {
      last.finish(app_state_result(*st, std::move(image), last.session()));
    });
    next.capture(std::move(job));
  });
  call.a11y(make_get_app_state(std::move(*app), limits, st, grant_check(call)));
}

void handle_a11y_click(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto count = arg_integer(call.args, "click_count", 1, 3, 1);
  if (!count) return call.fail(count.err().message);
  auto target = element_or_point(call);
  if (!target) return call.fail(target.err().message);
  auto out = std::make_shared<a11y_outcome>();
  const int n = int(*count);
  if (target->at) {
    out->app.name = *app;
    out->method = "pointer";
    device_target at = *target->at;
    call.then([out](tool_call& next, tool_result r) {
      if (r.is_error) return next.finish(std::move(r));
      next.finish(action_result(*out));
    });
    call.input([at, n](input_context& ctx, job_control&) {
      return gesture::click(ctx, at, 1, n, std::nullopt, "clicked");
    });
    return;
  }
  element_request req;
  req.what = element_request::kind::click;
  req.index = *target->index;
  req.click_count = n;
  call.then([out, n](tool_call& next, tool_result r) {
    if (r.is_error || !out->pointer) {
      return next.finish(r.is_error ? std::move(r) : action_result(*out));
    }
    // No action of its own: the pointer clicks its center.
    point p = *out->pointer;
    next.then([out, p](tool_call& last, tool_result done) {
      if (done.is_error) return last.finish(std::move(done));
      last.finish(action_result(*out, p));
    });
    next.input([p, n](input_context& ctx, job_control&) {
      return gesture::click(ctx, device_target{p, 0}, 1, n, std::nullopt, "clicked");
    });
  });
  call.a11y(make_element_job(std::move(*app), req, out, grant_check(call)));
}

void handle_perform_secondary_action(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto index = arg_integer(call.args, "element_index", 0, 1000000);
  if (!index) return call.fail(index.err().message);
  auto action = arg_name(call.args, "action", 256);
  if (!action) return call.fail(action.err().message);
  auto out = std::make_shared<a11y_outcome>();
  element_request req;
  req.what = element_request::kind::secondary;
  req.index = int(*index);
  req.action = std::string(*action);
  call.then([out](tool_call& next, tool_result r) {
    next.finish(r.is_error ? std::move(r) : action_result(*out));
  });
  call.a11y(make_element_job(std::move(*app), req, out, grant_check(call)));
}

void handle_set_value(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto index = arg_integer(call.args, "element_index", 0, 1000000);
  if (!index) return call.fail(index.err().message);
  auto value = arg_string(call.args, "value");
  if (!value) return call.fail(value.err().message);
  if (value->size() > 100000) {
    return call.fail(str_cat("Invalid argument \"value\": at most 100000 bytes, got ",
                             std::to_string(value->size())));
  }
  // C strings carry the value to the application (libatspi, D-Bus): a NUL
  // would cut it there, and the answer would claim the whole was set.
  if (value->find('\0') != std::string_view::npos) {
    return call.fail(str_cat("Invalid argument \"value\": it holds a NUL character (U+0000) at "
                             "byte ", std::to_string(value->find('\0')),
                             ", which no text field can take; leave it out"));
  }
  // The keys of the keyboard fallback, made now so that a value the
  // keyboard cannot type is refused before anything is focused. One longer
  // than the keyboard types per call (type_text's limit) gets none: the
  // a11y thread refuses the fallback for it, and the value still goes to
  // a field that takes it through EditableText.
  element_request req;
  req.characters = count_code_points(*value);
  req.max_typed = kMaxTypeCharacters;
  size_t characters = 0;
  std::vector<typed_char> typed;
  if (req.characters <= req.max_typed) {
    auto keys = keystrokes_for_text(*value, &characters);
    if (!keys) {
      // The keyboard's message names its own argument, "text".
      std::string why = keys.err().message;
      constexpr std::string_view kText = "Invalid argument \"text\": ";
      if (why.starts_with(kText)) why.erase(0, kText.size());
      return call.fail(str_cat("Invalid argument \"value\": ", why));
    }
    typed = std::move(*keys);
  }
  auto out = std::make_shared<a11y_outcome>();
  req.what = element_request::kind::set_value;
  req.index = int(*index);
  req.value = std::string(*value);
  call.then([out, keys = std::move(typed), characters](tool_call& next, tool_result r) {
    if (r.is_error || out->method != "keyboard") {
      return next.finish(r.is_error ? std::move(r) : action_result(*out));
    }
    // No EditableText: the field has the focus; ctrl+a selects what it
    // holds, and typing replaces it.
    next.then([out](tool_call& last, tool_result done) {
      last.finish(done.is_error ? std::move(done) : action_result(*out));
    });
    next.input([keys, characters](input_context& ctx, job_control&) {
      static const std::vector<key_chord> kSelectAll = parse_key_sequence("ctrl+a").value();
      tool_result selected = gesture::key(ctx, kSelectAll, 1, "selected all");
      if (selected.is_error) return selected;
      return gesture::type(ctx, keys, characters);
    });
  });
  call.a11y(make_element_job(std::move(*app), req, out, grant_check(call)));
}

void handle_scroll_app(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto pages = arg_number(call.args, "pages", -100, false, 100);
  if (!pages) return call.fail(pages.err().message);
  if (*pages == 0) return call.fail("Invalid argument \"pages\": 0 scrolls nothing");
  auto target = element_or_point(call);
  if (!target) return call.fail(target.err().message);
  const int clicks = std::max(1, int(std::lround(std::fabs(*pages) * kWheelClicksPerPage)));
  const uint8_t button = *pages < 0 ? 4 : 5;
  auto out = std::make_shared<a11y_outcome>();
  out->note = str_cat(std::to_string(clicks), " wheel clicks ", *pages < 0 ? "up" : "down");
  auto scroll_at = [out, clicks, button](tool_call& c, device_target at, std::optional<point> shown) {
    c.then([out, shown](tool_call& last, tool_result done) {
      if (done.is_error) return last.finish(std::move(done));
      last.finish(action_result(*out, shown));
    });
    c.input([at, clicks, button](input_context& ctx, job_control&) {
      return gesture::scroll(ctx, at, button, clicks, std::nullopt, "scrolled");
    });
  };
  if (target->at) {
    out->app.name = *app;
    out->method = "pointer";
    return scroll_at(call, *target->at, std::nullopt);
  }
  element_request req;
  req.what = element_request::kind::locate;
  req.index = *target->index;
  call.then([out, scroll_at](tool_call& next, tool_result r) {
    if (r.is_error) return next.finish(std::move(r));
    point p = *out->pointer;
    scroll_at(next, device_target{p, 0}, p);
  });
  call.a11y(make_element_job(std::move(*app), req, out, grant_check(call)));
}

void handle_a11y_drag(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto from = session_point(call, "from_x", "from_y");
  if (!from) return call.fail(from.err().message);
  auto to = session_point(call, "to_x", "to_y");
  if (!to) return call.fail(to.err().message);
  auto out = std::make_shared<a11y_outcome>();
  out->app.name = *app;
  out->method = "pointer";
  auto drag = [out, from = *from, to = *to](tool_call& c) {
    c.then([out](tool_call& next, tool_result r) {
      next.finish(r.is_error ? std::move(r) : action_result(*out));
    });
    c.input([from, to](input_context& ctx, job_control&) { return gesture::drag(ctx, from, to); });
  };
  // Under grants the application is judged first, on the a11y thread,
  // and nothing is pressed when it is not allowed; otherwise the drag
  // needs no bus call.
  if (!call.policy().view()->filtering()) return drag(call);
  call.then([drag](tool_call& next, tool_result r) {
    if (r.is_error) return next.finish(std::move(r));
    drag(next);
  });
  call.a11y(make_app_check(std::move(*app), grant_check(call)));
}

void handle_type_text(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  size_t characters = 0;
  auto keys = text_keystrokes(call.args, call.tool_name(), &characters);
  if (!keys) return call.fail(keys.err().message);
  std::string_view text = arg_string(call.args, "text").value();
  auto out = std::make_shared<a11y_outcome>();
  call.then([out, keys = std::move(*keys), characters](tool_call& next, tool_result r) {
    if (r.is_error || out->method != "keyboard") {
      return next.finish(r.is_error ? std::move(r) : action_result(*out));
    }
    next.then([out](tool_call& last, tool_result done) {
      last.finish(done.is_error ? std::move(done) : action_result(*out));
    });
    next.input([keys, characters](input_context& ctx, job_control&) {
      return gesture::type(ctx, keys, characters);
    });
  });
  call.a11y(make_keyboard_job(std::move(*app), std::string(text), out, grant_check(call)));
}

void handle_press_key(tool_call& call) {
  auto app = app_argument(call);
  if (!app) return call.fail(app.err().message);
  auto key = arg_string(call.args, "key");
  if (!key) return call.fail(key.err().message);
  auto chords = parse_key_sequence(*key);
  if (!chords) return call.fail(str_cat("Invalid argument \"key\": ", chords.err().message));
  // The computer toolset's key refuses these too: a system key combo acts
  // on the desktop (the window manager, the session), whichever window the
  // keys are sent to, so a grant of the application does not cover it.
  if (auto no = system_combo_refusal(call.grants(), *call.policy().view(), *chords,
                                     call.tool_name(), *key)) {
    return call.fail(*no);
  }
  auto out = std::make_shared<a11y_outcome>();
  out->action = std::string(*key);
  std::string label = str_cat("pressed ", *key);
  call.then([out, chords = std::move(*chords), label](tool_call& next, tool_result r) {
    if (r.is_error) return next.finish(std::move(r));
    next.then([out](tool_call& last, tool_result done) {
      last.finish(done.is_error ? std::move(done) : action_result(*out));
    });
    next.input([chords, label](input_context& ctx, job_control&) {
      return gesture::key(ctx, chords, 1, label);
    });
  });
  call.a11y(make_keyboard_job(std::move(*app), std::nullopt, out, grant_check(call)));
}

#else  // Without libatspi the toolset cannot be switched on (parse_toolsets).

namespace {
void not_built(tool_call& call) {
  call.fail("this server was built without the a11y toolset (libatspi2.0-dev)");
}
}  // namespace

void handle_list_apps(tool_call& call) { not_built(call); }
void handle_get_app_state(tool_call& call) { not_built(call); }
void handle_a11y_click(tool_call& call) { not_built(call); }
void handle_perform_secondary_action(tool_call& call) { not_built(call); }
void handle_scroll_app(tool_call& call) { not_built(call); }
void handle_a11y_drag(tool_call& call) { not_built(call); }
void handle_type_text(tool_call& call) { not_built(call); }
void handle_press_key(tool_call& call) { not_built(call); }
void handle_set_value(tool_call& call) { not_built(call); }

#endif

}  // namespace cu
