// Owns: reading and validating tool arguments, so that every invalid-argument
// message has one shape: it names the argument and says what was expected.
// Thread affinity: the loop thread (arguments live in its parser).
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "input/keys.h"
#include "util/result.h"

namespace cu {

// An optional boolean; absent or null gives fallback.
result<bool> arg_bool(simdjson::dom::object args, std::string_view name, bool fallback);

// A required string.
result<std::string_view> arg_string(simdjson::dom::object args, std::string_view name);

// A required array of four integers [x0, y0, x1, y1]. Integral floats (100.0)
// are accepted; the region's bounds are checked later against the session.
result<std::array<int, 4>> arg_region(simdjson::dom::object args, std::string_view name);

// A required [x, y] pair of finite numbers.
result<std::array<double, 2>> arg_coordinate(simdjson::dom::object args, std::string_view name);

// An optional [x, y] pair: nothing when absent or null.
result<std::optional<std::array<double, 2>>> arg_optional_coordinate(simdjson::dom::object args,
                                                                     std::string_view name);

// An integer in [min, max] (integral floats such as 3.0 count); fallback
// when absent or null, and required when there is no fallback.
result<int64_t> arg_integer(simdjson::dom::object args, std::string_view name, int64_t min,
                            int64_t max, std::optional<int64_t> fallback = std::nullopt);

// A required finite number in (min, max] when min_exclusive, else [min, max].
result<double> arg_number(simdjson::dom::object args, std::string_view name, double min,
                          bool min_exclusive, double max);

// A required string that is one of choices.
result<std::string_view> arg_choice(simdjson::dom::object args, std::string_view name,
                                    std::initializer_list<std::string_view> choices);

// A required array of strings.
result<std::vector<std::string>> arg_string_list(simdjson::dom::object args,
                                                 std::string_view name);

// A required string naming something (an application, a display): not
// empty, at most max_bytes long, valid UTF-8 with no control characters.
result<std::string_view> arg_name(simdjson::dom::object args, std::string_view name,
                                  size_t max_bytes);

// A required X window id as list_windows writes it ("0x1a00022"), or in
// decimal; never 0 (None) or beyond X's 29-bit ids.
result<uint32_t> arg_window(simdjson::dom::object args, std::string_view name);

// The same, optional: 0 when absent or null.
result<uint32_t> arg_optional_window(simdjson::dom::object args, std::string_view name);

// Whether the argument was given (and is not null).
bool arg_present(simdjson::dom::object args, std::string_view name);

// The message used for every invalid argument.
error invalid_argument(std::string_view name, std::string_view expected,
                       std::string_view got = {});

// The message for an argument the tool does not take: `Invalid argument
// "x": tool takes a, b` ("takes no arguments" when takes is empty), then
// "; " and note when there is one. The name is the client's, so it is
// escaped as JSON and cut to 64 bytes: the message stays one short line.
error unknown_argument(std::string_view name, std::string_view tool,
                       std::span<const std::string> takes, std::string_view note = {});

// The keys that type the argument "text" (type, and the a11y toolset's
// type_text, named by tool in the message), which stand for *characters
// characters; refused beyond kMaxTypeCharacters.
result<std::vector<typed_char>> text_keystrokes(simdjson::dom::object args, std::string_view tool,
                                                size_t* characters);

}  // namespace cu
