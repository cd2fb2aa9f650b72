// Owns: the command that writes plugin.json,
// docs/computer-use-mcp-tools-schema.md and tests/tool-names.json from the
// tool registry, and the generated blocks of hand-written documents
// (tools/doc_lists.h): README.md's packages from tools/lib/deps.sh and
// docs/HACKING.md's thread table from util/threads.h.
//
//   gen-manifest plugin            print plugin.json
//   gen-manifest schema            print the schema document
//   gen-manifest names             print the tool names the tests read
//   gen-manifest write SOURCE_DIR  rewrite the three files and the two
//                                  blocks in the source tree
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/doc_lists.h"
#include "toolsets/manifest.h"
#include "toolsets/registry.h"

namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return bool(f);
}

bool read_file(const std::string& path, std::string* text) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  *text = s.str();
  return bool(f);
}

// Rewrites block name of the document at path with contents; says why not
// on stderr.
bool write_block(const std::string& path, const char* name, const cu::result<std::string>& contents) {
  std::string text;
  if (!read_file(path, &text)) {
    fprintf(stderr, "gen-manifest: cannot read %s\n", path.c_str());
    return false;
  }
  if (!contents) {
    fprintf(stderr, "gen-manifest: %s: %s\n", name, contents.err().message.c_str());
    return false;
  }
  auto updated = cu::docs::with_block(text, name, contents.value());
  if (!updated) {
    fprintf(stderr, "gen-manifest: %s: %s\n", path.c_str(), updated.err().message.c_str());
    return false;
  }
  return *updated == text || write_file(path, *updated);
}

// Every toolset's tool names in tools/list order, one toolset a key in
// registry order, one name a line so a change reads as a one-line diff. The
// a11y toolset is listed whether or not this build has libatspi, so the file
// is the same from every build; the tests skip what their server lacks.
// Names are identifiers (lower case and underscores), so they need no escaping.
std::string tool_names_json() {
  std::string out = "{\n";
  bool first_set = true;
  for (const cu::toolset_def& set : cu::all_toolsets()) {
    out += first_set ? "  \"" : ",\n  \"";
    first_set = false;
    out += std::string(set.name) + "\": [";
    bool first_tool = true;
    for (const cu::tool_def& t : set.tools) {
      out += first_tool ? "\n    \"" : ",\n    \"";
      first_tool = false;
      out += std::string(t.name) + "\"";
    }
    out += "\n  ]";
  }
  return out + "\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "plugin") == 0) {
    fputs(cu::plugin_json().c_str(), stdout);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "schema") == 0) {
    fputs(cu::schema_doc().c_str(), stdout);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "names") == 0) {
    fputs(tool_names_json().c_str(), stdout);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "write") == 0) {
    std::string dir = argv[2];
    bool ok = write_file(dir + "/plugin.json", cu::plugin_json()) &&
              write_file(dir + "/docs/computer-use-mcp-tools-schema.md", cu::schema_doc()) &&
              write_file(dir + "/tests/tool-names.json", tool_names_json());
    std::string deps;
    ok = ok && read_file(dir + "/tools/lib/deps.sh", &deps) &&
         write_block(dir + "/README.md", "packages", cu::docs::packages_block(deps)) &&
         write_block(dir + "/docs/HACKING.md", "threads", cu::docs::threads_block());
    return ok ? 0 : 1;
  }
  fputs("usage: gen-manifest plugin | schema | names | write SOURCE_DIR\n", stderr);
  return 2;
}
