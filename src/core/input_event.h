// Owns: what the flight recorder learns of each piece of input the input
// actor sends: a pointer move, a button press or release, a key going down
// or up, with the moment it was sent and the call it belongs to.
// Thread affinity: a value; made on the input actor, read on the recorder's.
#pragma once

#include <chrono>
#include <cstdint>

namespace cu {

struct input_event {
  enum class kind : uint8_t { move, press, release, key };
  kind type = kind::move;
  // The call whose job sent it (0: none, a hold's timer or a release at
  // the end).
  uint64_t seq = 0;
  std::chrono::steady_clock::time_point at;
  int x = 0, y = 0;     // move: root pixels.
  uint8_t button = 0;   // press, release.
  uint8_t keycode = 0;  // key.
  // key: the keysym the key was pressed for, or the keycode's first keysym
  // in the layout (0: unknown).
  uint32_t keysym = 0;
  bool down = false;    // key.
};

}  // namespace cu
