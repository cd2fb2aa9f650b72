// Owns: which applications the agent may touch (docs/grants.md): the
// operator's rules (CU_GRANTS, CU_DENY_APPS, CU_GRANTS_DESKTOP), the
// session's granted applications, and the judgement of one window's
// application against them. The rules and grants are published as an
// immutable grant_view; every thread that acts or captures takes the
// current view and judges the windows it finds with it.
// Thread affinity: grant_policy::set_granted on the loop thread; view()
// on any thread; a grant_view is immutable and shared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cu {

enum class grants_mode { open, enforce };

// What a window says of its application, read from X and /proc
// (x11/app_identity.h). All of it is what the client declares: a program
// can name itself anything, so grants keep an agent to its applications,
// not a hostile program out.
struct app_identity {
  enum class kind {
    app,      // A client window, or a popup that names its application.
    desktop,  // The root, or a window manager's dock or desktop window.
    unknown,  // A window nothing identifies (no WM_CLASS, no pid).
  };
  kind what = kind::unknown;
  uint32_t window = 0;        // The client window, else the top-level one.
  std::string instance, cls;  // WM_CLASS.
  uint32_t pid = 0;           // _NET_WM_PID; 0 when unknown.
  std::string exe;            // The base name of /proc/PID/exe, else empty.
  std::string comm;           // /proc/PID/comm, else empty.

  bool operator==(const app_identity&) const = default;

  // How refusals name the application: its WM_CLASS instance when that is
  // a plain name, else its class, else executable, else its window's id.
  std::string label() const;
};

// Desktop entries' names for applications (the Name= and the entry's id),
// keyed by lower-case StartupWMClass and by lower-case executable base name
// (from Exec=), so a grant of "Text Editor" reaches mousepad's windows.
// Built from the XDG application directories once, at start.
struct desktop_aliases {
  std::map<std::string, std::set<std::string>> by_key;  // All lower-case.
};

class grant_view {
 public:
  enum class verdict {
    allowed,
    not_granted,  // Enforcing, and no grant names it.
    denied,       // CU_DENY_APPS names it: no grant lifts that.
    unidentified, // Enforcing, and nothing identifies the window.
    desktop_off,  // Enforcing with CU_GRANTS_DESKTOP=deny, and it is the desktop.
  };

  grants_mode mode = grants_mode::open;
  bool desktop_allowed = true;
  std::set<std::string> granted;  // Lower-case names.
  // The session's systemKeyCombos grant, for the input actor's judgement
  // of the keys held at each press.
  bool system_keys = false;
  std::set<std::string> denied;   // Lower-case names.
  // The operator's allow list (CU_ALLOW_APPS, CU_GRANTS_FILE): when there is
  // one, request_access grants only names on it.
  bool allow_list = false;
  std::set<std::string> allowed;  // Lower-case names.
  std::shared_ptr<const desktop_aliases> aliases;
  // Grows with every new view: what was filtered or cached under an older
  // view is not trusted under this one.
  uint64_t epoch = 0;

  // Whether captures hide anything: enforcing, or a deny list.
  bool filtering() const { return mode == grants_mode::enforce || !denied.empty(); }

  // The lower-case names a identity answers to: WM_CLASS instance and
  // class, executable and command names, and the desktop entries' names
  // for those.
  std::set<std::string> names_of(const app_identity& a) const;
  verdict judge(const app_identity& a) const;
  bool allows(const app_identity& a) const { return judge(a) == verdict::allowed; }
  // Whether the name as request_access got it is on the deny list.
  bool name_denied(std::string_view name) const;
  // Whether request_access may grant the name: no allow list, or the name
  // (or a desktop entry's name for a program) on it.
  bool name_allowed(std::string_view name) const;

  // What a refusal says, whole: "<doing> was refused: <where> a window of
  // "xterm", which is not granted to this session (CU_GRANTS=enforce); call
  // request_access with apps ["xterm"] first". doing: "the click"; where,
  // with its verb: "its point is on", "the keyboard focus is on", "window
  // 0x1a00022 is".
  std::string refusal(std::string_view doing, std::string_view where, const app_identity& a,
                      verdict v) const;

 private:
  // Whether name, or a desktop entry's name for a program in names, is in
  // names (lower-case).
  bool listed(const std::set<std::string>& names, std::string_view name) const;
};

class grant_policy {
 public:
  grant_policy(grants_mode mode, std::set<std::string> denied, bool desktop_allowed,
               std::shared_ptr<const desktop_aliases> aliases,
               std::optional<std::set<std::string>> allowed = std::nullopt);

  // The current view. Cheap: a copy of a shared pointer under a lock.
  std::shared_ptr<const grant_view> view() const;
  // The session's grants changed (request_access, the idle release).
  void set_granted(const std::set<std::string>& apps, bool system_keys = false);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const grant_view> view_;
};

// CU_DENY_APPS's names: comma-separated, trimmed, lower-case, empty ones
// dropped.
std::set<std::string> parse_app_list(std::string_view text);

}  // namespace cu
