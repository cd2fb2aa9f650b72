#include "tools/registry.h"

#include <array>

#include "core/json_writer.h"
#include "tools/handlers.h"

namespace cu {
namespace {

// Schema fragments shared by several tools, so the same argument reads the
// same everywhere.
#define CU_COORDINATE(what)                                                              \
  R"({"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2,"description":")" \
  what R"( as [x, y] in screenshot image pixels (relative to the last screenshot)."})"
#define CU_MODIFIERS                                                                   \
  R"({"type":"string","description":"Modifier keys to hold during the action, joined)" \
  R"( by '+', e.g. 'ctrl' or 'shift+alt'."})"
#define CU_SAVE_TO_DISK                                                                \
  R"({"type":"boolean","description":"Also write the image to CU_SAVE_DIR and return)" \
  R"( its path in a text block.","default":false})"

// What a computer_batch step may name: every tool but computer_batch itself,
// in tools/list order (a unit test compares it with the registry).
#define CU_STEP_NAMES                                                                      \
  R"(["screenshot","zoom","left_click","right_click","middle_click","double_click",)"     \
  R"("triple_click","mouse_move","left_click_drag","scroll","left_mouse_down",)"          \
  R"("left_mouse_up","type","key","hold_key","read_clipboard","write_clipboard",)"        \
  R"("request_access","list_granted_applications","open_application","switch_display",)" \
  R"("wait","cursor_position"])"

constexpr std::string_view kNoArgs = R"({"type":"object","properties":{}})";

constexpr std::string_view kClickSchema =
    R"({"type":"object","properties":{"coordinate":)" CU_COORDINATE(
        "Where to click") R"(,"text":)" CU_MODIFIERS R"(},"required":["coordinate"]})";

// Output schemas (structuredContent).
#define CU_INT R"({"type":"integer"})"
#define CU_BOOL R"({"type":"boolean"})"
#define CU_STR R"({"type":"string"})"
#define CU_STRINGS R"({"type":"array","items":{"type":"string"}})"
#define CU_SIZE                                                                          \
  R"({"type":"object","properties":{"width":)" CU_INT R"(,"height":)" CU_INT R"(},)" \
  R"("required":["width","height"]})"
#define CU_CAPTURE_PROPS                                                                 \
  R"("image":)" CU_SIZE R"(,"device":{"type":"object","properties":{"x":)" CU_INT       \
  R"(,"y":)" CU_INT R"(,"width":)" CU_INT R"(,"height":)" CU_INT R"(},)"                 \
  R"("required":["x","y","width","height"],"description":"The captured area in root)"   \
  R"( window pixels."},"scale":{"type":"number","description":"Device pixels per image)" \
  R"( pixel."},"format":{"type":"string","enum":["png","jpeg"],"description":"What)"    \
  R"( the image block holds (CU_IMAGE_FORMAT; auto sends JPEG when the PNG would not)"  \
  R"( fit CU_MAX_RESULT_BYTES)."},"bytes":{"type":"integer","description":"The)"         \
  R"( image file's size."},"unchanged":{"type":"boolean","description":"Nothing was)"    \
  R"( drawn in the area since its last capture: the same image again."},)"              \
  R"("saved_to":{"type":"string","description":"The image file's path, with)"           \
  R"( save_to_disk."})"

constexpr std::string_view kScreenshotOut =
    R"({"type":"object","properties":{)" CU_CAPTURE_PROPS R"(},)"
    R"("required":["image","device","scale","format","bytes","unchanged"]})";
constexpr std::string_view kZoomOut =
    R"({"type":"object","properties":{)" CU_CAPTURE_PROPS R"(,"region":{"type":"array",)"
    R"("items":{"type":"integer"},"minItems":4,"maxItems":4}},)"
    R"("required":["image","device","scale","format","bytes","unchanged","region"]})";
constexpr std::string_view kCursorOut =
    R"({"type":"object","properties":{"x":)" CU_INT R"(,"y":)" CU_INT R"(},)"
    R"("required":["x","y"]})";
constexpr std::string_view kRequestAccessOut =
    R"({"type":"object","properties":{"grantedApplications":)" CU_STRINGS
    R"(,"deniedApplications":)" CU_STRINGS R"(,"screenshotFiltering":)" CU_BOOL
    R"(,"clipboardRead":)" CU_BOOL R"(,"clipboardWrite":)" CU_BOOL R"(,"systemKeyCombos":)" CU_BOOL
    R"(},"required":["grantedApplications","deniedApplications","clipboardRead",)"
    R"("clipboardWrite","systemKeyCombos"]})";
constexpr std::string_view kGrantedOut =
    R"({"type":"object","properties":{"applications":)" CU_STRINGS R"(,"clipboardRead":)" CU_BOOL
    R"(,"clipboardWrite":)" CU_BOOL R"(,"systemKeyCombos":)" CU_BOOL R"(,"coordinateMode":)" CU_STR
    R"(},"required":["applications","clipboardRead","clipboardWrite","systemKeyCombos"]})";
constexpr std::string_view kOpenApplicationOut =
    R"({"type":"object","properties":{"app":)" CU_STR R"(,"focused":)" CU_BOOL R"(,"via":)" CU_STR
    R"(,"note":)" CU_STR R"(,"launched":)" CU_BOOL R"(,"window":)" CU_STR R"(,"pid":)" CU_INT
    R"(},"required":["app","focused","launched"]})";
constexpr std::string_view kSwitchDisplayOut =
    R"({"type":"object","properties":{"display":)" CU_STR R"(,"switched":)" CU_BOOL
    R"(,"requested":)" CU_STR R"(,"monitor":)" CU_STR R"(,"geometry":)" CU_STR R"(,"note":)" CU_STR
    R"(},"required":["display","switched","requested"]})";
constexpr std::string_view kBatchOut =
    R"({"type":"object","properties":{"batch":{"type":"object","properties":{"total":)" CU_INT
    R"(,"succeeded":)" CU_INT R"(,"failed":)" CU_INT R"(,"skipped":)" CU_INT
    R"(,"stopped_at":{"anyOf":[{"type":"integer"},{"type":"null"}]},"steps":{"type":"array","items":)"
    R"({"type":"object","properties":{"index":)" CU_INT R"(,"name":)" CU_STR R"(,"ok":)" CU_BOOL
    R"(},"required":["index","name","ok"]}}},)"
    R"("required":["total","succeeded","failed","skipped","stopped_at","steps"]}},)"
    R"("required":["batch"]})";

constexpr tool_annotations kReadOnly{.read_only = true, .idempotent = true};
constexpr tool_annotations kInput{.destructive = true, .open_world = true};
constexpr tool_annotations kInputIdempotent{.idempotent = true, .open_world = true};
constexpr tool_annotations kSession{.idempotent = true};

const std::array<tool_def, 24> kComputerTools = {{
    {"screenshot", "Screenshot",
     "Capture the whole screen. Returns a PNG image (a JPEG when the PNG would be too "
     "large for the client); a screen larger than a model resolution of the same aspect "
     "ratio comes back downscaled to it (1920x1080 as 1366x768), any other large screen "
     "scaled to about that many pixels. Every coordinate-taking tool then uses this "
     "image's pixels. With save_to_disk, also returns the saved file's path.",
     R"({"type":"object","properties":{"save_to_disk":)" CU_SAVE_TO_DISK R"(}})",
     executor::capture, kReadOnly, 0, handle_screenshot, kScreenshotOut},
    {"zoom", "Zoom",
     "Capture a region of the screen at full device resolution, to read small detail. "
     "region is [x0, y0, x1, y1] in the last screenshot's image pixels. Returns an image of "
     "that region (downscaled only beyond about 1366x768's pixels); coordinates keep "
     "referring to the last screenshot.",
     R"({"type":"object","properties":{"region":{"type":"array","items":{"type":"integer"},)"
     R"("minItems":4,"maxItems":4,"description":"[x0, y0, x1, y1] in screenshot image pixels,)"
     R"( x1 and y1 exclusive."},"save_to_disk":)" CU_SAVE_TO_DISK R"(},"required":["region"]})",
     executor::capture, kReadOnly, 0, handle_zoom, kZoomOut},
    {"left_click", "Left click",
     "Click the left mouse button at a coordinate, optionally holding modifier keys. Returns the "
     "screen pixel clicked.",
     kClickSchema, executor::input, kInput, 0, handle_left_click},
    {"right_click", "Right click",
     "Click the right mouse button at a coordinate, optionally holding modifier keys. Returns the "
     "screen pixel clicked.",
     kClickSchema, executor::input, kInput, 0, handle_right_click},
    {"middle_click", "Middle click",
     "Click the middle mouse button at a coordinate, optionally holding modifier keys. Returns the "
     "screen pixel clicked.",
     kClickSchema, executor::input, kInput, 0, handle_middle_click},
    {"double_click", "Double click",
     "Double-click the left mouse button at a coordinate, optionally holding modifier keys. Returns the "
     "screen pixel clicked.",
     kClickSchema, executor::input, kInput, 0, handle_double_click},
    {"triple_click", "Triple click",
     "Triple-click the left mouse button at a coordinate (selects a line or paragraph), "
     "optionally holding modifier keys. Returns the screen pixel clicked.",
     kClickSchema, executor::input, kInput, 0, handle_triple_click},
    {"mouse_move", "Move the pointer", "Move the mouse pointer to a coordinate. Returns the screen pixel it moved to.",
     R"({"type":"object","properties":{"coordinate":)" CU_COORDINATE(
         "Where to move") R"(},"required":["coordinate"]})",
     executor::input, kInputIdempotent, 0, handle_mouse_move},
    {"left_click_drag", "Drag",
     "Press the left button at start_coordinate (default: the current pointer position), "
     "move to coordinate and release there. Returns the screen pixels it dragged from "
     "and to.",
     R"({"type":"object","properties":{"coordinate":)" CU_COORDINATE(
         "Where to release") R"(,"start_coordinate":)" CU_COORDINATE(
             "Where to press (default: the current pointer position)") R"(},)"
     R"("required":["coordinate"]})",
     executor::input, kInput, 0, handle_left_click_drag},
    {"scroll", "Scroll",
     "Scroll at a coordinate: scroll_amount wheel clicks in scroll_direction, optionally "
     "holding modifier keys. Returns where and how far it scrolled.",
     R"({"type":"object","properties":{"coordinate":)" CU_COORDINATE(
         "Where to scroll") R"(,"scroll_direction":{"type":"string","enum":["up","down",)"
     R"("left","right"]},"scroll_amount":{"type":"integer","minimum":1,"maximum":1000,)"
     R"("description":"Number of wheel clicks."},"text":)" CU_MODIFIERS R"(},)"
     R"("required":["coordinate","scroll_direction","scroll_amount"]})",
     executor::input, kInput, 0, handle_scroll},
    {"left_mouse_down", "Press the left button",
     "Press and hold the left mouse button, at a coordinate or where the pointer is. It "
     "stays down across calls until left_mouse_up (or five idle minutes). Returns the "
     "screen pixel; an error when the button is already held.",
     R"({"type":"object","properties":{"coordinate":)" CU_COORDINATE(
         "Where to press (default: the current pointer position)") R"(}})",
     executor::input, kInput, 0, handle_left_mouse_down},
    {"left_mouse_up", "Release the left button",
     "Release the left mouse button held by left_mouse_down, at a coordinate or where the "
     "pointer is. Returns the screen pixel, or says the button was not held.",
     R"({"type":"object","properties":{"coordinate":)" CU_COORDINATE(
         "Where to release (default: the current pointer position)") R"(}})",
     executor::input, kInput, 0, handle_left_mouse_up},
    {"type", "Type text", "Type text at the keyboard focus, any Unicode text on any keyboard layout. Returns "
     "the number of characters typed.",
     R"({"type":"object","properties":{"text":{"type":"string","description":"The text to type."}},)"
     R"("required":["text"]})",
     executor::input, kInput, 0, handle_type},
    {"key", "Press keys",
     "Press and release a key or chord in xdotool syntax, e.g. 'Return', 'ctrl+s', "
     "'alt+Tab', optionally repeated. Returns what was pressed.",
     R"({"type":"object","properties":{"text":{"type":"string","description":"Key or chord,)"
     R"( keysym names joined by '+'."},"repeat":{"type":"integer","minimum":1,"maximum":1000,"default":1,)"
     R"("description":"How many times to press it."}},"required":["text"]})",
     executor::input, kInput, 0, handle_key},
    {"hold_key", "Hold keys",
     "Hold a key or chord down for duration seconds, then release it; answers when it is "
     "released, saying what was held for how long. A hold longer than the client's own "
     "request timeout (60 s by default in the MCP TypeScript SDK) is cut off by the client "
     "unless it resets that timeout on progress notifications.",
     R"({"type":"object","properties":{"text":{"type":"string","description":"Key or chord,)"
     R"( keysym names joined by '+'."},"duration":{"type":"number","exclusiveMinimum":0,)"
     R"("maximum":100,"description":"Seconds to hold (0 < duration <= 100)."}},)"
     R"("required":["text","duration"]})",
     executor::input, kInput, 120000, handle_hold_key},
    {"read_clipboard", "Read the clipboard",
     "Return the text on the clipboard (empty when there is none). Needs a clipboardRead "
     "grant from request_access.",
     kNoArgs, executor::desktop, kReadOnly, 0, handle_read_clipboard},
    {"write_clipboard", "Write the clipboard",
     "Put text on the clipboard. Returns how many characters it wrote. Needs a "
     "clipboardWrite grant from request_access.",
     R"({"type":"object","properties":{"text":{"type":"string","description":"The text to put)"
     R"( on the clipboard."}},"required":["text"]})",
     executor::desktop, {.idempotent = true}, 0, handle_write_clipboard},
    {"request_access", "Request access",
     "Grant this session access to applications and, optionally, the clipboard and system "
     "key combinations. Grants add up across calls. Returns all grants so far as JSON.",
     R"({"type":"object","properties":{"apps":{"type":"array","items":{"type":"string"},)"
     R"("description":"Applications to grant."},"reason":{"type":"string","description":)"
     R"("Why access is needed."},"clipboardRead":{"type":"boolean"},"clipboardWrite":)"
     R"({"type":"boolean"},"systemKeyCombos":{"type":"boolean"}},"required":["apps","reason"]})",
     executor::loop, kSession, 0, handle_request_access, kRequestAccessOut},
    {"list_granted_applications", "List grants",
     "Return the applications and permissions granted to this session, as JSON.", kNoArgs,
     executor::loop, kReadOnly, 0, handle_list_granted_applications, kGrantedOut},
    {"open_application", "Open an application",
     "Bring an application's window to the front by name or window class, launching the "
     "application when it has no window. Returns JSON saying whether it is focused and how.",
     R"({"type":"object","properties":{"app":{"type":"string","description":"Application name,)"
     R"( window class or executable."}},"required":["app"]})",
     executor::desktop, {.open_world = true}, 0, handle_open_application, kOpenApplicationOut},
    {"switch_display", "Switch display",
     "Choose which monitor later screenshots and coordinates refer to, by name or index, "
     "or 'auto' for the whole screen. Returns JSON saying whether it switched.",
     R"({"type":"object","properties":{"display":{"type":"string","description":"Display or)"
     R"( monitor name, index, or 'auto' for the whole screen."}},"required":["display"]})",
     executor::desktop, kSession, 0, handle_switch_display, kSwitchDisplayOut},
    {"computer_batch", "Batch",
     "Run up to 100 actions in order, each a tool name with its arguments, with no other "
     "caller's input between them; stops at the first step that fails. Returns a JSON "
     "summary of the steps first, then each step's own result prefixed [step i \u00b7 name], "
     "and optionally a screenshot after the last step or after every step.",
     R"({"type":"object","properties":{"actions":{"type":"array","minItems":1,"maxItems":100,)"
     R"("items":{"type":"object","properties":{"name":{"type":"string","enum":)" CU_STEP_NAMES R"(},"arguments":)"
     R"({"type":"object"}},"required":["name"]},"description":"The steps, each a tool name)"
     R"( and its arguments."},"delay_ms":{"type":"integer","minimum":0,"maximum":10000,)"
     R"("default":0,"description":"Pause between steps, in milliseconds."},"screenshot":)"
     R"({"type":"string","enum":["none","final","each"],"default":"none","description":)"
     R"("Append a screenshot after the last step ('final') or after every step ('each')."}},)"
     R"("required":["actions"]})",
     executor::loop, kInput, 0, handle_computer_batch, kBatchOut},
    {"wait", "Wait",
     "Wait for a number of seconds (0 to 115), then answer. A wait longer than the client's "
     "own request timeout (60 s by default in the MCP TypeScript SDK) is cut off by the "
     "client unless it resets that timeout on progress notifications.",
     R"({"type":"object","properties":{"duration":{"type":"number","minimum":0,"maximum":115,)"
     R"("description":"Seconds to wait (0 to 115)."}},"required":["duration"]})",
     executor::loop, kReadOnly, 120000, handle_wait},
    {"cursor_position", "Cursor position",
     "Return the mouse pointer position as [x, y] in screenshot image pixels (before any "
     "screenshot, in the pixels a screenshot would have).", kNoArgs,
     executor::input, kReadOnly, 0, handle_cursor_position, kCursorOut},
}};

}  // namespace

