// Owns: reading a screenshot_marks answer in the X11 tests: its marks
// (number, role, name, source, box) from structuredContent, a mark found by
// role and name, and the environment that turns the marks toolset on.
// Thread affinity: the test thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/jsonrpc.h"

namespace cu::test {

// A server environment with the marks toolset on.
extern const std::map<std::string, std::string> kMarksOn;

struct map_mark {
  int64_t n = 0;
  std::string role, name, source;
  int64_t x = 0, y = 0, w = 0, h = 0;  // The box, in image pixels.
};

// The marks of a screenshot_marks answer (the test fails without them).
std::vector<map_mark> marks_of(const json_line& r);

// Whether image pixel (x, y) lies in the mark's box.
bool holds(const map_mark& m, int64_t x, int64_t y);

// The number of the mark of this role and name (the test fails without).
int64_t mark_of(const std::vector<map_mark>& marks, std::string_view role, std::string_view name);

// Whether libtesseract is installed, so maps can read text.
bool tesseract_installed();

}  // namespace cu::test
