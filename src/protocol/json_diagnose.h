// Owns: explaining why a request line is not JSON the server can take.
// simdjson's DOM parser says only what kind of thing went wrong ("Problem
// while parsing a number"); this walks the line again with simdjson's
// On-Demand API to say where (the byte offset and the member, such as
// "id" or "params.arguments.text") and why, so a client can fix its line.
// It runs only on lines that failed to parse, never on the fast path.
// Thread affinity: none; a pure function.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

namespace cu {

// The message of the -32700 answer to line, which the DOM parser refused
// with dom_error: "Parse error at byte 22 (in "id"): the number 1e400 is
// out of range (...)", or "Parse error: " and simdjson's own message when
// nothing more precise is known.
std::string describe_parse_error(std::string_view line, simdjson::error_code dom_error);

}  // namespace cu
