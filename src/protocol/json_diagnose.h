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

// The most JSON tokens a request line may hold. simdjson's DOM parser keeps
// 4 bytes of index per token and up to 16 bytes of tape per value, so a line
// of 64 MiB that is all tokens ("[0,0,0,...]") would cost 14 times its size;
// bounded, the parser's tape and indexes stay under 20 MiB whatever the
// line, and its copies of the strings take the line's size and 5 bytes a
// string (their length and a NUL) at most. No request needs
// as many: a batch array of 100 requests of 100 steps holds some 100,000.
// A line of up to kMaxJsonTokens bytes cannot pass it, so only longer lines
// are counted.
inline constexpr size_t kMaxJsonTokens = size_t{1} << 20;

// The tokens of a JSON text as simdjson's first stage counts them: each of
// { } [ ] , : outside strings, each string, and each other value (a number,
// true, false or null). Counting stops at limit + 1. A malformed text is
// counted the same way, so its cost is bounded too.
size_t json_tokens(std::string_view text, size_t limit);

}  // namespace cu
