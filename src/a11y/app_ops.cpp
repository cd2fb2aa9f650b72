#include "a11y/app_ops.h"

#include <atspi/atspi.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

#include "a11y/atspi_util.h"
#include "core/json_writer.h"
#include "util/ascii.h"
#include "util/str_cat.h"
#include "x11/app_identity.h"

namespace cu {

using namespace cu::atspi;

// An application's latest snapshot: the elements as the caller saw them,
// with their objects, so an index is applied to the element it named.
struct a11y_snapshot {
  uint64_t id = 0;
  std::vector<a11y_element> elements;
  std::vector<gobj<AtspiAccessible>> objects;  // By index.
  size_t max_text = 200;  // How names were cut, to compare them again.
};

// Applications whose latest snapshot is kept.
constexpr size_t kMaxSnapshots = 16;

// An application that did not answer a job's call in time.
struct hung_app {
  std::string named;  // As the job named it.
  std::string name;   // Its name on the bus, when known.
  int pid = 0;
  a11y_clock::time_point when{};
};

struct a11y_memory {
  uint64_t next_snapshot = 0;
  // By the application's bus name (several applications may share a pid).
  std::map<std::string, a11y_snapshot> snapshots;
  // Applications that timed out within kHungMemory.
  std::vector<hung_app> hung;
};

std::shared_ptr<a11y_memory> make_a11y_memory() { return std::make_shared<a11y_memory>(); }

std::optional<error> refuse_hung(a11y_memory& m, const std::string& app) {
  if (app.empty()) return std::nullopt;
  const auto now = a11y_clock::now();
  std::erase_if(m.hung, [&](const hung_app& h) { return now - h.when >= kHungMemory; });
  for (const hung_app& h : m.hung) {
    const bool same = iequals(app, h.named) || (!h.name.empty() && iequals(app, h.name)) ||
                      (h.pid > 0 && app == std::to_string(h.pid));
    if (!same) continue;
    auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(now - h.when).count();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kHungMemory - (now - h.when))
                    .count();
    std::string who = h.name.empty() ? str_cat("\"", app, "\"") : h.name;
    if (h.pid > 0) who += str_cat(" (pid ", std::to_string(h.pid), ")");
    return make_error(errc::timed_out,
                      str_cat(who, " did not answer ", std::to_string(ago),
                              " ms ago (hung or stopped?): refused without asking it again for ",
                              std::to_string(left), " ms more; list_apps shows whether it answers"));
  }
  return std::nullopt;
}

namespace {

class function_job final : public a11y_op {
 public:
  using body = std::function<std::optional<tool_result>(const a11y_control&)>;
  explicit function_job(body f) : f_(std::move(f)) {}
  std::optional<tool_result> run(const a11y_control& c) override {
    if (c.cancelled()) return std::nullopt;
    return f_(c);
  }

 private:
  body f_;
};

std::optional<tool_result> fail(const error& e) {
  if (e.code == errc::cancelled) return std::nullopt;
  return tool_result::failure(e);
}

// fail(e) for a job on the application `named` (app: what the bus said of
// it, when it was found): a timeout is remembered, so that the next jobs
// naming it are refused at once (refuse_hung) rather than each waiting.
std::optional<tool_result> fail_app(const a11y_control& c, const std::string& named,
                                    const a11y_app* app, const error& e) {
  if (e.code == errc::timed_out && c.memory != nullptr) {
    hung_app h;
    h.named = named;
    if (app != nullptr) {
      h.name = app->name;
      h.pid = app->pid;
    }
    h.when = a11y_clock::now();
    c.memory->hung.push_back(std::move(h));
  }
  return fail(e);
}

// The grants' refusal of the job on app, or nothing when they allow it.
std::optional<tool_result> refuse_app(const a11y_grant_check& g, const a11y_app& app) {
  if (!g.view || !g.view->filtering()) return std::nullopt;
  const app_identity who = process_identity(uint32_t(std::max(app.pid, 0)), app.name);
  const grant_view::verdict v = g.view->judge(who);
  if (v == grant_view::verdict::allowed) return std::nullopt;
  return tool_result::failure(g.view->refusal(
      g.doing, str_cat("the accessible application (pid ", std::to_string(app.pid), ") is"), who,
      v));
}

bool has_state(const a11y_element& e, std::string_view s) {
  return std::find(e.states.begin(), e.states.end(), s) != e.states.end();
}

// The top-level windows of a walk (depth 1), as hints for X.
std::vector<a11y_window_hint> window_hints(const walk_outcome& w) {
  std::vector<a11y_window_hint> out;
  for (const a11y_element& e : w.elements) {
    if (e.depth != 1) continue;
    if (!has_state(e, "showing") && !has_state(e, "visible")) continue;
    out.push_back(a11y_window_hint{e.name, e.frame, has_state(e, "active")});
  }
  return out;
}

// The selected text of the element obj (its first selection), if any.
std::optional<std::string> selected_text(AtspiAccessible* obj, bus_calls& calls, size_t max) {
  if (!calls.before()) return std::nullopt;
  gobj<AtspiText> t{atspi_accessible_get_text_iface(obj)};
  if (!t) return std::nullopt;
  GError* err = nullptr;
  if (!calls.before()) return std::nullopt;
  int n = atspi_text_get_n_selections(t.get(), &err);
  if (err != nullptr || n <= 0) {
    if (err != nullptr) g_error_free(err);
    return std::nullopt;
  }
  if (!calls.before()) return std::nullopt;
  AtspiRange* r = atspi_text_get_selection(t.get(), 0, &err);
  if (err != nullptr || r == nullptr) {
    if (err != nullptr) g_error_free(err);
    g_free(r);
    return std::nullopt;
  }
  int start = r->start_offset, end = r->end_offset;
  g_free(r);
  if (end <= start) return std::nullopt;
  if (!calls.before()) return std::nullopt;
  std::string s = take(atspi_text_get_text(t.get(), start, end, &err));
  if (err != nullptr) {
    g_error_free(err);
    return std::nullopt;
  }
  return clip_text(std::move(s), max);
}

// A live element found again, with what is read of it now.
struct live_element {
  gobj<AtspiAccessible> obj;
  a11y_element_ref ref;
  std::vector<std::string> actions;
  std::vector<std::string> states;
  std::optional<rect> frame;
  // Its top-level window's frame, as the snapshot saw it.
  std::optional<rect> window_frame;
};

// Whether obj is now an element of this role and name (its properties read
// afresh: libatspi's cache would still answer for a destroyed widget).
// An error only when the application did not answer.
result<bool> is_element(AtspiAccessible* obj, const a11y_element& want, size_t max_text,
                        bus_calls& calls) {
  atspi_accessible_clear_cache(obj);
  GError* err = nullptr;
  if (auto x = calls.before(); !x) return x.take_error();
  std::string role = take(atspi_accessible_get_role_name(obj, &err));
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x.take_error();
    return false;
  }
  if (calls.used_up()) {
    auto x = calls.failed(nullptr);
    return x ? make_error(errc::timed_out, "timed out") : x.take_error();
  }
  if (role != want.role) return false;
  if (auto x = calls.before(); !x) return x.take_error();
  std::string name = clip_text(take(atspi_accessible_get_name(obj, &err)), max_text);
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x.take_error();
    return false;
  }
  if (name != want.name) return false;
  if (auto x = calls.before(); !x) return x.take_error();
  gobj<AtspiStateSet> set(atspi_accessible_get_state_set(obj));
  if (set && atspi_state_set_contains(set.get(), ATSPI_STATE_DEFUNCT)) return false;
  return true;
}

