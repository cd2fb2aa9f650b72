// Owns: the input guard, a small process started before any thread that
// learns of every key and button the server presses and every keycode it
// borrows. When the server's end of its pipe closes without the server
// having released them (a crash, SIGKILL, the OOM killer), the guard
// releases what is still down and restores the borrowed keycodes through its
// own X connection, then exits. X servers keep XTest keys down after the
// client that pressed them disconnects (Xvfb resets input only when its
// last client leaves), so without it a killed server could leave a modifier
// stuck for every other client on the display.
// Devices of the server's own (the gamepad toolset's uinput controller) are
// handed to the guard too, over a second channel: a duplicate of the device's
// descriptor with the bytes to write to it if the server dies, so a killed
// server leaves no controller input held either, and the device goes away
// with the guard's copy.
// Thread affinity: start() runs on the main thread before any other thread
// exists; the notifications come from the input actor only, and a
// guard_devices channel is used by the one thread that owns it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace cu {

// The channel over which devices are handed to the guard.
class guard_devices {
 public:
  guard_devices() = default;
  explicit guard_devices(int fd) : fd_(fd) {}
  ~guard_devices();
  guard_devices(guard_devices&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  guard_devices& operator=(guard_devices&& o) noexcept;
  guard_devices(const guard_devices&) = delete;
  guard_devices& operator=(const guard_devices&) = delete;

  bool active() const { return fd_ >= 0; }

  // Hands the guard a duplicate of device_fd and on_death (at most 4096
  // bytes), which it writes to the device if the server dies before
  // forget(). Replaces a device handed over before.
  void adopt(int device_fd, std::span<const uint8_t> on_death);
  // The device was released and destroyed: the guard closes its copy.
  void forget();

 private:
  int fd_ = -1;
};

class input_guard {
 public:
  input_guard() = default;
  ~input_guard();
  input_guard(input_guard&& o) noexcept : fd_(o.fd_), devices_fd_(o.devices_fd_) {
    o.fd_ = -1;
    o.devices_fd_ = -1;
  }
  input_guard& operator=(input_guard&& o) noexcept;
  input_guard(const input_guard&) = delete;
  input_guard& operator=(const input_guard&) = delete;

  // Forks the guard (detached: it is not this process's child) for display.
  // Once it has released what the server left down (or found nothing
  // down), it removes the pressed-input marker at marker if that names this
  // process (input/marker.h; empty: none). On failure, logs why and returns
  // an inactive guard.
  static input_guard start(const std::string& display, const std::string& marker);

  bool active() const { return fd_ >= 0; }

  // The device channel, once (an inactive one after that, or without a
  // guard).
  guard_devices take_devices() {
    int fd = devices_fd_;
    devices_fd_ = -1;
    return guard_devices(fd);
  }

  // Tell the guard of a change just before it is sent to X (presses) or
  // just after (releases), so it never misses something that is down.
  void key(uint8_t keycode, bool down) { send(down ? 'K' : 'k', keycode); }
  void button(uint8_t button, bool down) { send(down ? 'B' : 'b', button); }
  void borrowed(uint8_t keycode, bool bound) { send(bound ? 'M' : 'm', keycode); }

 private:
  input_guard(int fd, int devices_fd) : fd_(fd), devices_fd_(devices_fd) {}
  void send(char op, uint8_t code);
  int fd_ = -1;
  int devices_fd_ = -1;
};

}  // namespace cu
