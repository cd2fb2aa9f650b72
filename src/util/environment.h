// Owns: the table of every environment variable the server reads: its name,
// its default as text, what it means in one line, and the file that reads
// it. --help prints its Environment section from here; tests/unit/test_docs
// holds the source (every variable read is a row, every row is read where
// it says), the defaults config_from_env() gives, and the README's
// Configuration table to it, and tests/package/check-man the man page.
// Thread affinity: none; constant data.
#pragma once

#include <span>
#include <string_view>

namespace cu {

struct env_var {
  std::string_view name;
  // The default as text: a value (literal) the README writes as code and
  // --help after "default", or words saying what happens when it is unset.
  std::string_view default_text;
  bool literal;
  // One line: what it does (--help wraps it; the README and the man page
  // say more in their own words).
  std::string_view meaning;
  // The source file under src/ that reads it.
  std::string_view read_in;
  // true: the server's own configuration (the README's table, --help's
  // Environment rows). false: a variable of the session the server runs
  // in, read as the system defines it (named after those rows).
  bool setting;
};

// Every variable, in the README's order: DISPLAY, then the CU_ settings,
// then TESSDATA_PREFIX, then the session's variables.
std::span<const env_var> environment_variables();

// The row named name, or null.
const env_var* find_env_var(std::string_view name);

}  // namespace cu
