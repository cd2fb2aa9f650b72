#include "a11y/element.h"

#include <algorithm>
#include <string_view>

#include "util/str_cat.h"

namespace cu {

std::string clip_text(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  // Back up to the first byte of a character (not 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  s += "\xE2\x80\xA6";
  return s;
}

namespace {

bool has_state(const a11y_element& e, std::string_view nick) {
  return std::find(e.states.begin(), e.states.end(), nick) != e.states.end();
}

// Text on one line: a name or value with line breaks or quotes would
// otherwise break the one-line-per-element form.
void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: out += c;
    }
  }
  out += '"';
}

constexpr std::string_view kShownStates[] = {"focused",  "selected",  "checked",  "pressed",
                                             "expanded", "collapsed", "editable", "offscreen"};

}  // namespace

std::string render_tree(const std::vector<a11y_element>& elements) {
  std::string out;
  for (const a11y_element& e : elements) {
    out.append(size_t(e.depth) * 2, ' ');
    out += std::to_string(e.index);
    out += ' ';
    out += e.role;
    if (!e.name.empty()) {
      out += ' ';
      append_quoted(out, e.name);
    }
    if (!e.value.empty()) {
      out += " = ";
      append_quoted(out, e.value);
    }
    std::string states;
    for (std::string_view s : kShownStates) {
      if (!has_state(e, s)) continue;
      if (!states.empty()) states += ' ';
      states += s;
    }
    // AT-SPI calls it "enabled" (and "sensitive"); what stands out is its
    // absence, on an element one could otherwise use (the application
    // object and plain containers never say "enabled").
    bool usable = !e.actions.empty() || has_state(e, "focusable") || has_state(e, "editable");
    if (usable && !has_state(e, "enabled")) states += states.empty() ? "disabled" : " disabled";
    if (!states.empty()) out += str_cat(" [", states, "]");
    if (!e.actions.empty()) {
      out += " {";
      for (size_t i = 0; i < e.actions.size(); ++i) {
        if (i > 0) out += ", ";
        out += e.actions[i];
      }
      out += '}';
    }
    // Out of view (scrolled away, outside its window, not showing): its
    // frame is no place to click, so the text offers none.
    if (e.frame && !has_state(e, "offscreen")) {
      out += " @";
      out += std::to_string(e.frame->x);
      out += ',';
      out += std::to_string(e.frame->y);
      out += ' ';
      out += std::to_string(e.frame->w);
      out += 'x';
      out += std::to_string(e.frame->h);
    }
    out += '\n';
  }
  return out;
}

}  // namespace cu
