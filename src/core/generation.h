// Owns: the generation of the X server at the other end of the display.
// When the X server goes away (killed, crashed, restarted), every
// coordinate the model holds refers to a screen that no longer exists, and
// every connection to it is dead. Each thread notices on its own
// connection; the first to report the loss starts a new generation, the
// others find it already started. Coordinate sessions carry the generation
// they were captured in, and input refuses coordinates from an older one.
// Thread affinity: any thread; one instance, shared by reference.
#pragma once

#include <atomic>
#include <cstdint>

namespace cu {

class server_generation {
 public:
  // The generation now. A connection that has just checked it is alive
  // talks to the server of this generation (there is one server per
  // display at a time).
  uint64_t current() const { return gen_.load(std::memory_order_acquire); }

  // A connection made in generation seen found its server gone: a new
  // generation begins, unless another connection reported that loss first.
  // Returns the generation now current.
  uint64_t lost(uint64_t seen) {
    uint64_t expected = seen;
    gen_.compare_exchange_strong(expected, seen + 1, std::memory_order_acq_rel);
    return current();
  }

 private:
  std::atomic<uint64_t> gen_{1};
};

}  // namespace cu
