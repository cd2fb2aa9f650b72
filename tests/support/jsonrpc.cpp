#include "support/jsonrpc.h"

#include <algorithm>
#include <utility>

#include <catch2/catch.hpp>

namespace cu::test {

using simdjson::dom::element;
using simdjson::dom::element_type;

namespace {

bool is_number(element e) {
  auto t = e.type();
  return t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
}

}  // namespace

// ---------------------------------------------------------------- JSON ----

bool json_equal(element a, element b) {
  if (is_number(a) && is_number(b)) {
    double x = 0, y = 0;
    return a.get_double().get(x) == simdjson::SUCCESS &&
           b.get_double().get(y) == simdjson::SUCCESS && x == y;
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case element_type::ARRAY: {
      simdjson::dom::array x = a, y = b;
      if (x.size() != y.size()) return false;
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j) {
        if (!json_equal(*i, *j)) return false;
      }
      return true;
    }
    case element_type::OBJECT: {
      simdjson::dom::object x = a, y = b;
      if (x.size() != y.size()) return false;
      for (auto field : x) {
        element other;
        if (y.at_key(field.key).get(other) != simdjson::SUCCESS) return false;
        if (!json_equal(field.value, other)) return false;
      }
      return true;
    }
    case element_type::STRING: return std::string_view(a) == std::string_view(b);
    case element_type::BOOL: return bool(a) == bool(b);
    case element_type::NULL_VALUE: return true;
    default: return false;
  }
}

// Built with append: GCC 12 warns falsely (-Wrestrict) on "[" + std::string.
std::string json_array(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) s.append(",");
    s.append(items[i]);
  }
  return s.append("]");
}

// ------------------------------------------------------------- requests ----

std::string rpc(std::string_view id, std::string_view method, std::string_view params) {
  return std::string(R"({"jsonrpc":"2.0","id":)") + std::string(id) + R"(,"method":")" +
         std::string(method) + R"(","params":)" + std::string(params) + "}";
}

std::string tool_call(std::string_view id, std::string_view name, std::string_view args) {
  return rpc(id, "tools/call",
             std::string(R"({"name":")") + std::string(name) + R"(","arguments":)" +
                 std::string(args) + "}");
}

std::string tool_call_with_token(std::string_view id, std::string_view name,
                                 std::string_view args, std::string_view token) {
  return rpc(id, "tools/call",
             std::string(R"({"name":")") + std::string(name) + R"(","arguments":)" +
                 std::string(args) + R"(,"_meta":{"progressToken":)" + std::string(token) + "}}");
}

std::string cancel_note(std::string_view id) {
  return std::string(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)") +
         std::string(id) + R"(,"reason":"test"}})";
}

// ------------------------------------------------------------ responses ----

std::string method_of(const json_line& j) {
  std::string_view m;
  if (j.root["method"].get(m) != simdjson::SUCCESS) return {};
  return std::string(m);
}

std::string id_of(const json_line& j) {
  element id;
  if (j.root["id"].get(id) != simdjson::SUCCESS) return {};
  return std::string(simdjson::minify(id));
}

int64_t error_code(const json_line& r) {
  int64_t code = 0;
  REQUIRE(r.root["error"]["code"].get(code) == simdjson::SUCCESS);
  return code;
}

json_ptr read_until(server_process& s, std::string_view id_json, std::vector<json_ptr>& others,
                    int timeout_ms) {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    auto line = s.read_line(int(std::max<int64_t>(0, deadline - now_ms())));
    if (!line) return nullptr;
    json_ptr j = parse_json(std::move(*line));
    if (j->root.is_object() && id_of(*j) == id_json && method_of(*j).empty()) return j;
    others.push_back(std::move(j));
  }
}

std::vector<const json_line*> with_method(const std::vector<json_ptr>& lines,
                                          std::string_view method) {
  std::vector<const json_line*> out;
  for (const json_ptr& j : lines) {
    if (j->root.is_object() && method_of(*j) == method) out.push_back(j.get());
  }
  return out;
}

// Sends a tools/call with a progress token and reads until the server says
// it is watching; the lines read on the way are kept in others.
void start_watching(server_process& s, std::string_view id, std::string_view tool,
                    std::string_view args, std::vector<json_ptr>& others) {
  s.send(tool_call_with_token(id, tool, args, "\"watch\""));
  const int64_t deadline = now_ms() + 20000;
  for (;;) {
    REQUIRE(now_ms() < deadline);
    auto line = s.read_line(20000);
    REQUIRE(line);
    json_ptr j = parse_json(*line);
    std::string_view message;
    if (method_of(*j) == "notifications/progress" &&
        j->root["params"]["message"].get(message) == simdjson::SUCCESS && message == "watching") {
      return;
    }
    INFO(j->text);
    REQUIRE(id_of(*j) != id);  // Answered before it watched: a failure it explains.
    others.push_back(std::move(j));
  }
}

}  // namespace cu::test
