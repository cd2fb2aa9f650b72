// Owns: the text of a trace file (docs/trace.md, and /work's format notes
// in docs/trace.md's "Format"): the viewer every file begins with, a record
// as the one line that holds it, and a call's arguments as a record shows
// them, with typed text redacted when asked.
// Thread affinity: none; pure functions.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_writer.h"

namespace cu {

// src/trace/viewer.html, embedded by the build (embed_viewer.py).
extern const std::string_view trace_viewer_html;

// The line that holds record json: `<script type="application/json"
// class="cu">` json `</script>` and a newline, with every "<" inside
// written "\u003c" and U+2028/U+2029 escaped, so no text in a record (a
// window title, typed text) can end its script element early or keep it
// open past its end.
std::string script_line(std::string_view json);

// Whether tool's arguments carry typed, set or pressed text that
// CU_TRACE_REDACT_TEXT hides: type, key, hold_key, the clicks' and scroll's
// modifiers, write_clipboard, and the a11y toolset's type_text, press_key
// and set_value; and a batch (its steps of those tools). Their "text",
// "value" and "key" arguments are redacted.
bool carries_text(std::string_view tool);

// Whether tool's answer carries text from the desktop that
// CU_TRACE_REDACT_TEXT hides: read_clipboard's.
bool answers_text(std::string_view tool);


// Writes args (a call's arguments, an object) into w as they were sent;
// with redact and a tool that carries_text, each typed "text" becomes
// "[redacted N chars]" and the text itself is added to secrets, so the
// answer can be cleaned of it too (redact_secrets).
void write_args(json_writer& w, std::string_view tool, simdjson::dom::element args, bool redact,
                std::vector<std::string>& secrets);

// s with every occurrence of each secret replaced by "[redacted]".
std::string redact_secrets(std::string s, const std::vector<std::string>& secrets);

// The number of characters (code points) of UTF-8 text.
size_t char_count(std::string_view s);

}  // namespace cu