// Reads what acting on an element needs: its actions, states and frame.
status read_live(live_element& e, bus_calls& calls) {
  if (auto x = calls.before(); !x) return x;
  {
    gobj<AtspiStateSet> set(atspi_accessible_get_state_set(e.obj.get()));
    e.states = state_names(set.get());
  }
  if (auto x = read_actions(e.obj.get(), calls, e.actions); !x) return x;
  return read_frame(e.obj.get(), calls, e.frame);
}

std::string element_text(const a11y_element& e) {
  std::string s = str_cat(std::to_string(e.index), " (", e.role, " \"", e.name, "\")");
  return s;
}

// Element index of app's latest snapshot, found again: its own object when
// that is still this element, else the element at its place in the tree,
// else the one element of its role and name. Otherwise refused: an index
// is never applied to another element.
result<live_element> resolve(const app_ref& app, int index, const a11y_control& c,
                             bus_calls& calls) {
  auto it = c.memory->snapshots.find(app.facts.bus_name);
  if (it == c.memory->snapshots.end()) {
    return make_error(errc::invalid_argument,
                      str_cat("no snapshot of ", app.facts.name,
                              " yet: call get_app_state first; element_index refers to its "
                              "elements"));
  }
  a11y_snapshot& snap = it->second;
  if (index < 0 || size_t(index) >= snap.elements.size()) {
    return make_error(errc::invalid_argument,
                      str_cat("Invalid argument \"element_index\": ", std::to_string(index),
                              " is not in ", app.facts.name, "'s snapshot ",
                              std::to_string(snap.id), ", which has elements 0 to ",
                              std::to_string(int(snap.elements.size()) - 1)));
  }
  const a11y_element& want = snap.elements[size_t(index)];
  live_element out;
  out.ref = a11y_element_ref{index, want.role, want.name, ""};
  if (!want.path.empty()) {
    for (const a11y_element& w : snap.elements) {
      if (w.depth == 1 && w.path.size() == 1 && w.path[0] == want.path[0]) {
        out.window_frame = w.frame;
        break;
      }
    }
  }
  auto found = is_element(snap.objects[size_t(index)].get(), want, snap.max_text, calls);
  if (!found) return found.take_error();
  if (*found) {
    out.obj.reset(static_cast<AtspiAccessible*>(g_object_ref(snap.objects[size_t(index)].get())));
    out.ref.resolved = "same";
  }
  if (!out.obj) {
    // Its place in the tree, from the application down.
    gobj<AtspiAccessible> node(static_cast<AtspiAccessible*>(g_object_ref(app.obj.get())));
    atspi_accessible_clear_cache(node.get());
    bool reached = true;
    for (int step : want.path) {
      GError* err = nullptr;
      if (auto x = calls.before(); !x) return x.take_error();
      gobj<AtspiAccessible> child(atspi_accessible_get_child_at_index(node.get(), step, &err));
      if (err != nullptr || !child) {
        if (auto x = calls.failed(err); !x) return x.take_error();
        reached = false;
        break;
      }
      node = std::move(child);
    }
    if (reached) {
      auto same = is_element(node.get(), want, snap.max_text, calls);
      if (!same) return same.take_error();
      if (*same) {
        out.obj = std::move(node);
        out.ref.resolved = "path";
      }
    }
  }
  if (!out.obj) {
    // The one element of its role and name, anywhere in the tree now.
    walk_limits limits;
    limits.max_text = snap.max_text;
    std::vector<gobj<AtspiAccessible>> objects;
    auto tree = walk_tree(app.obj.get(), limits, c, &objects);
    if (!tree) return tree.take_error();
    int matches = 0;
    size_t at = 0;
    for (size_t i = 0; i < tree->elements.size(); ++i) {
      const a11y_element& e = tree->elements[i];
      if (e.role == want.role && e.name == want.name && !want.name.empty()) {
        ++matches;
        at = i;
      }
    }
    if (matches == 1) {
      out.obj = std::move(objects[at]);
      out.ref.resolved = "role_and_name";
    } else if (matches > 1) {
      return make_error(errc::not_found,
                        str_cat("element ", element_text(want), " of snapshot ",
                                std::to_string(snap.id),
                                " is not where it was, and ", std::to_string(matches),
                                " elements now have its role and name; call get_app_state "
                                "again and use the new index"));
    }
  }
  if (!out.obj) {
    return make_error(errc::not_found,
                      str_cat("element ", element_text(want), " of snapshot ",
                              std::to_string(snap.id), " is gone from ", app.facts.name,
                              " (the window changed); call get_app_state again"));
  }
  if (auto x = read_live(out, calls); !x) return x.take_error();
  return out;
}

