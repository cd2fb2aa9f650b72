#include "core/tool_result.h"

#include "build_config.h"
#include "core/json_writer.h"
#include "util/base64.h"

namespace cu {

tool_result tool_result::text(std::string t, bool is_error) {
  tool_result r;
  r.is_error = is_error;
  r.add_text(std::move(t));
  return r;
}

tool_result tool_result::failure(const error& e) { return text(e.message, true); }

tool_result tool_result::json(std::string object_json) {
  tool_result r;
  r.structured = object_json;
  r.add_text(std::move(object_json));
  return r;
}

tool_result& tool_result::add_text(std::string t) {
  content_block b;
  b.type = content_block::kind::text;
  b.text = std::move(t);
  content.push_back(std::move(b));
  return *this;
}

const char* image_payload::format() const {
  return std::string_view(mime_type) == "image/jpeg" ? "jpeg" : "png";
}

std::shared_ptr<const image_payload> make_image_payload(byte_buffer bytes,
                                                        const char* mime_type) {
  std::vector<std::shared_ptr<const byte_buffer>> pieces;
  pieces.push_back(std::make_shared<const byte_buffer>(std::move(bytes)));
  return make_image_payload(std::move(pieces), mime_type);
}

std::shared_ptr<const image_payload> make_image_payload(
    std::vector<std::shared_ptr<const byte_buffer>> pieces, const char* mime_type) {
  auto p = std::make_shared<image_payload>();
  std::vector<std::span<const uint8_t>> spans;
  spans.reserve(pieces.size());
  for (const auto& piece : pieces) {
    spans.emplace_back(piece->data.get(), piece->size);
    p->size += piece->size;
  }
  base64_append(p->base64, spans);
  p->file = std::move(pieces);
  p->mime_type = mime_type;
  return p;
}

tool_result& tool_result::add_image(std::shared_ptr<const image_payload> image) {
  content_block b;
  b.type = content_block::kind::image;
  b.image = std::move(image);
  content.push_back(std::move(b));
  return *this;
}

tool_result& tool_result::add_png(byte_buffer png) {
  return add_image(make_image_payload(std::move(png), "image/png"));
}

bool tool_result::has_image() const {
  for (const content_block& b : content) {
    if (b.type == content_block::kind::image) return true;
  }
  return false;
}

void write_era_members(json_writer& w, rpc_era era) {
  if (era != rpc_era::modern) return;
  // Every 2026-07-28 result says what it is, and names the server, since no
  // handshake did (the name and version are initialize's serverInfo).
  w.key("resultType").string("complete").key("_meta").begin_object();
  w.key("io.modelcontextprotocol/serverInfo").begin_object();
  w.key("name").string("computer-use").key("version").string(CU_VERSION);
  w.end_object().end_object();
}

namespace {

// The response line; with images_empty, every image's data is left out.
std::string render(std::string_view id_json, const tool_result& r, bool images_empty,
                   rpc_era era) {
  // Size the line once: the base64 payloads dominate it.
  size_t reserve = 128 + id_json.size() + r.structured.size();
  for (const content_block& b : r.content) {
    reserve += 64 + (b.type != content_block::kind::image ? b.text.size() + b.text.size() / 8
                     : images_empty                       ? 0
                                                          : b.image->base64.size());
  }
  std::string out;
  out.reserve(reserve);
  json_writer w(out);
  w.begin_object().key("jsonrpc").string("2.0").key("id").raw(id_json).key("result");
  w.begin_object();
  write_era_members(w, era);
  w.key("content").begin_array();
  for (const content_block& b : r.content) {
    w.begin_object();
    if (b.type == content_block::kind::image) {
      w.key("type").string("image");
      w.key("data").plain_string(images_empty ? std::string_view() : b.image->base64);
      w.key("mimeType").string(b.image->mime_type);
    } else {
      w.key("type").string("text").key("text").string(b.text);
    }
    w.end_object();
  }
  w.end_array();
  if (!r.structured.empty()) w.key("structuredContent").raw(r.structured);
  w.key("isError").boolean(r.is_error).end_object().end_object();
  out.push_back('\n');
  return out;
}

}  // namespace

std::string render_tool_response(std::string_view id_json, const tool_result& r, rpc_era era) {
  return render(id_json, r, false, era);
}

size_t tool_response_size(std::string_view id_json, const tool_result& r, rpc_era era) {
  size_t n = render(id_json, r, true, era).size();
  for (const content_block& b : r.content) {
    if (b.type == content_block::kind::image) n += b.image->base64.size();
  }
  return n;
}

std::string render_result(std::string_view id_json, std::string_view result_json) {
  std::string out;
  out.reserve(40 + id_json.size() + result_json.size());
  json_writer w(out);
  w.begin_object().key("jsonrpc").string("2.0").key("id").raw(id_json);
  w.key("result").raw(result_json).end_object();
  out.push_back('\n');
  return out;
}

std::string render_error(std::string_view id_json, rpc_error code, std::string_view message,
                         std::string_view data_json) {
  std::string out;
  json_writer w(out);
  w.begin_object().key("jsonrpc").string("2.0").key("id").raw(id_json.empty() ? "null" : id_json);
  w.key("error").begin_object().key("code").number(int64_t(code));
  w.key("message").string(message);
  if (!data_json.empty()) w.key("data").raw(data_json);
  w.end_object().end_object();
  out.push_back('\n');
  return out;
}

}  // namespace cu
