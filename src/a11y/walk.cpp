#include "a11y/walk.h"

#include <atspi/atspi.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "util/ascii.h"
#include "util/str_cat.h"
#include "a11y/atspi_util.h"

namespace cu {

using namespace cu::atspi;

namespace {

class walker {
 public:
  walker(const walk_limits& limits, const a11y_control& c, std::vector<gobj<AtspiAccessible>>* refs)
      : limits_(limits), calls_(c), refs_(refs) {}

  // Reads node and, depth-first, what lies below it. An error ends the
  // whole walk (cancelled, out of time, the application hung); an element
  // that vanished on the way is skipped.
  status visit(AtspiAccessible* node, int depth, std::vector<int>& path) {
    if (int(out_.elements.size()) >= limits_.max_nodes) {
      out_.truncated_nodes = true;
      return {};
    }
    a11y_element e;
    e.index = int(out_.elements.size());
    e.depth = depth;
    e.path = path;
    GError* err = nullptr;

    if (auto x = calls_.before(); !x) return x;
    AtspiRole role = atspi_accessible_get_role(node, &err);
    if (err != nullptr) return gone(err, depth);
    // libatspi may answer a call that timed out with a default and no error.
    if (calls_.used_up()) return calls_.failed(nullptr);
    if (auto x = calls_.before(); !x) return x;
    e.role = take(atspi_accessible_get_role_name(node, &err));
    if (err != nullptr) return gone(err, depth);
    if (auto x = calls_.before(); !x) return x;
    e.name = clip_text(take(atspi_accessible_get_name(node, &err)), limits_.max_text);
    if (err != nullptr) return gone(err, depth);
    if (calls_.used_up()) return calls_.failed(nullptr);
    if (auto x = calls_.before(); !x) return x;
    {
      gobj<AtspiStateSet> set(atspi_accessible_get_state_set(node));
      e.states = state_names(set.get());
    }
    if (auto x = read_interfaces(node, role, e); !x) return x;

    if (auto x = calls_.before(); !x) return x;
    int children = atspi_accessible_get_child_count(node, &err);
    if (err != nullptr) return gone(err, depth);
    out_.elements.push_back(std::move(e));
    if (refs_ != nullptr) refs_->emplace_back(static_cast<AtspiAccessible*>(g_object_ref(node)));
    if (children > 0 && depth >= limits_.max_depth) {
      out_.truncated_depth = true;
      return {};
    }
    for (int i = 0; i < children; ++i) {
      if (int(out_.elements.size()) >= limits_.max_nodes) {
        out_.truncated_nodes = true;
        break;
      }
      if (auto x = calls_.before(); !x) return x;
      gobj<AtspiAccessible> child(atspi_accessible_get_child_at_index(node, i, &err));
      if (err != nullptr) {
        if (auto x = calls_.failed(err); !x) return x;
        ++out_.skipped;
        continue;
      }
      if (!child) continue;
      path.push_back(i);
      auto x = visit(child.get(), depth + 1, path);
      path.pop_back();
      if (!x) return x;
    }
    return {};
  }

  walk_outcome take_outcome() { return std::move(out_); }

 private:
  // A failed call on an element: the walk's end when it timed out, else
  // the element is skipped. The application itself cannot be skipped.
  status gone(GError* err, int depth) {
    if (auto x = calls_.failed(err); !x) return x;
    if (depth == 0) {
      return make_error(errc::not_found,
                        str_cat("the application went away: ", calls_.last_message()));
    }
    ++out_.skipped;
    return {};
  }

  // Value, text, actions and frame: each through its interface, when the
  // element has it. A failure here leaves the field empty.
  status read_interfaces(AtspiAccessible* node, AtspiRole role, a11y_element& e) {
    GError* err = nullptr;
    if (auto x = calls_.before(); !x) return x;
    if (gobj<AtspiValue> v{atspi_accessible_get_value_iface(node)}) {
      if (auto x = calls_.before(); !x) return x;
      double d = atspi_value_get_current_value(v.get(), &err);
      if (err != nullptr) {
        if (auto x = calls_.failed(err); !x) return x;
        err = nullptr;
      } else {
        e.value = number_text(d);
      }
    }
    if (e.value.empty() && text_is_value(role)) {
      if (gobj<AtspiText> t{atspi_accessible_get_text_iface(node)}) {
        if (auto x = calls_.before(); !x) return x;
        // Enough characters for max_text bytes of any script; clip_text
        // then cuts at a character boundary.
        gint n = gint(std::min<size_t>(limits_.max_text + 1, 1 << 20));
        std::string text = take(atspi_text_get_text(t.get(), 0, n, &err));
        if (err != nullptr) {
          if (auto x = calls_.failed(err); !x) return x;
          err = nullptr;
        } else {
          e.value = clip_text(std::move(text), limits_.max_text);
        }
      }
    }
    if (auto x = read_actions(node, calls_, e.actions); !x) return x;
    return read_frame(node, calls_, e.frame);
  }

