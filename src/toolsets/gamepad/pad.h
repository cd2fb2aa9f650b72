// Owns: the virtual controller: its state (buttons, D-pad, triggers,
// sticks), the names the tools give them, and the uinput device that shows
// the state to the kernel. The device is made with libevdev as a wired Xbox
// 360 controller: the name, USB ids, buttons and axes of the kernel's xpad
// driver, so the kernel's and SDL's mappings take it for one.
// Thread affinity: the pad actor's thread only (names: any thread).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

struct libevdev;
struct libevdev_uinput;

namespace cu {

enum class pad_button : uint8_t { a, b, x, y, lb, rb, start, back, xbox, l3, r3 };
constexpr int kPadButtons = 11;
enum class pad_dir : uint8_t { up, down, left, right };
constexpr int kPadDirs = 4;

// The controller as the tools see it: y is up-positive, as seed 003 has it.
struct pad_state {
  uint16_t buttons = 0;  // One bit per pad_button.
  uint8_t dpad = 0;      // One bit per pad_dir.
  uint8_t trigger[2] = {0, 0};     // LT, RT.
  int16_t stick[2][2] = {{0, 0}, {0, 0}};  // [left, right][x, y].

  bool button(pad_button b) const { return (buttons >> unsigned(b)) & 1; }
  void set_button(pad_button b, bool down);
  bool dir(pad_dir d) const { return (dpad >> unsigned(d)) & 1; }
  // Pressing a direction lets go of its opposite (a D-pad rocks).
  void set_dir(pad_dir d, bool down);
  bool neutral() const;
  bool operator==(const pad_state&) const = default;
};

std::string_view button_name(pad_button b);
std::string_view dir_name(pad_dir d);
std::optional<pad_button> button_named(std::string_view name);
std::optional<pad_dir> dir_named(std::string_view name);
// LT 0, RT 1; left 0, right 1 (any case).
std::optional<int> trigger_named(std::string_view name);
std::optional<int> stick_named(std::string_view name);

// What is held, as the tools' answers give it: {"buttons": [...], "dpad":
// [...], "triggers": {...}, "sticks": {...}, "device": node}.
std::string state_json(const pad_state& s, std::string_view node);
// The same in a few words ("A, LT 128, left stick (0, 32767)", or
// "nothing").
std::string state_text(const pad_state& s);

class pad_device {
 public:
  ~pad_device();
  pad_device(const pad_device&) = delete;
  pad_device& operator=(const pad_device&) = delete;

  // Makes the controller through path (CU_UINPUT, /dev/uinput). The error
  // says which applies: no such node (the uinput module), permission
  // denied (the input group or a udev rule), or not a uinput device.
  static result<std::unique_ptr<pad_device>> create(const std::string& path);

  // Sends what differs between the device and s, then one report, in one
  // write.
  status apply(const pad_state& s);
  const pad_state& state() const { return state_; }

  // The uinput descriptor and the events that make every input neutral
  // from any state, for the input guard.
  int fd() const { return fd_; }
  std::vector<uint8_t> neutral_events() const;
  // The evdev node ("/dev/input/event3"), or "" when sysfs cannot say.
  const std::string& node() const { return node_; }

 private:
  pad_device() = default;
  int fd_ = -1;
  libevdev* dev_ = nullptr;
  libevdev_uinput* uinput_ = nullptr;
  pad_state state_;
  std::string node_;
};

}  // namespace cu