std::span<const tool_def> computer_tools() { return kComputerTools; }

std::string unknown_tool_message(std::string_view name) {
  std::string msg = "Unknown tool: ";
  append_json_string(msg, name);
  msg += ". tools/list names the available tools.";
  return msg;
}

const tool_def* find_tool(std::string_view name) {
  for (const tool_def& t : kComputerTools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const char* executor_name(executor e) {
  switch (e) {
    case executor::loop: return "loop";
    case executor::input: return "input actor";
    case executor::capture: return "capture pool";
    case executor::desktop: return "desktop thread";
  }
  return "?";
}

}  // namespace cu

#include "core/json_writer.h"

namespace cu {

std::string tools_list_json(std::span<const tool_def> tools) {
  std::string out;
  json_writer w(out);
  w.begin_object().key("tools").begin_array();
  for (const tool_def& t : tools) {
    w.begin_object();
    w.key("name").string(t.name);
    w.key("title").string(t.title);
    w.key("description").string(t.description);
    w.key("inputSchema").raw(t.input_schema);
    if (!t.output_schema.empty()) w.key("outputSchema").raw(t.output_schema);
    w.key("annotations").begin_object();
    w.key("title").string(t.title);
    w.key("readOnlyHint").boolean(t.annotations.read_only);
    w.key("destructiveHint").boolean(t.annotations.destructive);
    w.key("idempotentHint").boolean(t.annotations.idempotent);
    w.key("openWorldHint").boolean(t.annotations.open_world);
    w.end_object();
    w.end_object();
  }
  w.end_array().end_object();
  return out;
}

}  // namespace cu
