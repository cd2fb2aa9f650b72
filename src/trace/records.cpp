#include "trace/records.h"

#include <algorithm>

namespace cu {

std::string script_line(std::string_view json) {
  static constexpr std::string_view open = R"(<script type="application/json" class="cu">)";
  static constexpr std::string_view close = "</script>\n";
  std::string out;
  out.reserve(open.size() + json.size() + close.size() + 16);
  out += open;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    // '<' is only ever inside a JSON string: as \u003c no text can open
    // "<!--" (after which "<script" keeps the element open past its end,
    // swallowing the records after it) or close the element with "</".
    if (c == '<') {
      out += "\\u003c";
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8/A9) end a line in older JavaScript.
    if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
        (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    out += c;
  }
  out += close;
  return out;
}

bool carries_text(std::string_view tool) {
  for (std::string_view t :
       {"type", "key", "hold_key", "write_clipboard", "type_text", "press_key", "set_value",
        "left_click", "right_click", "middle_click", "double_click", "triple_click", "scroll",
        "computer_batch"}) {
    if (tool == t) return true;
  }
  return false;
}

bool answers_text(std::string_view tool) { return tool == "read_clipboard"; }

size_t char_count(std::string_view s) {
  return size_t(std::count_if(s.begin(), s.end(),
                              [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

namespace {

void write_value(json_writer& w, simdjson::dom::element v) { w.raw(simdjson::minify(v)); }

// An object of arguments, its "text" redacted.
void write_redacted_object(json_writer& w, simdjson::dom::object o,
                           std::vector<std::string>& secrets) {
  w.begin_object();
  for (auto field : o) {
    w.key(field.key);
    std::string_view text;
    if ((field.key == "text" || field.key == "value" || field.key == "key") &&
        field.value.get(text) == simdjson::SUCCESS) {
      if (!text.empty()) secrets.emplace_back(text);
      w.string("[redacted " + std::to_string(char_count(text)) + " chars]");
    } else {
      write_value(w, field.value);
    }
  }
  w.end_object();
}

}  // namespace

void write_args(json_writer& w, std::string_view tool, simdjson::dom::element args, bool redact,
                std::vector<std::string>& secrets) {
  simdjson::dom::object o;
  if (!redact || !carries_text(tool) || args.get(o) != simdjson::SUCCESS) {
    return write_value(w, args);
  }
  if (tool != "computer_batch") return write_redacted_object(w, o, secrets);
  // A batch: the steps of tools that carry text have their text redacted.
  w.begin_object();
  for (auto field : o) {
    w.key(field.key);
    simdjson::dom::array steps;
    if (field.key != "actions" || field.value.get(steps) != simdjson::SUCCESS) {
      write_value(w, field.value);
      continue;
    }
    w.begin_array();
    for (simdjson::dom::element step : steps) {
      simdjson::dom::object s;
      std::string_view name;
      if (step.get(s) != simdjson::SUCCESS || s.at_key("name").get(name) != simdjson::SUCCESS ||
          !carries_text(name)) {
        write_value(w, step);
        continue;
      }
      w.begin_object();
      for (auto sf : s) {
        w.key(sf.key);
        simdjson::dom::object a;
        if (sf.key == "arguments" && sf.value.get(a) == simdjson::SUCCESS) {
          write_redacted_object(w, a, secrets);
        } else {
          write_value(w, sf.value);
        }
      }
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

std::string redact_secrets(std::string s, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = s.find(secret); at != std::string::npos;
         at = s.find(secret, at + sizeof("[redacted]") - 1)) {
      s.replace(at, secret.size(), "[redacted]");
    }
  }
  return s;
}

}  // namespace cu
