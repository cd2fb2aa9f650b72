// Owns: the input guard, a small process started before any thread that
// learns of every key and button the server presses and every keycode it
// borrows. When the server's end of its pipe closes without the server
// having released them (a crash, SIGKILL, the OOM killer), the guard
// releases what is still down and restores the borrowed keycodes through its
// own X connection, then exits. X servers keep XTest keys down after the
// client that pressed them disconnects (Xvfb resets input only when its
// last client leaves), so without it a killed server could leave a modifier
// stuck for every other client on the display.
// Thread affinity: start() runs on the main thread before any other thread
// exists; the notifications come from the input actor only.
#pragma once

#include <cstdint>
#include <string>

namespace cu {

class input_guard {
 public:
  input_guard() = default;
  ~input_guard();
  input_guard(input_guard&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  input_guard& operator=(input_guard&& o) noexcept;
  input_guard(const input_guard&) = delete;
  input_guard& operator=(const input_guard&) = delete;

  // Forks the guard (detached: it is not this process's child) for display.
  // On failure, logs why and returns an inactive guard.
  static input_guard start(const std::string& display);

  bool active() const { return fd_ >= 0; }

  // Tell the guard of a change just before it is sent to X (presses) or
  // just after (releases), so it never misses something that is down.
  void key(uint8_t keycode, bool down) { send(down ? 'K' : 'k', keycode); }
  void button(uint8_t button, bool down) { send(down ? 'B' : 'b', button); }
  void borrowed(uint8_t keycode, bool bound) { send(bound ? 'M' : 'm', keycode); }

 private:
  explicit input_guard(int fd) : fd_(fd) {}
  void send(char op, uint8_t code);
  int fd_ = -1;
};

}  // namespace cu
