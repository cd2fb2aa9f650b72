// Owns: the declarations of the toolsets' JSON tables, which the build
// embeds from src/toolsets/defs.json and src/toolsets/<name>/tools.json
// (src/toolsets/embed.py writes their definitions, minified).
// Thread affinity: none; constant data.
#pragma once

#include <string_view>

namespace cu::tables {

// Schema fragments any table may use as {"$def": "name", ...overrides}.
extern const std::string_view defs;

// One per toolset room: {"toolset", "summary", "tools": [...], "extends": [...]}.
extern const std::string_view computer;
extern const std::string_view windows;
extern const std::string_view vision;
extern const std::string_view a11y;
extern const std::string_view gamepad;
extern const std::string_view marks;

}  // namespace cu::tables
