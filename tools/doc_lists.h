// Owns: the lists gen-manifest writes into hand-written documents between
// markers ("<!-- name -->" and "<!-- /name -->" on lines of their own):
// README.md's Debian packages, from tools/lib/deps.sh, and
// docs/HACKING.md's thread table, from util/threads.h. tests/unit/test_docs
// compares the committed blocks with what these functions make.
// Thread affinity: none; pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cu::docs {

// The words of the shell assignment NAME="..." in script (deps.sh's
// package lists: one double-quoted string, possibly over several lines).
result<std::vector<std::string>> shell_words(std::string_view script, std::string_view name);

// README.md's "packages" block: the build's packages, the a11y toolset's
// (optional), the tests' and the fuzzer's, read from deps.sh's text.
result<std::string> packages_block(std::string_view deps_sh);

// docs/HACKING.md's "threads" block: how many kinds of thread run, and a
// row each.
std::string threads_block();

// What lies between the markers of block name in text (the lines after
// "<!-- name -->" up to "<!-- /name -->"), or an error naming what is
// missing.
result<std::string> block_of(std::string_view text, std::string_view name);

// text with block name's contents replaced by contents.
result<std::string> with_block(std::string_view text, std::string_view name,
                               std::string_view contents);

// "ten" for 10 (up to twenty; the number itself above).
std::string number_word(size_t n);

}  // namespace cu::docs
