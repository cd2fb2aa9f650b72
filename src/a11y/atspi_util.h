// Owns: the pieces every libatspi caller of the a11y thread shares: owning
// pointers for GObjects and GLib strings, and bus_calls, which bounds each
// D-Bus round trip by the job's deadline and per-call timeout and tells a
// hung application from an element that went away.
// Thread affinity: the a11y thread only (libatspi is not thread-safe).
#pragma once

#include <atspi/atspi.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "a11y/walk.h"
#include "util/result.h"
#include "util/str_cat.h"

namespace cu::atspi {
struct gobject_unref {
  void operator()(void* p) const { g_object_unref(p); }
};
template <class T>
using gobj = std::unique_ptr<T, gobject_unref>;

struct gfree {
  void operator()(void* p) const { g_free(p); }
};
using gstr = std::unique_ptr<char, gfree>;

// One job's bus calls: each is preceded by before() and, when it fails,
// judged by failed(): a call that waited its whole timeout is the
// application not answering, anything else the element being gone.
class bus_calls {
 public:
  explicit bus_calls(const a11y_control& c) : c_(c) {}

  // An error when the job is cancelled or out of time; otherwise sets the
  // timeout of the next call to what is left, at most call_timeout_ms.
  // round_trips: how many D-Bus calls libatspi makes for it (a name read
  // with a cold cache first asks the element's states), each given its
  // share, so that a hung application costs the call's time once.
  status before(int round_trips = 1) {
    if (c_.cancelled()) return make_error(errc::cancelled, "cancelled");
    auto now = a11y_clock::now();
    if (now >= c_.deadline) return deadline_error();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c_.deadline - now).count();
    timeout_ms_ = int(std::min<int64_t>(left, c_.call_timeout_ms));
    if (timeout_ms_ < 1) timeout_ms_ = 1;
    // The startup time (for an application still starting) is bounded the
    // same way.
    each_ms_ = std::max(1, timeout_ms_ / std::max(1, round_trips));
    atspi_set_timeout(each_ms_, each_ms_);
    started_ = now;
    return {};
  }

  // After a call that set err: a timeout error when the call used up its
  // time, else done (the caller treats the element as gone). Frees err.
  status failed(GError* err) {
    std::string what = err != nullptr && err->message != nullptr ? err->message : "";
    if (err != nullptr) g_error_free(err);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(a11y_clock::now() - started_);
    if (took.count() + 5 >= each_ms_) {
      if (a11y_clock::now() >= c_.deadline) return deadline_error();
      std::string ms = std::to_string(timeout_ms_);
      return make_error(errc::timed_out,
                        str_cat("the application did not answer within ", ms,
                                " ms (is it hung or stopped?)"));
    }
    last_message_ = std::move(what);
    return {};
  }

  const std::string& last_message() const { return last_message_; }

  // The next call's timeout, as before() set it.
  int timeout_ms() const { return timeout_ms_; }

  // Whether the last call waited its whole timeout: libatspi answers some
  // timeouts with nothing and no error (a new application that does not
  // answer its greeting).
  bool used_up() const {
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(a11y_clock::now() - started_);
    return took.count() + 5 >= each_ms_;
  }

 private:
  error deadline_error() const {
    return make_error(errc::timed_out, "the accessibility tree was not read before the deadline");
  }

  const a11y_control& c_;
  int timeout_ms_ = 1000;  // The call's time.
  int each_ms_ = 1000;     // Each of its round trips' (what a timeout is judged by).
  a11y_clock::time_point started_{};
  std::string last_message_;
};

inline std::string take(gchar* s) {
  gstr owned(s);
  return s != nullptr ? std::string(s) : std::string();
}

// The state nicks of a state set ("focused", "enabled"), in enum order.
inline std::vector<std::string> state_names(AtspiStateSet* set) {
  std::vector<std::string> out;
  if (set == nullptr) return out;
  GArray* states = atspi_state_set_get_states(set);
  if (states == nullptr) return out;
  auto* klass = static_cast<GEnumClass*>(g_type_class_ref(atspi_state_type_get_type()));
  for (guint i = 0; i < states->len; ++i) {
    GEnumValue* v = g_enum_get_value(klass, g_array_index(states, AtspiStateType, i));
    if (v != nullptr) out.emplace_back(v->value_nick);
  }
  g_type_class_unref(klass);
  g_array_free(states, TRUE);
  return out;
}

// The roles whose text is their value (what a user typed into them).
inline bool text_is_value(AtspiRole role) {
  return role == ATSPI_ROLE_ENTRY || role == ATSPI_ROLE_TEXT ||
         role == ATSPI_ROLE_SPIN_BUTTON || role == ATSPI_ROLE_COMBO_BOX ||
         role == ATSPI_ROLE_EDITBAR || role == ATSPI_ROLE_PARAGRAPH;
}

// GTK places what it has not mapped (a combo box's closed menu) at
// G_MININT, 1x1: such an element has no frame on the screen.
constexpr int kOffscreen = -(1 << 30);

inline std::string number_text(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}


// The element's action names, appended to out (none without Action), and
// its frame on the screen (left empty without Component, or unmapped: GTK's
// G_MININT). An error only when the application did not answer.
status read_actions(AtspiAccessible* node, bus_calls& calls,
                    std::vector<std::string>& out);
status read_frame(AtspiAccessible* node, bus_calls& calls, std::optional<rect>& out);

// An application on the bus: its object (referenced while this lives) and
// what is known of it.
struct app_ref {
  gobj<AtspiAccessible> obj;
  a11y_app facts;
};

// The application `app` names: its name (ASCII case-insensitive), else its
// pid in decimal, else the one application whose name contains it. Not
// found: errc::not_found naming the applications there are.
result<app_ref> find_app(const std::string& app, const a11y_control& c);

// root's tree, depth-first; with refs, each element's object too, in
// index order.
result<walk_outcome> walk_tree(AtspiAccessible* root, const walk_limits& limits,
                               const a11y_control& c, std::vector<gobj<AtspiAccessible>>* refs);

}  // namespace cu::atspi
