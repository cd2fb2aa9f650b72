// Owns: the command that writes plugin.json and
// docs/computer-use-mcp-tools-schema.md from the tool registry.
//
//   gen-manifest plugin            print plugin.json
//   gen-manifest schema            print the schema document
//   gen-manifest write SOURCE_DIR  rewrite both files in the source tree
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "toolsets/manifest.h"

namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return bool(f);
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
  if (argc == 3 && strcmp(argv[1], "write") == 0) {
    std::string dir = argv[2];
    bool ok = write_file(dir + "/plugin.json", cu::plugin_json()) &&
              write_file(dir + "/docs/computer-use-mcp-tools-schema.md", cu::schema_doc());
    return ok ? 0 : 1;
  }
  fputs("usage: gen-manifest plugin | schema | write SOURCE_DIR\n", stderr);
  return 2;
}