// The actions a click is: GTK's "click", others' "press", "activate",
// "toggle", "jump" (links).
int click_action(const std::vector<std::string>& actions) {
  for (std::string_view want : {"click", "press", "activate", "toggle", "jump"}) {
    for (size_t i = 0; i < actions.size(); ++i) {
      if (actions[i] == want) return int(i);
    }
  }
  return -1;
}

std::string actions_text(const std::vector<std::string>& actions) {
  if (actions.empty()) return "none";
  std::string s;
  for (const std::string& a : actions) {
    if (!s.empty()) s += ", ";
    s += "\"" + a + "\"";
  }
  return s;
}

status do_action(live_element& e, int i, bus_calls& calls) {
  if (auto x = calls.before(); !x) return x;
  gobj<AtspiAction> a{atspi_accessible_get_action_iface(e.obj.get())};
  if (!a) return make_error(errc::not_found, "the element has no actions now");
  GError* err = nullptr;
  if (auto x = calls.before(); !x) return x;
  gboolean ok = atspi_action_do_action(a.get(), i, &err);
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x;
    return make_error(errc::x_failed, str_cat("the action failed: ", calls.last_message()));
  }
  if (!ok) return make_error(errc::x_failed, "the application refused the action");
  return {};
}

bool has_state_name(const std::vector<std::string>& states, std::string_view s) {
  return std::find(states.begin(), states.end(), s) != states.end();
}

// A decimal number as a person writes it: an optional sign, digits with an
// optional fraction, an optional exponent. Not NaN, infinity or hex (which
// strtod takes, and a toolkit then clamps or misreads), nor spaces or
// anything after the number; nothing when it is not one or overflows.
std::optional<double> parse_decimal(std::string_view s) {
  size_t i = 0, digits = 0;
  auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t start = s[0 < s.size() && s[0] == '+' ? 1 : 0] == '+' ? 1 : 0;
  while (digit(i)) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (digit(i)) ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return std::nullopt;
    while (digit(i)) ++i;
  }
  if (i != s.size()) return std::nullopt;
  // from_chars takes no leading '+'.
  std::string_view body = s.substr(start);
  double d = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
  if (ec != std::errc() || end != body.data() + body.size() || !std::isfinite(d)) {
    return std::nullopt;
  }
  return d;
}

// Why a click on e must not be made, if it must not: it is disabled (a
// click would do nothing and answer success), or out of view (an action
// would act on what the user cannot see, the pointer would miss it).
std::optional<std::string> click_refusal(const live_element& e) {
  const std::string what = str_cat("element ", std::to_string(e.ref.index), " (", e.ref.role,
                                   " \"", e.ref.name, "\")");
  const bool interactive = !e.actions.empty() || has_state_name(e.states, "focusable") ||
                           has_state_name(e.states, "editable");
  if (interactive && !has_state_name(e.states, "enabled") &&
      !has_state_name(e.states, "sensitive")) {
    return str_cat(what, " is disabled (its application shows it insensitive): nothing was "
                         "pressed; something else must enable it first");
  }
  bool out = !has_state_name(e.states, "showing");
  if (!out && e.frame) {
    const rect& f = *e.frame;
    if (f.x + f.w <= 0 || f.y + f.h <= 0) out = true;
    if (e.window_frame) {
      const rect& w = *e.window_frame;
      if (f.x >= w.x + w.w || f.y >= w.y + w.h || f.x + f.w <= w.x || f.y + f.h <= w.y) {
        out = true;
      }
    }
  }
  if (out) {
    return str_cat(what, " is out of view (not showing, or scrolled outside its window): "
                         "nothing was pressed; scroll it into view with scroll_app on its "
                         "list or pane, then call get_app_state again");
  }
  return std::nullopt;
}