  const walk_limits& limits_;
  bus_calls calls_;
  std::vector<gobj<AtspiAccessible>>* refs_;
  walk_outcome out_;
};

struct app_list {
  std::vector<app_ref> apps;
  // Registered applications that did not answer even the first call
  // (libatspi's greeting of an application it has not seen yet).
  int unanswered = 0;
};

result<app_list> list_app_refs(const a11y_control& c, bool windows) {
  bus_calls calls(c);
  app_list out;
  gobj<AtspiAccessible> desktop(atspi_get_desktop(0));
  if (!desktop) return make_error(errc::a11y_unavailable, "the accessibility registry has no desktop");
  // What libatspi remembers of the desktop's children may predate the
  // latest applications: ask the registry again.
  atspi_accessible_clear_cache(desktop.get());
  GError* err = nullptr;
  if (auto x = calls.before(); !x) return x.take_error();
  int n = atspi_accessible_get_child_count(desktop.get(), &err);
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x.take_error();
    return make_error(errc::a11y_unavailable,
                      str_cat("the accessibility registry did not answer: ", calls.last_message()));
  }
  for (int i = 0; i < n; ++i) {
    if (auto x = calls.before(); !x) return x.take_error();
    gobj<AtspiAccessible> app(atspi_accessible_get_child_at_index(desktop.get(), i, &err));
    if (err != nullptr) {
      // An application that does not answer is counted, not allowed to
      // hide the others.
      auto x = calls.failed(err);
      err = nullptr;
      if (!x && x.err().code == errc::timed_out) ++out.unanswered;
      continue;
    }
    if (!app) {
      if (calls.used_up()) ++out.unanswered;
      continue;
    }
    app_ref ref;
    bool with_windows = windows;
    // Its cache was just cleared: libatspi asks its states, then its name.
    if (auto x = calls.before(2); !x) return x.take_error();
    ref.facts.name = take(atspi_accessible_get_name(app.get(), &err));
    // Gone since the registry listed it: leave it out. Not answering
    // (stopped, hung; libatspi then may give no name and no error): keep
    // it, nameless, so a caller hears that it is there and does not
    // answer, rather than that it does not exist.
    if (err != nullptr) {
      auto x = calls.failed(err);
      err = nullptr;
      if (x || x.err().code != errc::timed_out) continue;
      ref.facts.answered = false;
      with_windows = false;
    } else if (calls.used_up()) {
      ref.facts.answered = false;
      with_windows = false;
    }
    if (auto x = calls.before(); !x) return x.take_error();
    ref.facts.pid = int(atspi_accessible_get_process_id(app.get(), &err));
    if (err != nullptr) {
      g_error_free(err);
      err = nullptr;
    }
    // The application object's own D-Bus name, which libatspi keeps in
    // its public structure (there is no getter).
    AtspiApplication* owner = ATSPI_OBJECT(app.get())->app;
    if (owner != nullptr && owner->bus_name != nullptr) ref.facts.bus_name = owner->bus_name;
    if (with_windows && ref.facts.answered) {
      if (auto x = calls.before(); !x) return x.take_error();
      int w = atspi_accessible_get_child_count(app.get(), &err);
      if (err != nullptr) {
        g_error_free(err);
        err = nullptr;
        w = 0;
      }
      for (int j = 0; j < w; ++j) {
        if (auto x = calls.before(); !x) return x.take_error();
        gobj<AtspiAccessible> win(atspi_accessible_get_child_at_index(app.get(), j, &err));
        if (err != nullptr || !win) {
          if (err != nullptr) g_error_free(err);
          err = nullptr;
          continue;
        }
        if (auto x = calls.before(); !x) return x.take_error();
        std::string title = take(atspi_accessible_get_name(win.get(), &err));
        if (err != nullptr) {
          g_error_free(err);
          err = nullptr;
          continue;
        }
        ref.facts.windows.push_back(std::move(title));
      }
    }
    ref.obj = std::move(app);
    out.apps.push_back(std::move(ref));
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

}  // namespace

result<bool> a11y_connect(GMainContext* context, bool x_bus_property) {
  if (atspi_is_initialized()) return true;
  const char* runtime = getenv("XDG_RUNTIME_DIR");
  std::string session_socket = runtime != nullptr ? str_cat(runtime, "/bus") : std::string();
  struct stat st {};
  bool have_session = getenv("DBUS_SESSION_BUS_ADDRESS") != nullptr ||
                      (!session_socket.empty() && stat(session_socket.c_str(), &st) == 0);
  if (getenv("AT_SPI_BUS_ADDRESS") == nullptr && !x_bus_property && !have_session) {
    return make_error(errc::a11y_unavailable,
                      "no accessibility bus: neither AT_SPI_BUS_ADDRESS, nor the X root's"
                      " AT_SPI_BUS, nor a session bus (DBUS_SESSION_BUS_ADDRESS) is there;"
                      " start the server with tools/serve (which starts one), or the desktop"
                      " under tools/lib/a11y-session.sh");
  }
  // atspi_get_a11y_bus() can be asked again after a failure; atspi_init()
  // cannot.
  if (atspi_get_a11y_bus() == nullptr) {
    return make_error(errc::a11y_unavailable,
                      "no accessibility bus: the session bus has no AT-SPI bus launcher"
                      " (org.a11y.Bus); install at-spi2-core or start tools/lib/a11y-session.sh");
  }
  int rc = atspi_init();
  if (rc != 0 && rc != 1) {
    return make_error(errc::a11y_unavailable,
                      str_cat("cannot connect to the accessibility bus (atspi_init ",
                              std::to_string(rc), ")"));
  }
  if (context != nullptr) atspi_set_main_context(context);
  return true;
}

result<std::vector<a11y_app>> read_apps(const a11y_control& c) {
  auto refs = list_app_refs(c, true);
  if (!refs) return refs.take_error();
  std::vector<a11y_app> out;
  for (app_ref& r : refs->apps) out.push_back(std::move(r.facts));
  return out;
}

namespace atspi {

status read_actions(AtspiAccessible* node, bus_calls& calls,
                    std::vector<std::string>& out) {
  GError* err = nullptr;
  if (auto x = calls.before(); !x) return x;
  gobj<AtspiAction> a{atspi_accessible_get_action_iface(node)};
  if (!a) return {};
  if (auto x = calls.before(); !x) return x;
  int n = atspi_action_get_n_actions(a.get(), &err);
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x;
    return {};
  }
  for (int i = 0; i < n; ++i) {
    if (auto x = calls.before(); !x) return x;
    std::string name = take(atspi_action_get_action_name(a.get(), i, &err));
    if (err != nullptr) {
      if (auto x = calls.failed(err); !x) return x;
      err = nullptr;
      continue;
    }
    out.push_back(std::move(name));
  }
  return {};
}

status read_frame(AtspiAccessible* node, bus_calls& calls, std::optional<rect>& out) {
  GError* err = nullptr;
  if (auto x = calls.before(); !x) return x;
  gobj<AtspiComponent> comp{atspi_accessible_get_component_iface(node)};
  if (!comp) return {};
  if (auto x = calls.before(); !x) return x;
  AtspiRect* r = atspi_component_get_extents(comp.get(), ATSPI_COORD_TYPE_SCREEN, &err);
  if (err != nullptr) {
    if (auto x = calls.failed(err); !x) return x;
  } else if (r != nullptr && r->width > 0 && r->height > 0 && r->x > kOffscreen &&
             r->y > kOffscreen) {
    out = rect{r->x, r->y, r->width, r->height};
  }
  g_free(r);
  return {};
}

result<app_ref> find_app(const std::string& app, const a11y_control& c) {
  auto refs = list_app_refs(c, false);
  if (!refs) return refs.take_error();
  app_ref* found = nullptr;
  for (app_ref& r : refs->apps) {
    if (found == nullptr && iequals(r.facts.name, app)) found = &r;
  }
  if (found == nullptr && all_digits(app)) {
    for (app_ref& r : refs->apps) {
      if (std::to_string(r.facts.pid) != app) continue;
      // It has already used up one call's time: do not wait for it again.
      if (!r.facts.answered) {
        return make_error(errc::timed_out,
                          str_cat("the application with pid ", app,
                                  " did not answer (is it hung or stopped?)"));
      }
      if (found == nullptr) found = &r;
    }
  }
  if (found == nullptr) {
    int matches = 0;
    for (app_ref& r : refs->apps) {
      if (r.facts.answered &&
          ascii_lower(r.facts.name).find(ascii_lower(app)) != std::string::npos) {
        found = &r;
        ++matches;
      }
    }
    if (matches > 1) found = nullptr;
  }
  if (found == nullptr) {
    std::string names, silent;
    for (app_ref& r : refs->apps) {
      std::string& list = r.facts.answered ? names : silent;
      if (!list.empty()) list += ", ";
      list += r.facts.answered ? r.facts.name : str_cat("pid ", std::to_string(r.facts.pid));
    }
    if (names.empty()) names = "none";
    std::string message = str_cat("no accessible application matches \"", app,
                                  "\"; the applications are: ", names);
    if (refs->unanswered > 0) {
      if (!silent.empty()) silent += ", ";
      silent += str_cat(std::to_string(refs->unanswered), " unknown");
    }
    if (!silent.empty()) {
      message += str_cat("; not answering (hung or stopped, name unknown): ", silent);
    }
    return make_error(errc::not_found, std::move(message));
  }
  return std::move(*found);
}

result<walk_outcome> walk_tree(AtspiAccessible* root, const walk_limits& limits,
                               const a11y_control& c, std::vector<gobj<AtspiAccessible>>* refs) {
  // Read the tree afresh: libatspi's cache of it is kept only by the events
  // it has seen, and an application that was just starting may have
  // answered with its root alone.
  atspi_accessible_clear_cache(root);
  walker w(limits, c, refs);
  std::vector<int> path;
  if (auto x = w.visit(root, 0, path); !x) return x.take_error();
  return w.take_outcome();
}

}  // namespace atspi

result<walk_outcome> walk_app(const std::string& app, const walk_limits& limits,
                              const a11y_control& c) {
  auto found = atspi::find_app(app, c);
  if (!found) return found.take_error();
  return atspi::walk_tree(found->obj.get(), limits, c, nullptr);
}

}  // namespace cu
