// Owns: how a length of time is written in a message, so that every quote
// of a deadline reads the same as the deadline and every measured time has
// the same precision.
// Thread affinity: pure functions.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace cu {

// A configured length, exactly: "3" for three seconds, "0.5" for half of
// one. For messages that quote a deadline, so they never drift from it.
template <class Rep, class Period>
std::string seconds_text(std::chrono::duration<Rep, Period> d) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", std::chrono::duration<double>(d).count());
  return buf;
}

// A measured length, to a tenth of a second: "2.0", "0.3".
template <class Rep, class Period>
std::string elapsed_text(std::chrono::duration<Rep, Period> d) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace cu
