// The gamepad toolset's tools: arguments checked here, the controller
// driven on the pad thread (pad_actor.cpp). Under grants, what moves the
// controller first asks the desktop thread whether the focused window's
// application is allowed (the pad thread has no X connection of its own).
#include <string>

#include "desktop/desktop_op.h"
#include "toolsets/args.h"
#include "toolsets/gamepad/pad_actor.h"
#include "toolsets/gamepad/room.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"

namespace cu {
namespace {

// A tap's length when the call names none: long enough for a game that
// reads its input once a frame (16 ms at 60 Hz) to see it on several.
constexpr int64_t kTapMs = 100;
// The longest hold: hold_key's 100 seconds.
constexpr int64_t kMaxHoldMs = 100'000;

// Hands r to the pad thread; a hold's length is what progress counts.
void submit(tool_call& call, const pad_request& r) {
  auto* pad = static_cast<pad_actor*>(call.service(toolset::gamepad));
  if (pad == nullptr) return call.fail("the gamepad toolset is not on");
  if (r.hold_ms > 0) call.expect_seconds(double(r.hold_ms) / 1000);
  auto to_pad = [pad, r](tool_call& c) {
    c.room(toolset::gamepad, [pad, r](job_header h) {
      pad_job job;
      static_cast<job_header&>(job) = std::move(h);
      job.req = r;
      pad->post(std::move(job));
    });
  };
  // Reading the state and letting everything go touch no application.
  std::shared_ptr<const grant_view> view = call.policy().view();
  if (!view->filtering() || r.what == pad_request::kind::state ||
      r.what == pad_request::kind::reset) {
    return to_pad(call);
  }
  call.then([to_pad](tool_call& next, tool_result checked) {
    if (checked.is_error) return next.finish(std::move(checked));
    to_pad(next);
  });
  call.desktop(make_focus_allowed(std::move(view), std::string(call.tool_name())));
}

// `action` and `hold` of a button or D-pad direction.
status read_press(tool_call& call, pad_request& r) {
  r.how = pad_request::mode::tap;
  if (arg_present(call.args, "action")) {
    auto a = arg_choice(call.args, "action", {"tap", "press", "release"});
    if (!a) return a.take_error();
    r.how = *a == "tap" ? pad_request::mode::tap
            : *a == "press" ? pad_request::mode::press
                            : pad_request::mode::release;
  }
  if (r.how != pad_request::mode::tap && arg_present(call.args, "hold")) {
    return invalid_argument("hold", "no hold with action press or release (a press stays down "
                                    "until released; tap takes hold)");
  }
  auto hold = arg_integer(call.args, "hold", 1, kMaxHoldMs, kTapMs);
  if (!hold) return hold.take_error();
  r.hold_ms = r.how == pad_request::mode::tap ? int(*hold) : 0;
  return {};
}

// An optional `hold` for a trigger or stick: 0 (it stays) when absent.
status read_hold(tool_call& call, pad_request& r) {
  auto hold = arg_integer(call.args, "hold", 1, kMaxHoldMs, 0);
  if (!hold) return hold.take_error();
  r.hold_ms = int(*hold);
  return {};
}

// A name from a fixed list, in any case; the error lists the names.
template <class Lookup>
result<int> named(tool_call& call, std::string_view arg, Lookup lookup, std::string_view names) {
  auto text = arg_string(call.args, arg);
  if (!text) return text.take_error();
  auto found = lookup(*text);
  if (!found) return invalid_argument(arg, str_cat("one of ", names), *text);
  return int(*found);
}

}  // namespace

void handle_gamepad_button(tool_call& call) {
  pad_request r;
  r.what = pad_request::kind::button;
  auto b = named(call, "button", button_named, "A, B, X, Y, LB, RB, Start, Back, Xbox, L3, R3");
  if (!b) return call.fail(b.err().message);
  r.index = *b;
  if (auto s = read_press(call, r); !s) return call.fail(s.err().message);
  submit(call, r);
}

void handle_gamepad_dpad(tool_call& call) {
  pad_request r;
  r.what = pad_request::kind::dpad;
  auto d = named(call, "direction", dir_named, "up, down, left, right");
  if (!d) return call.fail(d.err().message);
  r.index = *d;
  if (auto s = read_press(call, r); !s) return call.fail(s.err().message);
  submit(call, r);
}

void handle_gamepad_trigger(tool_call& call) {
  pad_request r;
  r.what = pad_request::kind::trigger;
  auto t = named(call, "trigger", trigger_named, "LT, RT");
  if (!t) return call.fail(t.err().message);
  r.index = *t;
  auto p = arg_integer(call.args, "pressure", 0, 255);
  if (!p) return call.fail(p.err().message);
  r.pressure = int(*p);
  if (auto s = read_hold(call, r); !s) return call.fail(s.err().message);
  submit(call, r);
}

void handle_gamepad_stick(tool_call& call) {
  pad_request r;
  r.what = pad_request::kind::stick;
  auto k = named(call, "stick", stick_named, "left, right");
  if (!k) return call.fail(k.err().message);
  r.index = *k;
  auto x = arg_integer(call.args, "x", -32768, 32767, 0);
  if (!x) return call.fail(x.err().message);
  auto y = arg_integer(call.args, "y", -32768, 32767, 0);
  if (!y) return call.fail(y.err().message);
  r.x = int16_t(*x);
  r.y = int16_t(*y);
  if (auto s = read_hold(call, r); !s) return call.fail(s.err().message);
  submit(call, r);
}

void handle_gamepad_reset(tool_call& call) {
  pad_request r;
  r.what = pad_request::kind::reset;
  submit(call, r);
}

void handle_gamepad_state(tool_call& call) {
  pad_request r;
  r.what = pad_request::kind::state;
  submit(call, r);
}

}  // namespace cu