// How long set_value's keyboard fallback waits for the field to say it has
// the focus.
constexpr auto kFieldFocusWait = std::chrono::milliseconds(1000);

// Waits until e says it is focused. grab_focus returns once the application
// has the request, not once the field has the focus: Chromium moves it in
// its renderer afterwards, and keys typed before then went to what had the
// focus (seen: 1 run in 20, the value typed nowhere). Its accessibility tree
// is updated from the renderer once the focus moved, so the state is read
// afresh every 10 ms until it says so. An error after kFieldFocusWait.
status wait_focused(const live_element& e, bus_calls& calls) {
  const auto until = a11y_clock::now() + kFieldFocusWait;
  for (;;) {
    if (auto x = calls.before(); !x) return x;
    atspi_accessible_clear_cache(e.obj.get());
    gobj<AtspiStateSet> set(atspi_accessible_get_state_set(e.obj.get()));
    if (set && atspi_state_set_contains(set.get(), ATSPI_STATE_FOCUSED)) return {};
    if (calls.used_up()) {
      auto x = calls.failed(nullptr);
      return x ? make_error(errc::timed_out, "timed out") : x.take_error();
    }
    if (a11y_clock::now() >= until) {
      return make_error(errc::x_failed,
                        str_cat("element ", std::to_string(e.ref.index), " (", e.ref.role, " \"",
                                e.ref.name, "\") did not take the keyboard focus within ",
                                std::to_string(kFieldFocusWait.count()),
                                " ms: nothing was typed; click it, then use type_text"));
    }
    g_usleep(10000);
  }
}

// set_value: through EditableText (text fields), else Value (numbers).
status set_element_value(live_element& e, const element_request& req,
                         a11y_outcome& out, bus_calls& calls) {
  const std::string& value = req.value;
  GError* err = nullptr;
  const bool editable = std::find(e.states.begin(), e.states.end(), "editable") != e.states.end();
  if (auto x = calls.before(); !x) return x;
  gobj<AtspiEditableText> et{atspi_accessible_get_editable_text_iface(e.obj.get())};
  gobj<AtspiValue> v;
  if (auto x = calls.before(); !x) return x;
  v.reset(atspi_accessible_get_value_iface(e.obj.get()));
  if (v) {
    std::optional<double> parsed = parse_decimal(value);
    // Even where the element also takes text (GTK's spin button), text
    // that is not a number would be read by the toolkit as it pleases.
    if (!parsed) {
      return make_error(errc::invalid_argument,
                        str_cat("Invalid argument \"value\": element ",
                                std::to_string(e.ref.index), " (", e.ref.role, " \"",
                                e.ref.name, "\") takes a decimal number such as 42, -1.5 or "
                                "2e3 (no NaN, infinity, hex or other characters), got \"",
                                value, "\""));
    }
    {
      const double d = *parsed;
      if (auto x = calls.before(); !x) return x;
      double lo = atspi_value_get_minimum_value(v.get(), &err);
      if (err != nullptr) { g_error_free(err); err = nullptr; lo = -1e300; }
      if (auto x = calls.before(); !x) return x;
      double hi = atspi_value_get_maximum_value(v.get(), &err);
      if (err != nullptr) { g_error_free(err); err = nullptr; hi = 1e300; }
      if (d < lo || d > hi) {
        return make_error(errc::invalid_argument,
                          str_cat("Invalid argument \"value\": ", value, " is outside ",
                                  number_text(lo), " to ", number_text(hi)));
      }
      if (auto x = calls.before(); !x) return x;
      gboolean ok = atspi_value_set_current_value(v.get(), d, &err);
      if (err != nullptr) {
        if (auto x = calls.failed(err); !x) return x;
        return make_error(errc::x_failed, str_cat("setting the value failed: ", calls.last_message()));
      }
      if (!ok) return make_error(errc::x_failed, "the application refused the value");
      if (auto x = calls.before(); !x) return x;
      double now = atspi_value_get_current_value(v.get(), &err);
      if (err != nullptr) {
        g_error_free(err);
        err = nullptr;
      } else {
        out.value = number_text(now);
      }
      out.method = "value";
      return {};
    }
  }
  if (et && editable) {
    if (auto x = calls.before(); !x) return x;
    gboolean ok = atspi_editable_text_set_text_contents(et.get(), value.c_str(), &err);
    if (err != nullptr) {
      if (auto x = calls.failed(err); !x) return x;
      return make_error(errc::x_failed, str_cat("setting the text failed: ", calls.last_message()));
    }
    if (!ok) return make_error(errc::x_failed, "the application refused the text");
    if (auto x = calls.before(); !x) return x;
    if (gobj<AtspiText> t{atspi_accessible_get_text_iface(e.obj.get())}) {
      if (auto x = calls.before(); !x) return x;
      out.value = take(atspi_text_get_text(t.get(), 0, -1, &err));
      if (err != nullptr) g_error_free(err);
    }
    out.method = "editable_text";
    return {};
  }
  if (!et && has_state_name(e.states, "focusable") &&
      (editable || e.ref.role == "entry" || e.ref.role == "text" ||
       e.ref.role == "password text")) {
    // A text field that takes no EditableText (Chromium's entries): it is
    // focused here, and the loop selects its text and types the value
    // through the input actor, which types as much as type_text does per
    // call. A longer value is refused before the field is touched, rather
    // than typed in part or for minutes.
    if (req.characters > req.max_typed) {
      return make_error(
          errc::invalid_argument,
          str_cat("Invalid argument \"value\": element ", std::to_string(e.ref.index), " (",
                  e.ref.role, " \"", e.ref.name, "\") has no editable text interface, so its "
                  "value is typed through the keyboard, which takes at most ",
                  std::to_string(req.max_typed), " characters per call, got ",
                  std::to_string(req.characters), "; nothing was typed. Set a shorter value, "
                  "or click it and type the rest with type_text"));
    }
    if (auto x = calls.before(); !x) return x;
    if (gobj<AtspiComponent> comp{atspi_accessible_get_component_iface(e.obj.get())}) {
      if (auto x = calls.before(); !x) return x;
      atspi_component_grab_focus(comp.get(), &err);
      if (err != nullptr) {
        if (auto x = calls.failed(err); !x) return x;
        err = nullptr;
      }
    }
    if (auto x = wait_focused(e, calls); !x) return x;
    out.method = "keyboard";
    out.note = "the element has no editable text interface: it was focused, its text selected "
               "with ctrl+a and the value typed through the keyboard";
    return {};
  }
  return make_error(errc::invalid_argument,
                    str_cat("element ", std::to_string(e.ref.index), " (", e.ref.role, " \"",
                            e.ref.name, "\") is not settable: it has no editable text",
                            et ? " (it is read-only)" : "",
                            " and no value; if it takes typing, click it and use type_text"));
}

