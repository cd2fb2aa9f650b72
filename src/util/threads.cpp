#include "util/threads.h"

#include <pthread.h>

#include <string>

namespace cu {
namespace {

// One row per kind of thread, in the order docs/HACKING.md tells them.
constexpr thread_row kThreads[] = {
    {"", "loop thread", "always (the main thread)",
     "every libuv handle, stdout, the call table, the coordinate session, the grants, the timers",
     "main.cpp, protocol/", true},
    {"cu-input", "input actor", "always",
     "its xcb connection, all held input and its timers (holds, the idle release)", "input/", true},
    {"cu-desktop", "desktop thread", "always",
     "its xcb connection and window: CLIPBOARD, window and monitor operations, the display's "
     "watch",
     "desktop/", true},
    {"cu-capture", "capture worker", "always, two or more (CU_CAPTURE_WORKERS)",
     "its grabber: an xcb connection and an SHM segment; a capture from grab to response line",
     "capture/pool.*", true},
    {"cu-damage", "damage monitor", "always",
     "an xcb connection and a DAMAGE object on the root: the record of what was drawn",
     "capture/damage.*", true},
    {"cu-ocr", "recognizer", "from find_text's first use",
     "the one Tesseract handle: find_text's and screenshot_marks' OCR", "capture/find_text.*",
     false},
    {"cu-a11y", "a11y thread", "with the a11y toolset",
     "the accessibility bus (libatspi) in a GLib main context of its own", "a11y/", true},
    {"cu-a11y-end", "a11y watchdog", "with the a11y toolset, once the server stops",
     "cutting a bus call that outlives the stop's grace", "a11y/a11y.*", false},
    {"cu-pad", "pad thread", "with the gamepad toolset",
     "the virtual controller (uinput): its calls in order, holds, every release",
     "toolsets/gamepad/pad_actor.*", true},
    {"cu-trace", "trace writer", "with CU_TRACE_DIR or --trace",
     "the trace files: records formatted, frames grabbed on its own connection, written",
     "trace/recorder.*", true},
};

}  // namespace

std::span<const thread_row> server_threads() { return kThreads; }

void name_thread(std::thread& t, std::string_view comm) {
  // pthread_setname_np refuses names over 15 bytes (ERANGE) and leaves the
  // old one; the rows keep to that, which test_threads checks.
  pthread_setname_np(t.native_handle(), std::string(comm).c_str());
}

}  // namespace cu
