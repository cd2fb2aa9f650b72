// Owns: what the computer_batch tests build and check: a batch's actions and
// arguments, its result read as content block types and as its summary, and
// the letters a probe window saw pressed (a batch's steps are answered only
// when the whole batch is, so the probe is what shows how far it got).
// Thread affinity: the test thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/harness.h"
#include "support/input_probe.h"

namespace cu::test {

// ------------------------------------------------------------- requests ----

// One batch action; args (JSON text) is left out when empty.
std::string act(std::string_view name, std::string_view args = {});
// A key action pressing text.
std::string key_step(std::string_view text);
// computer_batch arguments; extra is more members (",\"delay_ms\":5").
std::string batch_args(const std::vector<std::string>& steps, std::string_view extra = {});

// ------------------------------------------------------------ responses ----

// What a batch puts before a step's text: "[step I · NAME] ".
std::string step_prefix(size_t i, std::string_view name);

// The types of a result's content blocks, in order.
std::vector<std::string> block_types(const json_line& r);
size_t image_count(const json_line& r);

// Checks that a batch result's summary is exactly `expected` (JSON text) and
// that structuredContent is that same object.
// docs/protocol.md promises structuredContent for successful results; for a
// batch that stopped early (an isError result) it is checked when present.
void check_summary(const json_line& r, const std::string& expected);

// ------------------------------------------------------------ the probe ----

// The letters of the key presses among events, in order: a, b, c, S for
// Shift, '?' for any other key.
std::string pressed_letters(input_probe& probe, const std::vector<input_event>& events);

// Polls the probe (with a deadline) until the letters pressed so far contain
// `letters` in order; the events stay in probe.events(). A batch's steps
// answer only when the whole batch does, so there is no reply to sync on.
bool wait_pressed(input_probe& probe, const std::string& letters, int timeout_ms = 5000);

}  // namespace cu::test
