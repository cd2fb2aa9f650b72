#include "util/environment.h"

namespace cu {
namespace {

// One row per variable. A new variable is a row here, beside the line that
// reads it; test_docs fails until the README says it, and man-page until
// the man page does. A meaning never ends in a parenthesis: --help follows
// it with "(default ...)".
constexpr env_var kEnvironment[] = {
    {"DISPLAY", ":10", true, "the X display to drive", "util/config.cpp", true},
    {"CU_TOOLSETS", "computer", true,
     "the toolsets tools/list offers, as --toolsets takes them", "util/config.cpp",
     true},
    {"CU_LOCK_PATH", "$XDG_RUNTIME_DIR/sidebutton-computer-use-<display>.lock", true,
     "the single-owner lock, one per display; under /tmp without XDG_RUNTIME_DIR",
     "util/config.cpp", true},
    {"CU_SAVE_DIR", "/tmp/sidebutton-computer-use/", true, "where save_to_disk writes",
     "util/config.cpp", true},
    {"CU_IDLE_RELEASE_SECS", "300", true,
     "release held input after this long without a request; 0 off", "util/config.cpp", true},
    {"CU_SCREENSHOT_DELAY", "2.0", true,
     "longest settle, in seconds, before a capture that follows input; 0 off", "util/config.cpp",
     true},
    {"CU_SETTLE_QUIET_MS", "100", true, "the settle ends once the screen was quiet this long",
     "util/config.cpp", true},
    {"CU_IMAGE_FORMAT", "auto", true,
     "png, jpeg or auto: PNG while the result fits CU_MAX_RESULT_BYTES, else JPEG",
     "util/config.cpp", true},
    {"CU_MAX_RESULT_BYTES", "1000000", true, "size budget of an image result line",
     "util/config.cpp", true},
    {"CU_MAX_FRAME_BYTES", "67108864", true, "longest accepted request line", "util/config.cpp",
     true},
    {"CU_CAPTURE_WORKERS", "one per core, at least 2", false, "capture threads", "util/config.cpp",
     true},
    {"CU_PACE_QUIET_MS", "50", true,
     "input that follows input waits until the screen was quiet this long; 0 off",
     "util/config.cpp", true},
    {"CU_PACE_TEXT_MS", "200", true, "after typed text, that wait lasts at least this long",
     "util/config.cpp", true},
    {"CU_PACE_MAX_MS", "1000", true, "the longest such wait after an input", "util/config.cpp",
     true},
    {"CU_TYPE_DELAY_MS", "0", true,
     "extra pause after each typed character, each one paced by an X round trip anyway",
     "util/config.cpp", true},
    {"CU_INPUT_GUARD", "1", true,
     "0 turns off the process that releases held input if the server is killed", "util/config.cpp",
     true},
    {"CU_UINPUT", "/dev/uinput", true,
     "the uinput node the gamepad toolset's controller is made on", "util/config.cpp", true},
    {"CU_TRACE_DIR", "empty", false,
     "record a trace (the flight recorder) into this directory, as --trace; empty: off",
     "util/config.cpp", true},
    {"CU_TRACE_REDACT_TEXT", "0", true, "1: typed and clipboard text are left out of traces",
     "util/config.cpp", true},
    {"CU_TRACE_MAX_BYTES", "67108864", true,
     "a trace file's size bound before the next part starts", "util/config.cpp", true},
    {"CU_TRACE_KEEP", "8", true, "trace files kept per trace, the oldest deleted",
     "util/config.cpp", true},
    {"CU_GRANTS", "open", true,
     "open or enforce: only applications granted by request_access get input and show in "
     "captures",
     "util/config.cpp", true},
    {"CU_DENY_APPS", "empty", false,
     "comma-separated applications kept from the agent, granted or not", "util/config.cpp", true},
    {"CU_ALLOW_APPS", "empty", false,
     "comma-separated applications request_access may grant; empty: any not denied",
     "util/config.cpp", true},
    {"CU_GRANTS_FILE", "empty", false,
     "a JSON policy: allow and deny lists, and grants approved from the start",
     "util/config.cpp", true},
    {"CU_GRANTS_DESKTOP", "allow", true,
     "allow or deny: whether the desktop (the root, panels) counts as granted when enforcing",
     "util/config.cpp", true},
    {"CU_LOG_LEVEL", "info", true, "debug, info, warn or error", "util/config.cpp", true},
    {"CU_TESSERACT_LIBRARY", "libtesseract.so.5", true, "the Tesseract library find_text loads",
     "capture/find_text.cpp", true},
    {"TESSDATA_PREFIX", "/usr/share/tesseract-ocr/5/tessdata", true,
     "the directory of Tesseract's English data; unset: the usual places, Debian's first",
     "vision/ocr.cpp", true},
    {"XDG_RUNTIME_DIR", "", false,
     "where the lock file is kept; where the session bus is looked for", "util/lock.cpp", false},
    {"PATH", "/usr/local/bin:/usr/bin:/bin", true,
     "where open_application looks for a program by name", "desktop/app_lookup.cpp", false},
    {"HOME", "", false, "the user's desktop entries are under it when XDG_DATA_HOME is unset",
     "desktop/app_lookup.cpp", false},
    {"XDG_DATA_HOME", "$HOME/.local/share", true, "the user's data directory, for desktop entries",
     "desktop/app_lookup.cpp", false},
    {"XDG_DATA_DIRS", "/usr/local/share:/usr/share", true,
     "the system's data directories, for desktop entries", "desktop/app_lookup.cpp", false},
    {"DBUS_SESSION_BUS_ADDRESS", "", false,
     "the session bus, through which the a11y toolset finds "
     "the accessibility bus",
     "a11y/walk.cpp", false},
    {"AT_SPI_BUS_ADDRESS", "", false, "the accessibility bus's address, when it is fixed",
     "a11y/walk.cpp", false},
    {"OMP_THREAD_LIMIT", "", false,
     "when set, the OCR's OpenMP threads are left to it; else limited to one", "vision/ocr.cpp",
     false},
};

}  // namespace

std::span<const env_var> environment_variables() { return kEnvironment; }

const env_var* find_env_var(std::string_view name) {
  for (const env_var& v : kEnvironment) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace cu
