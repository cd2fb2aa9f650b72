#include "toolsets/gamepad/pad.h"

#include <fcntl.h>
#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <strings.h>

#include "core/json_writer.h"
#include "util/str_cat.h"

namespace cu {
namespace {

// The identity of a wired Xbox 360 controller as the kernel's xpad driver
// registers it (USB 045e:028e, bcdDevice 0x0114): SDL's controller database
// has this GUID, and games that look for an Xbox pad find one.
constexpr const char* kName = "Microsoft X-Box 360 pad";
constexpr int kVendor = 0x045e;
constexpr int kProduct = 0x028e;
constexpr int kVersion = 0x0114;

// xpad's codes, in pad_button order. X and Y are BTN_X and BTN_Y
// (BTN_NORTH and BTN_WEST by their newer names), as xpad reports them and
// SDL's mapping for this controller expects.
constexpr std::array<uint16_t, kPadButtons> kButtonCodes = {
    BTN_A, BTN_B, BTN_X, BTN_Y, BTN_TL, BTN_TR, BTN_START, BTN_SELECT, BTN_MODE, BTN_THUMBL,
    BTN_THUMBR};
constexpr std::array<std::string_view, kPadButtons> kButtonNames = {
    "A", "B", "X", "Y", "LB", "RB", "Start", "Back", "Xbox", "L3", "R3"};
constexpr std::array<std::string_view, kPadDirs> kDirNames = {"up", "down", "left", "right"};
constexpr uint16_t kTriggerCodes[2] = {ABS_Z, ABS_RZ};
constexpr uint16_t kStickCodes[2][2] = {{ABS_X, ABS_Y}, {ABS_RX, ABS_RY}};

// The kernel's Y axes grow downwards (xpad inverts the pad's own report);
// the tools' y grows upwards, as seed 003 has it.
int32_t evdev_y(int16_t y) { return y == -32768 ? 32767 : -int32_t(y); }

// The hat axes of the D-pad from its directions.
int32_t hat_x(const pad_state& s) {
  return s.dir(pad_dir::left) ? -1 : s.dir(pad_dir::right) ? 1 : 0;
}
int32_t hat_y(const pad_state& s) { return s.dir(pad_dir::up) ? -1 : s.dir(pad_dir::down) ? 1 : 0; }

void push(std::vector<input_event>& out, uint16_t type, uint16_t code, int32_t value) {
  input_event e{};
  e.type = type;
  e.code = code;
  e.value = value;
  out.push_back(e);
}

// The events that take the device from a to b (every input when a is
// null), without the report that ends them.
std::vector<input_event> diff(const pad_state* a, const pad_state& b) {
  std::vector<input_event> out;
  for (int i = 0; i < kPadButtons; ++i) {
    auto button = pad_button(i);
    if (a == nullptr || a->button(button) != b.button(button)) {
      push(out, EV_KEY, kButtonCodes[size_t(i)], b.button(button) ? 1 : 0);
    }
  }
  for (int t = 0; t < 2; ++t) {
    if (a == nullptr || a->trigger[t] != b.trigger[t]) {
      push(out, EV_ABS, kTriggerCodes[t], b.trigger[t]);
    }
  }
  for (int s = 0; s < 2; ++s) {
    if (a == nullptr || a->stick[s][0] != b.stick[s][0]) {
      push(out, EV_ABS, kStickCodes[s][0], b.stick[s][0]);
    }
    if (a == nullptr || a->stick[s][1] != b.stick[s][1]) {
      push(out, EV_ABS, kStickCodes[s][1], evdev_y(b.stick[s][1]));
    }
  }
  if (a == nullptr || hat_x(*a) != hat_x(b)) push(out, EV_ABS, ABS_HAT0X, hat_x(b));
  if (a == nullptr || hat_y(*a) != hat_y(b)) push(out, EV_ABS, ABS_HAT0Y, hat_y(b));
  return out;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

void pad_state::set_button(pad_button b, bool down) {
  auto bit = uint16_t(1u << unsigned(b));
  buttons = down ? uint16_t(buttons | bit) : uint16_t(buttons & ~bit);
}

void pad_state::set_dir(pad_dir d, bool down) {
  auto bit = uint8_t(1u << unsigned(d));
  if (down) {
    static constexpr pad_dir kOpposite[] = {pad_dir::down, pad_dir::up, pad_dir::right,
                                            pad_dir::left};
    dpad = uint8_t((dpad | bit) & ~(1u << unsigned(kOpposite[unsigned(d)])));
  } else {
    dpad = uint8_t(dpad & ~bit);
  }
}

bool pad_state::neutral() const { return *this == pad_state{}; }

std::string_view button_name(pad_button b) { return kButtonNames[size_t(b)]; }
std::string_view dir_name(pad_dir d) { return kDirNames[size_t(d)]; }

std::optional<pad_button> button_named(std::string_view name) {
  for (int i = 0; i < kPadButtons; ++i) {
    if (same_name(name, kButtonNames[size_t(i)])) return pad_button(i);
  }
  return std::nullopt;
}

std::optional<pad_dir> dir_named(std::string_view name) {
  for (int i = 0; i < kPadDirs; ++i) {
    if (same_name(name, kDirNames[size_t(i)])) return pad_dir(i);
  }
  return std::nullopt;
}

std::optional<int> trigger_named(std::string_view name) {
  if (same_name(name, "LT")) return 0;
  if (same_name(name, "RT")) return 1;
  return std::nullopt;
}

std::optional<int> stick_named(std::string_view name) {
  if (same_name(name, "left")) return 0;
  if (same_name(name, "right")) return 1;
  return std::nullopt;
}

std::string state_json(const pad_state& s, std::string_view node) {
  std::string out;
  json_writer w(out);
  w.begin_object().key("buttons").begin_array();
  for (int i = 0; i < kPadButtons; ++i) {
    if (s.button(pad_button(i))) w.string(kButtonNames[size_t(i)]);
  }
  w.end_array().key("dpad").begin_array();
  for (int i = 0; i < kPadDirs; ++i) {
    if (s.dir(pad_dir(i))) w.string(kDirNames[size_t(i)]);
  }
  w.end_array().key("triggers").begin_object();
  w.key("LT").number(int64_t(s.trigger[0])).key("RT").number(int64_t(s.trigger[1])).end_object();
  w.key("sticks").begin_object();
  for (int k = 0; k < 2; ++k) {
    w.key(k == 0 ? "left" : "right").begin_object();
    w.key("x").number(int64_t(s.stick[k][0])).key("y").number(int64_t(s.stick[k][1]));
    w.end_object();
  }
  w.end_object().key("device").string(node).end_object();
  return out;
}

std::string state_text(const pad_state& s) {
  std::string out;
  auto add = [&](std::string_view part) {
    if (!out.empty()) out += ", ";
    out += part;
  };
  for (int i = 0; i < kPadButtons; ++i) {
    if (s.button(pad_button(i))) add(kButtonNames[size_t(i)]);
  }
  for (int i = 0; i < kPadDirs; ++i) {
    if (s.dir(pad_dir(i))) add(str_cat("D-pad ", kDirNames[size_t(i)]));
  }
  for (int t = 0; t < 2; ++t) {
    if (s.trigger[t] != 0) add(str_cat(t == 0 ? "LT " : "RT ", std::to_string(s.trigger[t])));
  }
  for (int k = 0; k < 2; ++k) {
    if (s.stick[k][0] != 0 || s.stick[k][1] != 0) {
      add(str_cat(k == 0 ? "left" : "right", " stick (", std::to_string(s.stick[k][0]), ", ",
                  std::to_string(s.stick[k][1]), ")"));
    }
  }
  return out.empty() ? "nothing" : out;
}

pad_device::~pad_device() {
  if (uinput_ != nullptr) {
    // Neutral first, so readers see every input let go before the device
    // goes away.
    apply(pad_state{});
    // The device goes when the last descriptor of it closes, not by
    // UI_DEV_DESTROY, which libevdev_uinput_destroy would send: the input
    // guard holds a copy until it has heard that the device was let go,
    // and so can a test that reads the last events. Our descriptor becomes
    // /dev/null for that call (libevdev never closes one it was handed).
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, fd_);
      close(null);
    }
    libevdev_uinput_destroy(uinput_);
  }
  if (fd_ >= 0) close(fd_);
  if (dev_ != nullptr) libevdev_free(dev_);
}

result<std::unique_ptr<pad_device>> pad_device::create(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENODEV || e == ENXIO) {
      return make_error(errc::not_available,
                        str_cat("no gamepad: no ", path,
                                " (load the uinput module: modprobe uinput; in a container, "
                                "pass the device in; docs/gamepad.md)"));
    }
    if (e == EACCES || e == EPERM) {
      return make_error(errc::not_available,
                        str_cat("no gamepad: permission denied opening ", path,
                                " (add the user to the group that owns it, often input, or a "
                                "udev rule; docs/gamepad.md)"));
    }
    return make_error(errc::io, str_cat("no gamepad: opening ", path, ": ", strerror(e)));
  }
  std::unique_ptr<pad_device> pad(new pad_device());
  pad->fd_ = fd;
  pad->dev_ = libevdev_new();
  libevdev* d = pad->dev_;
  libevdev_set_name(d, kName);
  libevdev_set_id_bustype(d, BUS_USB);
  libevdev_set_id_vendor(d, kVendor);
  libevdev_set_id_product(d, kProduct);
  libevdev_set_id_version(d, kVersion);
  libevdev_enable_event_type(d, EV_KEY);
  for (uint16_t code : kButtonCodes) libevdev_enable_event_code(d, EV_KEY, code, nullptr);
  libevdev_enable_event_type(d, EV_ABS);
  // xpad's ranges: sticks with its fuzz and flat, triggers 0-255, hats.
  const input_absinfo stick{0, -32768, 32767, 16, 128, 0};
  const input_absinfo trigger{0, 0, 255, 0, 0, 0};
  const input_absinfo hat{0, -1, 1, 0, 0, 0};
  for (auto& axes : kStickCodes) {
    for (uint16_t code : axes) libevdev_enable_event_code(d, EV_ABS, code, &stick);
  }
  for (uint16_t code : kTriggerCodes) libevdev_enable_event_code(d, EV_ABS, code, &trigger);
  libevdev_enable_event_code(d, EV_ABS, ABS_HAT0X, &hat);
  libevdev_enable_event_code(d, EV_ABS, ABS_HAT0Y, &hat);
  int rc = libevdev_uinput_create_from_device(d, fd, &pad->uinput_);
  if (rc < 0) {
    pad->uinput_ = nullptr;
    if (rc == -ENOTTY || rc == -EINVAL) {
      return make_error(errc::not_available,
                        str_cat("no gamepad: ", path, " is not a uinput device (", strerror(-rc),
                                "; docs/gamepad.md)"));
    }
    return make_error(errc::io,
                      str_cat("no gamepad: creating the controller on ", path, ": ",
                              strerror(-rc)));
  }
  const char* node = libevdev_uinput_get_devnode(pad->uinput_);
  pad->node_ = node != nullptr ? node : "";
  return pad;
}

status pad_device::apply(const pad_state& s) {
  std::vector<input_event> events = diff(&state_, s);
  if (events.empty()) return {};
  push(events, EV_SYN, SYN_REPORT, 0);
  const size_t bytes = events.size() * sizeof(input_event);
  ssize_t n;
  do {
    n = write(fd(), events.data(), bytes);
  } while (n < 0 && errno == EINTR);
  if (n != ssize_t(bytes)) {
    return make_error(errc::io, str_cat("the controller refused the events: ",
                                        n < 0 ? strerror(errno) : "a short write"));
  }
  state_ = s;
  return {};
}

std::vector<uint8_t> pad_device::neutral_events() const {
  std::vector<input_event> events = diff(nullptr, pad_state{});
  push(events, EV_SYN, SYN_REPORT, 0);
  auto* p = reinterpret_cast<const uint8_t*>(events.data());
  return std::vector<uint8_t>(p, p + events.size() * sizeof(input_event));
}

}  // namespace cu
