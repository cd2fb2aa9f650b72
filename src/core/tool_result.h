// Owns: what a tool call returns (content blocks, isError) and the JSON-RPC
// response lines built from it and from protocol errors.
// Thread affinity: none; a worker builds its response line itself, so the
// base64 image is encoded once, straight into the line the loop writes.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_buffer.h"
#include "core/geometry.h"
#include "util/result.h"

namespace cu {

// An encoded image as a client receives it. Shared, because an unchanged
// screen is answered with the same image again.
struct image_payload {
  std::string base64;           // The PNG or JPEG file, base64-encoded once.
  size_t size = 0;              // The file's size.
  const char* mime_type = "image/png";
  // The file itself, as pieces in order, for save_to_disk to write as they
  // are. Shared: a PNG's strips are the very buffers the capture cache keeps
  // for the next encode, so holding them here costs only the few header bytes.
  std::vector<std::shared_ptr<const byte_buffer>> file;
  // The structured result's name for the format: "png" or "jpeg".
  const char* format() const;
};

// Makes the payload of an encoded image, base64-encoding it and keeping the
// file for save_to_disk.
std::shared_ptr<const image_payload> make_image_payload(byte_buffer bytes,
                                                        const char* mime_type);
// The same for a file held as pieces, in order.
std::shared_ptr<const image_payload> make_image_payload(
    std::vector<std::shared_ptr<const byte_buffer>> pieces, const char* mime_type);

struct content_block {
  enum class kind { text, image } type = kind::text;
  std::string text;                            // For text blocks.
  std::shared_ptr<const image_payload> image;  // For image blocks.
};

// One thing a search found (screenshot_find's template, find_text's
// phrase), in the image's pixels: where it lies and its centre.
struct found_match {
  rect box;
  point center;
};

struct tool_result {
  std::vector<content_block> content;
  bool is_error = false;
  // structuredContent: a JSON object as text, matching the tool's
  // outputSchema; empty for none.
  std::string structured;
  // A search's matches as values, beside their JSON in structured: what
  // the loop decides on (screenshot_find's until, a batch condition) is
  // read here, not parsed back. Nothing: the tool searches for nothing.
  std::optional<std::vector<found_match>> matches;

  static tool_result text(std::string t, bool is_error = false);
  // Where an error becomes what the model reads: its message as the one
  // text block of an isError result. Every error a room returns reaches a
  // tool's answer through here, so the rule lives in one place.
  static tool_result failure(const error& e);
  // A refusal the tool's own code words at the edge (no error behind it).
  static tool_result failure(std::string message) { return text(std::move(message), true); }
  // A JSON object answer: the same text as a text block and as structuredContent.
  static tool_result json(std::string object_json);
  tool_result& add_text(std::string t);
  tool_result& add_image(std::shared_ptr<const image_payload> image);
  // A PNG file as an image block.
  tool_result& add_png(byte_buffer png);
  bool has_image() const;
};

// JSON-RPC error codes used by the protocol layer.
enum class rpc_error : int {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,
  // MCP 2026-07-28: the request's _meta names a protocol version not served here.
  unsupported_protocol_version = -32022,
};

// The era of MCP a request came in (docs/protocol.md, "Eras and state"):
// legacy (an initialize handshake, 2025-11-25 and earlier) or modern
// (2026-07-28, its version and capabilities in every request's _meta). A
// modern result also carries resultType "complete" and the server's name and
// version in its _meta; a legacy one is exactly as before.
enum class rpc_era : unsigned char { legacy, modern };

class json_writer;

// Writes the members a result of era begins with, inside its object:
// resultType and _meta for modern, nothing for legacy.
void write_era_members(json_writer& w, rpc_era era);

// `{"jsonrpc":"2.0","id":<id_json>,"result":<tool result>}` plus "\n".
std::string render_tool_response(std::string_view id_json, const tool_result& r,
                                 rpc_era era = rpc_era::legacy);

// The length of render_tool_response(id_json, r, era), without copying any image.
size_t tool_response_size(std::string_view id_json, const tool_result& r,
                          rpc_era era = rpc_era::legacy);

// `{"jsonrpc":"2.0","id":<id_json>,"result":<result_json>}` plus "\n".
std::string render_result(std::string_view id_json, std::string_view result_json);

// `{"jsonrpc":"2.0","id":<id_json or null>,"error":{"code":..,"message":..}}` plus "\n";
// with data_json (a JSON value) not empty, the error's "data" too.
std::string render_error(std::string_view id_json, rpc_error code, std::string_view message,
                         std::string_view data_json = {});

}  // namespace cu
