#include "json_tree.h"

#include <simdjson.h>

#include <cstdio>

namespace cu_fuzz {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out;
}

jvalue jvalue::string(std::string_view s) { return string_text(escape(s)); }

jvalue& jvalue::set(std::string_view key, jvalue v) {
  keys.push_back(escape(key));
  kids.push_back(std::move(v));
  return *this;
}

jvalue* jvalue::get(std::string_view key) {
  std::string k = escape(key);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == k) return &kids[i];
  }
  return nullptr;
}

const jvalue* jvalue::get(std::string_view key) const {
  return const_cast<jvalue*>(this)->get(key);
}

void write(const jvalue& v, std::string& out) {
  switch (v.k) {
    case jvalue::kind::null: out += "null"; break;
    case jvalue::kind::boolean:
    case jvalue::kind::number:
    case jvalue::kind::raw: out += v.text; break;
    case jvalue::kind::string:
      out += '"';
      out += v.text;
      out += '"';
      break;
    case jvalue::kind::array:
      out += '[';
      for (size_t i = 0; i < v.kids.size(); ++i) {
        if (i) out += ',';
        write(v.kids[i], out);
      }
      out += ']';
      break;
    case jvalue::kind::object:
      out += '{';
      for (size_t i = 0; i < v.kids.size(); ++i) {
        if (i) out += ',';
        out += '"';
        out += i < v.keys.size() ? v.keys[i] : std::string();
        out += "\":";
        write(v.kids[i], out);
      }
      out += '}';
      break;
  }
}

std::string write(const jvalue& v) {
  std::string out;
  write(v, out);
  return out;
}

namespace {

jvalue from_dom(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::ARRAY: {
      jvalue a = jvalue::array();
      for (simdjson::dom::element x : simdjson::dom::array(e)) a.push(from_dom(x));
      return a;
    }
    case element_type::OBJECT: {
      jvalue o = jvalue::object();
      for (auto field : simdjson::dom::object(e)) o.set(field.key, from_dom(field.value));
      return o;
    }
    case element_type::INT64: return jvalue::number(std::to_string(int64_t(e)));
    case element_type::UINT64: return jvalue::number(std::to_string(uint64_t(e)));
    case element_type::DOUBLE: {
      char buf[32];
      snprintf(buf, sizeof buf, "%.17g", double(e));
      return jvalue::number(buf);
    }
    case element_type::STRING: return jvalue::string(std::string_view(e));
    case element_type::BOOL: return jvalue::boolean(bool(e));
    case element_type::NULL_VALUE: return jvalue::null();
  }
  return jvalue::null();
}

}  // namespace

std::optional<jvalue> parse(std::string_view text) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  return from_dom(root);
}

void collect(jvalue& v, std::vector<jvalue*>& out) {
  out.push_back(&v);
  for (jvalue& k : v.kids) collect(k, out);
}

}  // namespace cu_fuzz
