// Owns: the gestures the pointer and keyboard tools perform, as the actor
// runs them: each takes arguments the tool's handler has already validated
// and mapped to device pixels (placed on the root here when they are a
// window's: input_context::place), and ends in the tool's result. Every key or
// button a gesture presses is released before it returns, whatever fails;
// only hold() leaves keys down, handing them to the actor's hold timer.
// Thread affinity: the input actor's thread (inside an input job).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.h"
#include "core/tool_result.h"
#include "input/actor.h"
#include "input/context.h"
#include "input/keys.h"

namespace cu {

// Keys written as one or more chords, held together (modifiers for a click,
// the keys of a hold), and how the caller wrote them.
struct held_keys {
  key_chord chord;
  std::string text;
};

namespace gesture {

// count presses of button at p (a double or triple click when count is 2
// or 3), holding mods; answers label.
tool_result click(input_context& ctx, device_target t, uint8_t button, int count,
                  const std::optional<held_keys>& mods, const std::string& label);

tool_result move(input_context& ctx, device_target t);

// Presses the left button at from (or where the pointer is), moves to to in
// steps and releases there.
tool_result drag(input_context& ctx, std::optional<device_target> from, device_target to);

// n clicks of a wheel button (4 up, 5 down, 6 left, 7 right) at p.
tool_result scroll(input_context& ctx, device_target t, uint8_t button, int n,
                   const std::optional<held_keys>& mods, const std::string& label);

// left_mouse_down and left_mouse_up, after moving to at when given.
tool_result left_down(input_context& ctx, std::optional<device_target> at);
tool_result left_up(input_context& ctx, std::optional<device_target> at);

// Types keys, which stand for characters characters of text.
tool_result type(input_context& ctx, const std::vector<typed_char>& keys, size_t characters);

// Taps the chords in order, n times over; answers label.
tool_result key(input_context& ctx, const std::vector<key_chord>& chords, int64_t n,
                const std::string& label);

// Presses all and leaves it down: ctl tells the actor to answer label and
// release the keys after seconds.
tool_result hold(input_context& ctx, job_control& ctl, const key_chord& all, double seconds,
                 const std::string& label);

// The pointer in image pixels of session, or, before any screenshot, of
// the image a screenshot of area (nothing: the whole screen) would make now.
tool_result cursor_position(input_context& ctx, const std::optional<coord_session>& session,
                            const std::optional<rect>& area);

}  // namespace gesture
}  // namespace cu