// Gives app's X window the keyboard focus, for keys the input actor then
// sends; the window's id. Its windows are told apart by what AT-SPI says of
// its top-level children (title, frame, active).
result<uint32_t> focus_app_window(const app_ref& app, const a11y_control& c, bus_calls& calls) {
    std::vector<a11y_window_hint> hints;
    GError* err = nullptr;
    if (auto x = calls.before(); !x) return x.take_error();
    int n = atspi_accessible_get_child_count(app.obj.get(), &err);
    if (err != nullptr) {
      if (auto x = calls.failed(err); !x) return x.take_error();
      n = 0;
    }
    for (int i = 0; i < n && i < 64; ++i) {
      if (auto x = calls.before(); !x) return x.take_error();
      gobj<AtspiAccessible> w(atspi_accessible_get_child_at_index(app.obj.get(), i, &err));
      if (err != nullptr || !w) {
        if (auto x = calls.failed(err); !x) return x.take_error();
        err = nullptr;
        continue;
      }
      live_element le;
      le.obj = std::move(w);
      if (auto x = read_live(le, calls); !x) return x.take_error();
      if (auto x = calls.before(); !x) return x.take_error();
      std::string title = take(atspi_accessible_get_name(le.obj.get(), &err));
      if (err != nullptr) {
        g_error_free(err);
        err = nullptr;
      }
      auto st = [&](const char* s) {
        return std::find(le.states.begin(), le.states.end(), s) != le.states.end();
      };
      if (!st("showing") && !st("visible")) continue;
      hints.push_back(a11y_window_hint{title, le.frame, st("active")});
    }
    auto win = c.windows->find(app.facts.pid, hints);
    if (!win) return win.take_error();
    if (!*win) {
      return make_error(errc::not_found,
                        str_cat(app.facts.name, " (pid ", std::to_string(app.facts.pid),
                                ") has no window on this X display to send keys to"));
    }
    auto focused = c.windows->focus((*win)->id, c.cancelled);
    if (!focused) return focused.take_error();
    if (!*focused && c.cancelled()) return make_error(errc::cancelled, "cancelled");
    if (!*focused) {
      return make_error(errc::x_failed,
                        str_cat("could not give ", app.facts.name, "'s window \"", (*win)->title,
                                "\" the keyboard focus; nothing was typed"));
    }
  return (*win)->id;
}

class element_job final : public a11y_op {
 public:
  element_job(std::string app, element_request req, std::shared_ptr<a11y_outcome> out,
              a11y_grant_check grants)
      : app_(std::move(app)), req_(std::move(req)), out_(std::move(out)), grants_(std::move(grants)) {}

