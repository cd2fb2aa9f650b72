// Owns: reading the toolset rooms' JSON tables (tools.json, defs.json) into
// tool definitions, and writing each tool's schemas from them through
// json_writer: fragments ({"$def": ...}), computed values (the batch step
// names) and what a toolset that is on adds to another's tools (extends).
// Thread affinity: built once (the registry's first use); const after, and
// its const functions may be called from any thread.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "toolsets/registry.h"

namespace cu {

class toolset_tables {
 public:
  // Reads each room's table and binds its tools to the room's handlers; a
  // table that does not fit its room (a tool without a binding, a fragment
  // that is not there) is a defect of this source tree: it aborts, saying
  // what (the unit tests build every table).
  explicit toolset_tables(std::span<const toolset_room* const> rooms);
  ~toolset_tables();
  toolset_tables(const toolset_tables&) = delete;
  toolset_tables& operator=(const toolset_tables&) = delete;

  // The toolsets in the rooms' order, each with its tools.
  std::span<const toolset_def> sets() const;

  // t's schemas with these toolsets on (see registry.h input_schema_of).
  std::string input_schema(const tool_def& t, toolset_mask on) const;
  std::string output_schema(const tool_def& t, toolset_mask on) const;

  // What toolset `by` adds to other toolsets' tools.
  std::vector<toolset_extension> extensions_of(toolset by) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cu
