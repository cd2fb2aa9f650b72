// Owns: the a11y toolset's jobs on the a11y thread, and what they hand back
// to the loop: the snapshots of applications' trees that element indices
// refer to (kept on the a11y thread, with each element's object, so an
// index is acted on as the element it named or not at all), reading an
// application's state, and acting on an element through its accessible
// interfaces (Action, EditableText, Value). What needs the pointer or the
// keyboard is not done here: the job says where, and the loop hands it to
// the input actor.
// Thread affinity: the factories and the outcome structs are used on the
// loop thread; the jobs run on the a11y thread, which writes the outcome
// before its completion is pushed (the completion queue orders the two).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "a11y/a11y_op.h"
#include "a11y/app_window.h"
#include "a11y/element.h"
#include "core/grant_policy.h"

namespace cu {

// An element an action was aimed at, as the caller's snapshot named it.
struct a11y_element_ref {
  int index = 0;
  std::string role;
  std::string name;
  // How it was found again: "same" (its object), "path" (its place in the
  // tree), "role_and_name".
  std::string resolved;
};

// get_app_state's findings, for the loop to render once the window's image
// is captured.
struct a11y_app_state {
  a11y_app app;
  uint64_t snapshot = 0;
  walk_outcome walk;
  std::optional<app_window> window;  // Nothing: X shows no window of it.
  std::optional<int> focused;
  std::optional<std::string> selected_text;
};

// What an action job found and did, or left for the input actor.
struct a11y_outcome {
  a11y_app app;
  std::optional<a11y_element_ref> element;
  std::string method;  // "action", "editable_text", "value"; "pointer", "keyboard": to do.
  std::string action;  // The action performed.
  std::string value;   // set_value: the value read back.
  // method "pointer": where the pointer is to act, in root window pixels.
  std::optional<point> pointer;
  // method "keyboard": the window that was given the focus (0: none found).
  uint32_t window = 0;
  std::string note;
};

// The grants a job judges its application by once it has found it, before
// it reads or does anything more (docs/grants.md, "Toolsets"): the view
// (null: nothing is enforced) and what a refusal calls the job ("click").
// An application is judged by its name on the bus and its process
// (x11/app_identity.h's process_identity).
struct a11y_grant_check {
  std::shared_ptr<const grant_view> view;
  std::string doing;
};

// The state a snapshot keeps on the a11y thread; made and destroyed there.
struct a11y_memory;
std::shared_ptr<a11y_memory> make_a11y_memory();

// How long an application that did not answer a job in time is refused
// without being asked again.
constexpr std::chrono::milliseconds kHungMemory{10000};

// Why a job naming app (as the caller named it: a name, a part of one, or
// a pid) is refused before any bus call: the application of that name or
// pid timed out within kHungMemory. Nothing: it may be asked.
std::optional<error> refuse_hung(a11y_memory& m, const std::string& app);

// list_apps: the answer itself. Applications view does not allow are
// listed with their windows' titles withheld and "granted": false.
std::unique_ptr<a11y_op> make_list_apps(std::shared_ptr<const grant_view> view = nullptr);

// Only the check: finds app and answers an empty success when grants
// allow it, their refusal otherwise (a11y drag, which acts through the
// input actor alone).
std::unique_ptr<a11y_op> make_app_check(std::string app, a11y_grant_check grants);

// get_app_state: fills *out and answers an empty success, or fails.
std::unique_ptr<a11y_op> make_get_app_state(std::string app, walk_limits limits,
                                            std::shared_ptr<a11y_app_state> out,
                                            a11y_grant_check grants = {});

// What an element job does with the element.
struct element_request {
  enum class kind { click, secondary, set_value, locate } what = kind::click;
  int index = 0;
  int click_count = 1;
  std::string action;  // secondary
  std::string value;   // set_value
  // set_value's keyboard fallback types at most max_typed characters (the
  // input actor's limit per call, type_text's); value has characters.
  size_t characters = 0;
  size_t max_typed = SIZE_MAX;
};

// An element of app's latest snapshot: acted on (click through its own
// action, a secondary action, set_value), or, for click without a
// suitable action and locate, its center left in out->pointer. Fills *out
// and answers an empty success, or fails. A click on a disabled element,
// or one out of view, is refused. set_value on a focusable text field
// without EditableText (Chromium's entries) focuses it and its window and
// leaves out->method "keyboard": the loop then selects all and types; a
// value longer than req.max_typed characters is refused there instead,
// before anything is focused.
std::unique_ptr<a11y_op> make_element_job(std::string app, element_request req,
                                          std::shared_ptr<a11y_outcome> out,
                                          a11y_grant_check grants = {});

// What acting by mark asks when the pointer cannot reach an accessibility
// element's mark: the element of this role and name in the application of
// pid (of several, the one whose frame is frame, in root pixels), pressed
// through its own click action ("click", "press", "activate", "toggle",
// "jump"). The job fills out->app, out->element and out->action and
// answers an empty success, or fails saying why nothing was pressed (not
// found, several alike, disabled, no such action).
struct a11y_press_by_name {
  int pid = 0;
  std::string role, name;
  rect frame;
};
std::unique_ptr<a11y_op> make_press_by_name(a11y_press_by_name want,
                                            std::shared_ptr<a11y_outcome> out,
                                            a11y_grant_check grants = {});

// type_text (text set) and press_key (text empty): text goes into app's
// focused editable text element when it has one; otherwise app's window
// is given the keyboard focus and out->method is "keyboard" for the loop
// to send the keys.
std::unique_ptr<a11y_op> make_keyboard_job(std::string app, std::optional<std::string> text,
                                           std::shared_ptr<a11y_outcome> out,
                                           a11y_grant_check grants = {});

}  // namespace cu