  std::optional<tool_result> run(const a11y_control& c) override {
    auto app = find_app(app_, c);
    if (!app) return fail_app(c, app_, nullptr, app.err());
    if (auto refused = refuse_app(grants_, app->facts)) return refused;
    out_->app = app->facts;
    bus_calls calls(c);
    auto e = resolve(*app, req_.index, c, calls);
    if (!e) return fail_app(c, app_, &out_->app, e.err());
    out_->element = e->ref;
    switch (req_.what) {
      case element_request::kind::click: {
        if (auto refused = click_refusal(*e)) return tool_result::failure(*refused);
        int i = req_.click_count == 1 ? click_action(e->actions) : -1;
        if (i >= 0) {
          if (auto x = do_action(*e, i, calls); !x) return fail_app(c, app_, &out_->app, x.take_error());
          out_->method = "action";
          out_->action = e->actions[size_t(i)];
          return tool_result::text("");
        }
        return at_center(*e);
      }
      case element_request::kind::locate: return at_center(*e);
      case element_request::kind::secondary: {
        auto it = std::find(e->actions.begin(), e->actions.end(), req_.action);
        if (it == e->actions.end()) {
          return tool_result::failure(
              str_cat("element ", std::to_string(e->ref.index), " (", e->ref.role, " \"",
                      e->ref.name, "\") has no action \"", req_.action, "\"; its actions: ",
                      actions_text(e->actions)));
        }
        if (auto x = do_action(*e, int(it - e->actions.begin()), calls); !x) {
          return fail_app(c, app_, &out_->app, x.take_error());
        }
        out_->method = "action";
        out_->action = req_.action;
        return tool_result::text("");
      }
      case element_request::kind::set_value: {
        if (auto x = set_element_value(*e, req_, *out_, calls); !x) {
          return fail_app(c, app_, &out_->app, x.take_error());
        }
        if (out_->method == "keyboard") {
          auto win = focus_app_window(*app, c, calls);
          if (!win) return fail_app(c, app_, &out_->app, win.err());
          out_->window = *win;
        }
        return tool_result::text("");
      }
    }
    return tool_result::failure("internal error");
  }

 private:
  std::optional<tool_result> at_center(const live_element& e) {
    if (!e.frame) {
      return tool_result::failure(str_cat("element ", std::to_string(e.ref.index), " (", e.ref.role,
                                          " \"", e.ref.name,
                                          "\") is not on the screen (no frame): it cannot be "
                                          "clicked or scrolled by the pointer"));
    }
    out_->method = "pointer";
    out_->pointer = point{e.frame->x + e.frame->w / 2, e.frame->y + e.frame->h / 2};
    return tool_result::text("");
  }

  std::string app_;
  element_request req_;
  std::shared_ptr<a11y_outcome> out_;
  a11y_grant_check grants_;
};

// The element a mark named, found again by role and name in its
// application's tree now (its frame tells several alike apart) and pressed
// through its own action: the pointer cannot reach it, but the element
// does not need the pointer.
class press_by_name_job final : public a11y_op {
 public:
  press_by_name_job(a11y_press_by_name want, std::shared_ptr<a11y_outcome> out,
                    a11y_grant_check grants)
      : want_(std::move(want)), out_(std::move(out)), grants_(std::move(grants)) {
    app = std::to_string(want_.pid);
  }

  std::optional<tool_result> run(const a11y_control& c) override {
    auto found = find_app(app, c);
    if (!found) return fail_app(c, app, nullptr, found.err());
    if (auto refused = refuse_app(grants_, found->facts)) return refused;
    out_->app = found->facts;
    walk_limits limits;
    // A mark's name is the element's whole name: compared whole.
    limits.max_text = 4096;
    std::vector<gobj<AtspiAccessible>> objects;
    auto tree = walk_tree(found->obj.get(), limits, c, &objects);
    if (!tree) return fail_app(c, app, &out_->app, tree.err());
    std::vector<size_t> alike, in_place;
    for (size_t i = 0; i < tree->elements.size(); ++i) {
      const a11y_element& e = tree->elements[i];
      if (e.role != want_.role || e.name != want_.name) continue;
      alike.push_back(i);
      if (e.frame && *e.frame == want_.frame) in_place.push_back(i);
    }
    const std::vector<size_t>& pick = alike.size() == 1 ? alike : in_place;
    if (pick.size() != 1) {
      return tool_result::failure(
          alike.empty() ? str_cat("its element is not found in ", out_->app.name, " now")
                        : str_cat(std::to_string(alike.size()), " elements of ", out_->app.name,
                                  " have its role and name, none or several where it was"));
    }
    const a11y_element& e = tree->elements[pick[0]];
    out_->element = a11y_element_ref{e.index, e.role, e.name, "role_and_name"};
    // An element its application does not show (a page of a notebook
    // behind another, a closed menu's item) is no mark's: another window
    // over it leaves it showing.
    if (!has_state(e, "showing")) {
      return tool_result::failure("its element is not shown by its application now");
    }
    if (!e.actions.empty() && !has_state(e, "enabled") && !has_state(e, "sensitive")) {
      return tool_result::failure("its element is disabled (its application shows it "
                                  "insensitive)");
    }
    const int i = click_action(e.actions);
    if (i < 0) {
      return tool_result::failure(
          str_cat("its element has no action that clicks it (its actions: ",
                  actions_text(e.actions), ")"));
    }
    live_element live;
    live.obj = std::move(objects[pick[0]]);
    live.ref = *out_->element;
    bus_calls calls(c);
    if (auto x = do_action(live, i, calls); !x) return fail_app(c, app, &out_->app, x.take_error());
    out_->method = "action";
    out_->action = e.actions[size_t(i)];
    return tool_result::text("");
  }

 private:
  a11y_press_by_name want_;
  std::shared_ptr<a11y_outcome> out_;
  a11y_grant_check grants_;
};

