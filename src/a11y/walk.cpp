#include "a11y/walk.h"

#include <atspi/atspi.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "util/ascii.h"
#include "util/str_cat.h"
#include "a11y/atspi_util.h"
#include "a11y/bus_batch.h"

// libatspi's object for an element of a known application, made without a
// bus call. Exported by libatspi.so.0 (at-spi2-core 2.46) but declared only
// in its private header; the pipelined walk reads paths over D-Bus and needs
// libatspi's objects for them, which the public API makes only by walking.
extern "C" AtspiAccessible* _atspi_ref_accessible(const char* app, const char* path);

namespace cu {

using namespace cu::atspi;

namespace {

// The interfaces whose presence the walk needs to know, from GetInterfaces.
enum iface_bit : unsigned {
  kValue = 1u << 0,
  kText = 1u << 1,
  kEditableText = 1u << 2,
};

unsigned iface_bits(const std::vector<std::string>& names) {
  unsigned out = 0;
  for (const std::string& n : names) {
    if (n == ATSPI_DBUS_INTERFACE_VALUE) out |= kValue;
    if (n == ATSPI_DBUS_INTERFACE_TEXT) out |= kText;
    if (n == ATSPI_DBUS_INTERFACE_EDITABLE_TEXT) out |= kEditableText;
  }
  return out;
}

// Readers of the replies the walk gets; each false (or empty) when the
// reply has another shape than AT-SPI's.
bool reply_iter(DBusMessage* m, DBusMessageIter* it) {
  return m != nullptr && dbus_message_iter_init(m, it);
}

std::optional<uint32_t> reply_u32(DBusMessage* m) {
  DBusMessageIter it;
  if (!reply_iter(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_UINT32) return {};
  uint32_t v = 0;
  dbus_message_iter_get_basic(&it, &v);
  return v;
}

// The string in a reply (s) or in its variant (v of s).
std::optional<std::string> reply_string(DBusMessage* m) {
  DBusMessageIter it, inner;
  if (!reply_iter(m, &it)) return {};
  DBusMessageIter* at = &it;
  if (dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
    dbus_message_iter_recurse(&it, &inner);
    at = &inner;
  }
  if (dbus_message_iter_get_arg_type(at) != DBUS_TYPE_STRING) return {};
  const char* s = nullptr;
  dbus_message_iter_get_basic(at, &s);
  return std::string(s != nullptr ? s : "");
}

std::optional<double> reply_variant_double(DBusMessage* m) {
  DBusMessageIter it, inner;
  if (!reply_iter(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_VARIANT) return {};
  dbus_message_iter_recurse(&it, &inner);
  if (dbus_message_iter_get_arg_type(&inner) != DBUS_TYPE_DOUBLE) return {};
  double d = 0;
  dbus_message_iter_get_basic(&inner, &d);
  return d;
}

// The state set's two 32-bit words as one 64-bit set.
std::optional<uint64_t> reply_states(DBusMessage* m) {
  DBusMessageIter it, arr;
  if (!reply_iter(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) return {};
  dbus_message_iter_recurse(&it, &arr);
  uint64_t out = 0;
  for (int word = 0; word < 2 && dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_UINT32;
       ++word) {
    uint32_t v = 0;
    dbus_message_iter_get_basic(&arr, &v);
    out |= uint64_t(v) << (32 * word);
    dbus_message_iter_next(&arr);
  }
  return out;
}

// An array of strings (as), or the first string of each struct in an
// array of structs (a(sss): the action names of GetActions).
std::vector<std::string> reply_strings(DBusMessage* m) {
  std::vector<std::string> out;
  DBusMessageIter it, arr;
  if (!reply_iter(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) return out;
  dbus_message_iter_recurse(&it, &arr);
  for (;;) {
    int type = dbus_message_iter_get_arg_type(&arr);
    const char* s = nullptr;
    if (type == DBUS_TYPE_STRING) {
      dbus_message_iter_get_basic(&arr, &s);
    } else if (type == DBUS_TYPE_STRUCT) {
      DBusMessageIter st;
      dbus_message_iter_recurse(&arr, &st);
      if (dbus_message_iter_get_arg_type(&st) == DBUS_TYPE_STRING) dbus_message_iter_get_basic(&st, &s);
    } else {
      break;
    }
    out.emplace_back(s != nullptr ? s : "");
    dbus_message_iter_next(&arr);
  }
  return out;
}

// GetChildren's a(so): each child's bus name and object path.
std::optional<std::vector<std::pair<std::string, std::string>>> reply_children(DBusMessage* m) {
  DBusMessageIter it, arr;
  if (!reply_iter(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) return {};
  dbus_message_iter_recurse(&it, &arr);
  std::vector<std::pair<std::string, std::string>> out;
  while (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRUCT) {
    DBusMessageIter st;
    dbus_message_iter_recurse(&arr, &st);
    const char* bus = nullptr;
    const char* path = nullptr;
    if (dbus_message_iter_get_arg_type(&st) == DBUS_TYPE_STRING) dbus_message_iter_get_basic(&st, &bus);
    dbus_message_iter_next(&st);
    if (dbus_message_iter_get_arg_type(&st) == DBUS_TYPE_OBJECT_PATH) {
      dbus_message_iter_get_basic(&st, &path);
    }
    out.emplace_back(bus != nullptr ? bus : "", path != nullptr ? path : "");
    dbus_message_iter_next(&arr);
  }
  return out;
}

// GetExtents' (iiii).
std::optional<rect> reply_extents(DBusMessage* m) {
  DBusMessageIter it, st;
  if (!reply_iter(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_STRUCT) return {};
  dbus_message_iter_recurse(&it, &st);
  int32_t v[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    if (dbus_message_iter_get_arg_type(&st) != DBUS_TYPE_INT32) return {};
    dbus_message_iter_get_basic(&st, &v[i]);
    dbus_message_iter_next(&st);
  }
  return rect{v[0], v[1], v[2], v[3]};
}

void append_string(DBusMessageIter* it, const char* s) {
  dbus_message_iter_append_basic(it, DBUS_TYPE_STRING, &s);
}

constexpr char kNullPath[] = "/org/a11y/atspi/null";

// One element as the walk learns it; nodes are kept in the order they were
// admitted (breadth first) and put in depth-first order at the end.
struct node {
  std::string path;
  int parent = -1;
  int depth = 0;
  int index_in_parent = 0;
  bool dead = false;  // It failed its first call: gone since its parent listed it.
  AtspiRole role = ATSPI_ROLE_INVALID;
  std::string name;
  uint64_t states = 0;
  unsigned ifaces = 0;
  std::string value;
  std::vector<std::string> actions;
  std::optional<rect> frame;
  std::vector<int> children;
};

bool has(uint64_t states, AtspiStateType s) { return (states >> unsigned(s)) & 1u; }

// Whether the walk needs an element's interfaces, known from its role and
// states: a Value's number for the roles that have a range (the toolkits
// implement Value for these: GTK's ranges, spin buttons, progress and
// level bars and panes; Chromium's sliders, spin buttons, scroll bars,
// progress bars, meters and splitters), the text of a text field, and
// whether an element that says "editable" has EditableText. Everywhere
// else (nine elements in ten) its extents and actions are asked outright,
// an element without them answering an error.
bool needs_interfaces(AtspiRole role, uint64_t states) {
  switch (role) {
    case ATSPI_ROLE_SLIDER:
    case ATSPI_ROLE_SPIN_BUTTON:
    case ATSPI_ROLE_SCROLL_BAR:
    case ATSPI_ROLE_PROGRESS_BAR:
    case ATSPI_ROLE_LEVEL_BAR:
    case ATSPI_ROLE_SPLIT_PANE:
    case ATSPI_ROLE_SEPARATOR:
    case ATSPI_ROLE_DIAL:
    case ATSPI_ROLE_INVALID:
    case ATSPI_ROLE_UNKNOWN:
      return true;
    default:
      break;
  }
  return text_is_value(role) || has(states, ATSPI_STATE_EDITABLE);
}

// The pipelined walk: for every element, six calls at once (role, name,
// states, children, extents, actions); once its role and states are known,
// its interfaces where they matter (needs_interfaces), and from them a
// Value's number or a text field's text; once its actions are counted,
// one call per action name. With up to bus_batch's window of calls in
// flight across elements: about seven calls per element instead of
// libatspi's eleven to fifteen round trips, and none of them waits for
// the one before.
class walker {
 public:
  walker(const walk_limits& limits, bus_batch& batch, std::string bus_name)
      : limits_(limits), batch_(batch), bus_name_(std::move(bus_name)) {}

  void start(const std::string& root_path) { admit(root_path, -1, 0, 0); }

  std::vector<node>& nodes() { return nodes_; }
  walk_outcome& outcome() { return out_; }

 private:
  void admit(const std::string& path, int parent, int depth, int index) {
    int id = int(nodes_.size());
    node n;
    n.path = path;
    n.parent = parent;
    n.depth = depth;
    n.index_in_parent = index;
    nodes_.push_back(std::move(n));
    if (parent >= 0) nodes_[size_t(parent)].children.push_back(id);
    const std::string& p = nodes_[size_t(id)].path;
    batch_.call(p, ATSPI_DBUS_INTERFACE_ACCESSIBLE, "GetRole", nullptr,
                 [this, id](const bus_answer& a) {
                   auto role = reply_u32(a.reply);
                   if (!role) {
                     nodes_[size_t(id)].dead = true;
                     return;
                   }
                   nodes_[size_t(id)].role = AtspiRole(*role);
                 });
    batch_.call(p, DBUS_INTERFACE_PROPERTIES, "Get",
                [](DBusMessageIter* it) {
                  append_string(it, ATSPI_DBUS_INTERFACE_ACCESSIBLE);
                  append_string(it, "Name");
                },
                [this, id](const bus_answer& a) {
                  if (auto s = reply_string(a.reply)) {
                    nodes_[size_t(id)].name = clip_text(std::move(*s), limits_.max_text);
                  }
                });
    batch_.call(p, ATSPI_DBUS_INTERFACE_ACCESSIBLE, "GetState", nullptr,
                [this, id](const bus_answer& a) {
                  node& n = nodes_[size_t(id)];
                  if (auto s = reply_states(a.reply)) n.states = *s;
                  if (!n.dead && needs_interfaces(n.role, n.states)) ask_interfaces(id);
                });
    batch_.call(p, ATSPI_DBUS_INTERFACE_ACCESSIBLE, "GetChildren", nullptr,
                [this, id](const bus_answer& a) { on_children(id, a); });
    batch_.call(p, ATSPI_DBUS_INTERFACE_COMPONENT, "GetExtents",
                [](DBusMessageIter* it) {
                  uint32_t screen = ATSPI_COORD_TYPE_SCREEN;
                  dbus_message_iter_append_basic(it, DBUS_TYPE_UINT32, &screen);
                },
                [this, id](const bus_answer& a) {
                  auto r = reply_extents(a.reply);
                  // GTK places what it has not mapped at G_MININT, 1x1.
                  if (r && r->w > 0 && r->h > 0 && r->x > kOffscreen && r->y > kOffscreen) {
                    nodes_[size_t(id)].frame = *r;
                  }
                });
    // GetActions answers every action at once, but with its localized name
    // (GTK's "Click", Chromium's ""), not the name actions are asked by: it
    // gives the count, and each name is one more call.
    batch_.call(p, ATSPI_DBUS_INTERFACE_ACTION, "GetActions", nullptr,
                [this, id](const bus_answer& a) {
                  if (nodes_[size_t(id)].dead) return;
                  size_t count = reply_strings(a.reply).size();
                  nodes_[size_t(id)].actions.assign(count, std::string());
                  for (size_t i = 0; i < count; ++i) ask_action_name(id, int32_t(i));
                });
  }

  void ask_interfaces(int id) {
    batch_.call(nodes_[size_t(id)].path, ATSPI_DBUS_INTERFACE_ACCESSIBLE, "GetInterfaces",
                nullptr, [this, id](const bus_answer& a) {
                  node& n = nodes_[size_t(id)];
                  n.ifaces = iface_bits(reply_strings(a.reply));
                  ask_value(id);
                });
  }

  void ask_value(int id) {
    const node& n = nodes_[size_t(id)];
    if (n.ifaces & kValue) {
      batch_.call(n.path, DBUS_INTERFACE_PROPERTIES, "Get",
                  [](DBusMessageIter* it) {
                    append_string(it, ATSPI_DBUS_INTERFACE_VALUE);
                    append_string(it, "CurrentValue");
                  },
                  [this, id](const bus_answer& a) {
                    if (auto d = reply_variant_double(a.reply)) {
                      nodes_[size_t(id)].value = number_text(*d);
                    }
                  });
    } else if ((n.ifaces & kText) && text_is_value(n.role)) {
      // Enough characters for max_text bytes of any script; clip_text then
      // cuts at a character boundary.
      int32_t end = int32_t(std::min<size_t>(limits_.max_text + 1, 1 << 20));
      batch_.call(n.path, ATSPI_DBUS_INTERFACE_TEXT, "GetText",
                  [end](DBusMessageIter* it) {
                    int32_t start = 0;
                    dbus_message_iter_append_basic(it, DBUS_TYPE_INT32, &start);
                    dbus_message_iter_append_basic(it, DBUS_TYPE_INT32, &end);
                  },
                  [this, id](const bus_answer& a) {
                    if (auto s = reply_string(a.reply)) {
                      nodes_[size_t(id)].value = clip_text(std::move(*s), limits_.max_text);
                    }
                  });
    }
  }

  void ask_action_name(int id, int32_t i) {
    batch_.call(nodes_[size_t(id)].path, ATSPI_DBUS_INTERFACE_ACTION, "GetName",
                [i](DBusMessageIter* it) { dbus_message_iter_append_basic(it, DBUS_TYPE_INT32, &i); },
                [this, id, i](const bus_answer& a) {
                  if (auto s = reply_string(a.reply)) nodes_[size_t(id)].actions[size_t(i)] = *s;
                });
  }

  void on_children(int id, const bus_answer& a) {
    if (nodes_[size_t(id)].dead) return;
    auto kids = reply_children(a.reply);
    if (!kids) return;
    int depth = nodes_[size_t(id)].depth;
    if (!kids->empty() && depth >= limits_.max_depth) {
      out_.truncated_depth = true;
      return;
    }
    for (size_t i = 0; i < kids->size(); ++i) {
      const auto& [bus, path] = (*kids)[i];
      // A child in another application (a plug's socket) or none at all.
      if (path.empty() || path == kNullPath || (!bus.empty() && bus != bus_name_)) continue;
      if (int(nodes_.size()) >= limits_.max_nodes) {
        out_.truncated_nodes = true;
        return;
      }
      admit(path, id, depth + 1, int(i));
    }
  }

  const walk_limits& limits_;
  bus_batch& batch_;
  std::string bus_name_;
  std::vector<node> nodes_;
  walk_outcome out_;
};

constexpr std::string_view kEmbeddedObject = "\xEF\xBF\xBC";  // U+FFFC

// What an embedded object stands for in its parent's text: its own text
// (value), else its name, else the name of its selected child (a combo
// box's popup menu names nothing itself; its selected item is the value).
std::string embedded_text(const std::vector<node>& nodes, const node& n) {
  if (!n.value.empty()) return n.value;
  if (!n.name.empty()) return n.name;
  for (int c : n.children) {
    const node& k = nodes[size_t(c)];
    if (!k.dead && has(k.states, ATSPI_STATE_SELECTED)) return k.name;
  }
  return {};
}

// Each U+FFFC of n's value replaced by the text of the child it stands
// for. The toolkits put one per child that is not plain text (Chromium's
// static text runs are inline), so the characters are matched to all the
// children when the counts agree, else to the children that are not plain
// text; with neither, they are dropped rather than shown.
void replace_embedded(std::vector<node>& nodes, node& n) {
  size_t count = 0;
  for (size_t at = n.value.find(kEmbeddedObject); at != std::string::npos;
       at = n.value.find(kEmbeddedObject, at + kEmbeddedObject.size())) {
    ++count;
  }
  if (count == 0) return;
  std::vector<int> live, objects;
  for (int c : n.children) {
    const node& k = nodes[size_t(c)];
    if (k.dead) continue;
    live.push_back(c);
    if (k.role != ATSPI_ROLE_STATIC && k.role != ATSPI_ROLE_TEXT) objects.push_back(c);
  }
  const std::vector<int>* by = live.size() == count ? &live : objects.size() == count ? &objects : nullptr;
  std::string out;
  size_t k = 0, from = 0;
  for (size_t at = n.value.find(kEmbeddedObject); at != std::string::npos;
       at = n.value.find(kEmbeddedObject, from)) {
    out.append(n.value, from, at - from);
    if (by != nullptr) out += embedded_text(nodes, nodes[size_t((*by)[k])]);
    ++k;
    from = at + kEmbeddedObject.size();
  }
  out.append(n.value, from, std::string::npos);
  n.value = clip_text(std::move(out), n.value.size() + 256);
}

bool intersects(const rect& a, const rect& b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

std::optional<rect> overlap(const rect& a, const rect& b) {
  rect r = intersect(a, b);
  if (r.w <= 0 || r.h <= 0) return std::nullopt;
  return r;
}

// Whether n cuts what lies inside it to its own frame: a window, and the
// scrolling containers (GTK's scroll pane and viewport; a web page's
// scrollers, which offer scroll actions).
bool clips(const node& n) {
  if (n.depth == 1 || n.role == ATSPI_ROLE_SCROLL_PANE || n.role == ATSPI_ROLE_VIEWPORT) {
    return true;
  }
  return std::any_of(n.actions.begin(), n.actions.end(), [](const std::string& a) {
    return a == "scrollDown" || a == "scrollUp" || a == "scrollForward" || a == "scrollBackward";
  });
}

// The nodes in depth-first order as elements, with what the tree says
// only where it is true: "editable" only with EditableText (text that can
// be set), embedded objects' characters replaced by their text, and
// "offscreen" added for what has a frame but is not showing, or lies
// outside its window or scrolled out of its container.
void to_elements(std::vector<node>& nodes, walk_outcome& out,
                 std::vector<gobj<AtspiAccessible>>* refs, AtspiAccessible* root,
                 const std::string& bus_name) {
  for (size_t i = nodes.size(); i-- > 0;) {
    if (!nodes[i].dead) replace_embedded(nodes, nodes[i]);
  }
  auto* klass = static_cast<GEnumClass*>(g_type_class_ref(atspi_state_type_get_type()));
  struct frame_of_walk {
    int id;
    std::optional<rect> clip;
    bool clipped;  // Some ancestor clips (clip empty then: nothing shows).
  };
  // Depth-first by an explicit stack: an application's tree can be
  // deeper than the thread's stack would like.
  std::vector<std::pair<int, frame_of_walk>> todo{{0, frame_of_walk{0, std::nullopt, false}}};
  while (!todo.empty()) {
    auto [id, ctx] = todo.back();
    todo.pop_back();
    node& n = nodes[size_t(id)];
    if (n.dead) {
      ++out.skipped;
      continue;
    }
    a11y_element e;
    e.index = int(out.elements.size());
    e.depth = n.depth;
    e.path.clear();
    for (int at = id; nodes[size_t(at)].parent >= 0; at = nodes[size_t(at)].parent) {
      e.path.push_back(nodes[size_t(at)].index_in_parent);
    }
    std::reverse(e.path.begin(), e.path.end());
    e.role = n.role == ATSPI_ROLE_INVALID && id != 0 ? "invalid" : take(atspi_role_get_name(n.role));
    e.name = n.name;
    e.value = n.value;
    for (std::string& a : n.actions) {
      if (!a.empty()) e.actions.push_back(std::move(a));
    }
    e.frame = n.frame;
    for (int s = 0; s < 64; ++s) {
      if (!has(n.states, AtspiStateType(s))) continue;
      if (s == ATSPI_STATE_EDITABLE && !(n.ifaces & kEditableText)) continue;
      GEnumValue* v = g_enum_get_value(klass, s);
      if (v != nullptr) e.states.emplace_back(v->value_nick);
    }
    bool offscreen = false;
    if (n.frame) {
      offscreen = !has(n.states, ATSPI_STATE_SHOWING) ||
                  (ctx.clipped && (!ctx.clip || !intersects(*n.frame, *ctx.clip)));
    }
    if (offscreen) e.states.emplace_back("offscreen");
    frame_of_walk below = ctx;
    if (clips(n) && n.frame) {
      below.clip = below.clipped ? (below.clip ? overlap(*below.clip, *n.frame) : std::nullopt)
                                 : n.frame;
      below.clipped = true;
    }
    out.elements.push_back(std::move(e));
    if (refs != nullptr) {
      // libatspi's object for the path, made without a bus call (the
      // application is known to libatspi already). Should it give none,
      // the application object stands in: an action on it is refused,
      // since its role never matches the element's.
      AtspiAccessible* obj =
          id == 0 ? nullptr : _atspi_ref_accessible(bus_name.c_str(), n.path.c_str());
      if (obj == nullptr) obj = static_cast<AtspiAccessible*>(g_object_ref(root));
      refs->emplace_back(obj);
    }
    for (size_t c = n.children.size(); c-- > 0;) todo.emplace_back(n.children[c], below);
  }
  g_type_class_unref(klass);
}

struct app_list {
  std::vector<app_ref> apps;
  // Registered applications that did not answer even the first call
  // (libatspi's greeting of an application it has not seen yet).
  int unanswered = 0;
};

// The pid of a bus name, from the accessibility bus's daemon, which answers
// for an application that does not (libatspi's
// atspi_accessible_get_process_id sends the question on the application's
// own peer-to-peer connection, where a stopped application holds it for a
// whole call timeout). 0 when unknown.
int bus_pid(const std::string& bus_name, const bus_calls& calls) {
  DBusConnection* bus = atspi_get_a11y_bus();
  if (bus == nullptr || bus_name.empty()) return 0;
  DBusMessage* msg = dbus_message_new_method_call(DBUS_SERVICE_DBUS, DBUS_PATH_DBUS,
                                                  DBUS_INTERFACE_DBUS, "GetConnectionUnixProcessID");
  if (msg == nullptr) return 0;
  const char* name = bus_name.c_str();
  dbus_message_append_args(msg, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID);
  DBusError err;
  dbus_error_init(&err);
  DBusMessage* reply = dbus_connection_send_with_reply_and_block(bus, msg, calls.timeout_ms(), &err);
  dbus_message_unref(msg);
  uint32_t pid = 0;
  if (reply != nullptr) {
    dbus_message_get_args(reply, nullptr, DBUS_TYPE_UINT32, &pid, DBUS_TYPE_INVALID);
    dbus_message_unref(reply);
  }
  dbus_error_free(&err);
  return int(pid);
}

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
    // Its cache was just cleared: libatspi asks its states, then its name,
    // and for an application that stopped answering sometimes a third
    // question first (a11y-walk measured 3.0 s, three 1 s waits, in 7
    // runs of 15): each gets a third of the call's time, so a stopped
    // application costs one call timeout here.
    if (auto x = calls.before(3); !x) return x.take_error();
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
    // The application object's own D-Bus name, which libatspi keeps in
    // its public structure (there is no getter).
    AtspiApplication* owner = ATSPI_OBJECT(app.get())->app;
    if (owner != nullptr && owner->bus_name != nullptr) ref.facts.bus_name = owner->bus_name;
    if (auto x = calls.before(); !x) return x.take_error();
    ref.facts.pid = bus_pid(ref.facts.bus_name, calls);
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
  AtspiObject* obj = ATSPI_OBJECT(root);
  if (obj->app == nullptr || obj->app->bus == nullptr || obj->app->bus_name == nullptr) {
    return make_error(errc::not_found, "the application went away (libatspi has no connection to it)");
  }
  std::string bus_name = obj->app->bus_name;
  bus_batch batch(obj->app->bus, bus_name, c);
  walker w(limits, batch, bus_name);
  w.start(obj->path);
  if (auto x = batch.run(); !x) return x.take_error();
  // The application object failing its first call is the application
  // gone, not an element: never a tree of nothing as a success.
  if (w.nodes().empty() || w.nodes()[0].dead) {
    return make_error(errc::not_found, "the application went away during the walk");
  }
  // A walk can end between an application's last answer and its exit:
  // a tree read from a connection that has closed since is not its tree
  // now (killed mid-walk, its remaining objects answered nothing).
  if (!dbus_connection_get_is_connected(obj->app->bus)) {
    return make_error(errc::not_found, "the application went away during the walk");
  }
  walk_outcome out = std::move(w.outcome());
  if (refs != nullptr) refs->clear();
  to_elements(w.nodes(), out, refs, root, bus_name);
  out.bus_calls = batch.sent();
  return out;
}

}  // namespace atspi

result<walk_outcome> walk_app(const std::string& app, const walk_limits& limits,
                              const a11y_control& c) {
  auto found = atspi::find_app(app, c);
  if (!found) return found.take_error();
  return atspi::walk_tree(found->obj.get(), limits, c, nullptr);
}

}  // namespace cu
