// Owns: reading and validating tool arguments, so that every invalid-argument
// message has one shape: it names the argument and says what was expected.
// Thread affinity: the loop thread (arguments live in its parser).
#pragma once

#include <simdjson.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

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

// The message used for every invalid argument.
error invalid_argument(std::string_view name, std::string_view expected,
                       std::string_view got = {});

}  // namespace cu