// The focused element of app, looked for among what is showing.
result<gobj<AtspiAccessible>> find_focused(AtspiAccessible* node, int depth, bus_calls& calls) {
  GError* err = nullptr;
  if (auto x = calls.before(); !x) return x.take_error();
  gobj<AtspiStateSet> set(atspi_accessible_get_state_set(node));
  if (depth > 0) {
    if (set && atspi_state_set_contains(set.get(), ATSPI_STATE_FOCUSED)) {
      return gobj<AtspiAccessible>(static_cast<AtspiAccessible*>(g_object_ref(node)));
    }
    if (!set || (!atspi_state_set_contains(set.get(), ATSPI_STATE_SHOWING) && depth > 1)) {
      return gobj<AtspiAccessible>();
    }
  }
  if (depth > 64) return gobj<AtspiAccessible>();
  if (auto x = calls.before(); !x) return x.take_error();
  int n = atspi_accessible_get_child_count(node, &err);
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x.take_error();
    return gobj<AtspiAccessible>();
  }
  for (int i = 0; i < n && i < 4096; ++i) {
    if (auto x = calls.before(); !x) return x.take_error();
    gobj<AtspiAccessible> child(atspi_accessible_get_child_at_index(node, i, &err));
    if (err != nullptr || !child) {
      if (auto x = calls.failed(err); !x) return x.take_error();
      err = nullptr;
      continue;
    }
    auto f = find_focused(child.get(), depth + 1, calls);
    if (!f) return f;
    if (*f) return f;
  }
  return gobj<AtspiAccessible>();
}

class keyboard_job final : public a11y_op {
 public:
  keyboard_job(std::string app, std::optional<std::string> text, std::shared_ptr<a11y_outcome> out,
               a11y_grant_check grants)
      : app_(std::move(app)), text_(std::move(text)), out_(std::move(out)), grants_(std::move(grants)) {}

  std::optional<tool_result> run(const a11y_control& c) override {
    auto app = find_app(app_, c);
    if (!app) return fail_app(c, app_, nullptr, app.err());
    if (auto refused = refuse_app(grants_, app->facts)) return refused;
    out_->app = app->facts;
    bus_calls calls(c);
    if (text_) {
      atspi_accessible_clear_cache(app->obj.get());
      auto focused = find_focused(app->obj.get(), 0, calls);
      if (!focused) return fail_app(c, app_, &out_->app, focused.err());
      if (*focused) {
        auto done = insert_text(focused->get(), calls);
        if (!done) return fail_app(c, app_, &out_->app, done.err());
        if (*done) return tool_result::text("");
      }
    }
    // The keys go through the input actor, to app's window.
    auto win = focus_app_window(*app, c, calls);
    if (!win) return fail_app(c, app_, &out_->app, win.err());
    out_->method = "keyboard";
    out_->window = *win;
    return tool_result::text("");
  }

 private:
  // Inserts text at the caret of focused when it is editable text. False:
  // it is not (the keyboard then types it).
  result<bool> insert_text(AtspiAccessible* focused, bus_calls& calls) {
    if (auto x = calls.before(); !x) return x.take_error();
    gobj<AtspiStateSet> set(atspi_accessible_get_state_set(focused));
    if (!set || !atspi_state_set_contains(set.get(), ATSPI_STATE_EDITABLE)) return false;
    if (auto x = calls.before(); !x) return x.take_error();
    gobj<AtspiEditableText> et{atspi_accessible_get_editable_text_iface(focused)};
    gobj<AtspiText> t{atspi_accessible_get_text_iface(focused)};
    if (!et || !t) return false;
    GError* err = nullptr;
    if (auto x = calls.before(); !x) return x.take_error();
    int caret = atspi_text_get_caret_offset(t.get(), &err);
    if (err != nullptr) {
      if (auto x = calls.failed(err); !x) return x.take_error();
      return false;
    }
    // Typing replaces a selection, as keys would.
    if (auto x = calls.before(); !x) return x.take_error();
    int selections = atspi_text_get_n_selections(t.get(), &err);
    if (err != nullptr) {
      if (auto x = calls.failed(err); !x) return x.take_error();
      err = nullptr;
      selections = 0;
    }
    if (selections > 0) {
      if (auto x = calls.before(); !x) return x.take_error();
      AtspiRange* r = atspi_text_get_selection(t.get(), 0, &err);
      if (err != nullptr) {
        g_free(r);
        if (auto x = calls.failed(err); !x) return x.take_error();
        return false;
      }
      const int start = r != nullptr ? r->start_offset : caret;
      const int end = r != nullptr ? r->end_offset : caret;
      g_free(r);
      if (end > start) {
        if (auto x = calls.before(); !x) return x.take_error();
        gboolean deleted = atspi_editable_text_delete_text(et.get(), start, end, &err);
        if (err != nullptr) {
          if (auto x = calls.failed(err); !x) return x.take_error();
          return false;
        }
        if (!deleted) return false;
        caret = start;
      }
    }
    if (auto x = calls.before(); !x) return x.take_error();
    gboolean ok = atspi_editable_text_insert_text(et.get(), caret, text_->c_str(),
                                                  int(text_->size()), &err);
    if (err != nullptr) {
      if (auto x = calls.failed(err); !x) return x.take_error();
      return false;
    }
    if (!ok) return false;
    live_element le;
    le.obj.reset(static_cast<AtspiAccessible*>(g_object_ref(focused)));
    if (auto x = calls.before(); !x) return x.take_error();
    std::string role = take(atspi_accessible_get_role_name(focused, &err));
    if (err != nullptr) {
      g_error_free(err);
      err = nullptr;
    }
    std::string name = take(atspi_accessible_get_name(focused, &err));
    if (err != nullptr) g_error_free(err);
    out_->element = a11y_element_ref{-1, role, clip_text(name, 200), "focused"};
    out_->method = "editable_text";
    return true;
  }

