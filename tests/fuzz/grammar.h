// What the structure-aware mutator knows about the server's input: the
// JSON-RPC envelope, every method and notification, and every tool's
// arguments, read from the registry's input schemas at start-up (so a new
// tool or argument is fuzzed without touching this file). It produces right
// and wrong values alike: wrong types, missing required fields, boundaries
// and just past them, ids and tokens of every JSON type, odd strings.
#pragma once

#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "json_tree.h"

namespace cu_fuzz {

using rng = std::minstd_rand;

// One property of a tool's input schema.
struct prop_schema {
  std::string name;
  std::string type;  // "string", "number", "integer", "boolean", "array", "object" or "".
  std::vector<std::string> choices;  // enum
  std::optional<double> minimum, maximum, exclusive_minimum;
  std::string item_type;  // For arrays.
  std::optional<size_t> min_items, max_items;
  bool required = false;
};

struct tool_schema {
  std::string name;
  std::vector<prop_schema> props;
};

class grammar {
 public:
  // Reads every tool's schema from cu::computer_tools().
  grammar();

  const std::vector<tool_schema>& tools() const { return tools_; }

  // One generated line (no line end), at most about budget bytes.
  std::string line(rng& r, size_t budget);
  // The same as a tree, when it is one (not a deep-nesting or junk line).
  jvalue message(rng& r, size_t budget);

  // The pieces, for the mutator's tree edits.
  jvalue id(rng& r);
  jvalue any_value(rng& r, size_t budget, int depth = 0);
  jvalue arguments(rng& r, const tool_schema& t, size_t budget, int depth = 0);
  jvalue prop_value(rng& r, const prop_schema& p, size_t budget, int depth = 0);
  jvalue wrong_value(rng& r, const std::string& type, size_t budget);
  const tool_schema& random_tool(rng& r) const;
  const tool_schema* find(std::string_view name) const;
  std::string method(rng& r);
  jvalue string_value(rng& r, std::string_view hint, size_t budget);

  // {"jsonrpc":"2.0","id":1,"method":"initialize","params":{...}} for version.
  static std::string initialize_line(std::string_view version, long long id);

 private:
  jvalue request(rng& r, size_t budget);
  jvalue tools_call_params(rng& r, size_t budget);
  jvalue notification(rng& r);
  jvalue actions(rng& r, size_t budget, int depth);
  // An action's `if`: mostly one condition with its probe's arguments.
  jvalue condition(rng& r, size_t budget, int depth);
  jvalue number(rng& r, const prop_schema* p);
  jvalue deep(rng& r, size_t levels);
  void perturb_envelope(rng& r, jvalue& msg, size_t budget);

  std::vector<tool_schema> tools_;
};

}  // namespace cu_fuzz
