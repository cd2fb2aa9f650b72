// Owns: the JSON-RPC lines a test writes to the server by hand (requests,
// tools/calls with a progress token, cancel notifications, batch arrays) and
// what it reads out of the lines that come back: ids, methods, error codes,
// notifications read on the way to a response, and structural equality of
// two JSON values.
// Thread affinity: the test thread.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/harness.h"

namespace cu::test {

// ---------------------------------------------------------------- JSON ----

// Structural equality: objects compare as unordered maps, numbers by value.
bool json_equal(simdjson::dom::element a, simdjson::dom::element b);

// A JSON array of these items, each already JSON text ("[a,b]").
std::string json_array(const std::vector<std::string>& items);

// ------------------------------------------------------------- requests ----
// Ids and params are JSON text: "\"w\"" is the string id w, "7" the number.

std::string rpc(std::string_view id, std::string_view method, std::string_view params = "{}");
std::string tool_call(std::string_view id, std::string_view name, std::string_view args);
// A tools/call with params._meta.progressToken (token is JSON text).
std::string tool_call_with_token(std::string_view id, std::string_view name,
                                 std::string_view args, std::string_view token);
// notifications/cancelled for the request with this id.
std::string cancel_note(std::string_view id);

// ------------------------------------------------------------ responses ----

// A message's method ("" for a response).
std::string method_of(const json_line& j);
// The id of a message as JSON text ("" when it has none).
std::string id_of(const json_line& j);
// The error code of an error response; fails the test when there is none.
int64_t error_code(const json_line& r);

// Reads lines until the response with this id; everything else read on the
// way (notifications, other responses) goes to others. Null on timeout.
json_ptr read_until(server_process& s, std::string_view id_json, std::vector<json_ptr>& others,
                    int timeout_ms = 20000);

// Sends a tools/call of a wait (wait_for_change, wait_until_stable, a
// find's until) with a progress token and reads until the server says it
// is watching; the lines read on the way are kept in others.
void start_watching(server_process& s, std::string_view id, std::string_view tool,
                    std::string_view args, std::vector<json_ptr>& others);

// The lines among these that are messages with this method, in order.
std::vector<const json_line*> with_method(const std::vector<json_ptr>& lines,
                                          std::string_view method);

}  // namespace cu::test