  std::string app_;
  std::optional<std::string> text_;
  std::shared_ptr<a11y_outcome> out_;
  a11y_grant_check grants_;
};

}  // namespace

std::unique_ptr<a11y_op> make_list_apps(std::shared_ptr<const grant_view> view) {
  return std::make_unique<function_job>([view](const a11y_control& c) -> std::optional<tool_result> {
    auto apps = read_apps(c);
    if (!apps) return fail(apps.err());
    std::string json;
    json_writer j(json);
    j.begin_object().key("apps").begin_array();
    for (const a11y_app& a : *apps) {
      // Listed, so that a model knows what to ask request_access for, but
      // what its windows say (their titles) is withheld.
      std::optional<bool> granted;
      if (view && view->filtering()) {
        granted = view->allows(process_identity(uint32_t(std::max(a.pid, 0)), a.name));
      }
      j.begin_object().key("name").string(a.name).key("pid").number(int64_t(a.pid));
      j.key("bus_name").string(a.bus_name).key("windows").begin_array();
      if (granted.value_or(true)) {
        for (const std::string& w : a.windows) j.string(w);
      }
      j.end_array().key("answering").boolean(a.answered);
      if (granted) j.key("granted").boolean(*granted);
      j.end_object();
    }
    j.end_array().end_object();
    return tool_result::json(std::move(json));
  });
}

std::unique_ptr<a11y_op> make_app_check(std::string app, a11y_grant_check grants) {
  auto job = std::make_unique<function_job>(
      [app, grants](const a11y_control& c) -> std::optional<tool_result> {
        auto found = find_app(app, c);
        if (!found) return fail_app(c, app, nullptr, found.err());
        if (auto refused = refuse_app(grants, found->facts)) return refused;
        return tool_result::text("");
      });
  job->app = std::move(app);
  return job;
}

std::unique_ptr<a11y_op> make_get_app_state(std::string app, walk_limits limits,
                                            std::shared_ptr<a11y_app_state> out,
                                            a11y_grant_check grants) {
  auto job = std::make_unique<function_job>(
      [app, limits, out, grants](const a11y_control& c) -> std::optional<tool_result> {
        auto found = find_app(app, c);
        if (!found) return fail_app(c, app, nullptr, found.err());
        if (auto refused = refuse_app(grants, found->facts)) return refused;
        a11y_snapshot snap;
        snap.max_text = limits.max_text;
        auto tree = walk_tree(found->obj.get(), limits, c, &snap.objects);
        if (!tree) return fail_app(c, app, &found->facts, tree.err());
        out->app = found->facts;
        out->walk = std::move(*tree);
        auto win = c.windows->find(found->facts.pid, window_hints(out->walk));
        if (win) out->window = std::move(*win);
        bus_calls calls(c);
        for (size_t i = 0; i < out->walk.elements.size(); ++i) {
          if (has_state(out->walk.elements[i], "focused")) {
            out->focused = int(i);
            out->selected_text = selected_text(snap.objects[i].get(), calls, limits.max_text);
            break;
          }
        }
        snap.id = ++c.memory->next_snapshot;
        snap.elements = out->walk.elements;
        out->snapshot = snap.id;
        c.memory->snapshots[found->facts.bus_name] = std::move(snap);
        // Applications come and go: the snapshots of the least recently
        // read go beyond kMaxSnapshots (their objects are released).
        while (c.memory->snapshots.size() > kMaxSnapshots) {
          auto oldest = c.memory->snapshots.begin();
          for (auto it = c.memory->snapshots.begin(); it != c.memory->snapshots.end(); ++it) {
            if (it->second.id < oldest->second.id) oldest = it;
          }
          c.memory->snapshots.erase(oldest);
        }
        return tool_result::text("");
      });
  job->app = std::move(app);
  return job;
}

std::unique_ptr<a11y_op> make_element_job(std::string app, element_request req,
                                          std::shared_ptr<a11y_outcome> out,
                                          a11y_grant_check grants) {
  auto job = std::make_unique<element_job>(app, std::move(req), std::move(out), std::move(grants));
  job->app = std::move(app);
  return job;
}

std::unique_ptr<a11y_op> make_press_by_name(a11y_press_by_name want,
                                            std::shared_ptr<a11y_outcome> out,
                                            a11y_grant_check grants) {
  return std::make_unique<press_by_name_job>(std::move(want), std::move(out), std::move(grants));
}

std::unique_ptr<a11y_op> make_keyboard_job(std::string app, std::optional<std::string> text,
                                           std::shared_ptr<a11y_outcome> out,
                                           a11y_grant_check grants) {
  auto job = std::make_unique<keyboard_job>(app, std::move(text), std::move(out), std::move(grants));
  job->app = std::move(app);
  return job;
}

}  // namespace cu
