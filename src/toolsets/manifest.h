// Owns: the generated files derived from the tool registry: plugin.json (the
// service-plugin manifest) and docs/computer-use-mcp-tools-schema.md.
// Thread affinity: none; pure functions of the registry.
#pragma once

#include <string>

namespace cu {

// The service-plugin manifest, pretty-printed, ending in a newline.
std::string plugin_json();

// The Markdown schema document: every toolset's tools, and what a toolset
// adds to the default one's.
std::string schema_doc();

}  // namespace cu
