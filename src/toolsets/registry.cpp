#include "toolsets/registry.h"

#include "build_config.h"

#include <array>

#include "core/json_writer.h"
#include "toolsets/handlers.h"
#include "util/str_cat.h"

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
// The same with the vision toolset on: steps skipped by their condition are
// counted, and a step's entry says what its condition found.
constexpr std::string_view kBatchOutConditions =
    R"({"type":"object","properties":{"batch":{"type":"object","properties":{"total":)" CU_INT
    R"(,"succeeded":)" CU_INT R"(,"failed":)" CU_INT R"(,"skipped":)" CU_INT
    R"(,"skipped_by_condition":{"type":"integer","description":"Steps not run because their)"
    R"( condition did not hold."},"stopped_at":{"anyOf":[{"type":"integer"},{"type":"null"}]},)"
    R"("steps":{"type":"array","items":{"type":"object","properties":{"index":)" CU_INT
    R"(,"name":)" CU_STR R"(,"ok":)" CU_BOOL R"(,"skipped":{"type":"string","enum":)"
    R"(["condition"],"description":"The step did not run: its condition did not hold."},)"
    R"("condition":{"type":"object","additionalProperties":{"type":"boolean"},"description":)"
    R"("The step's condition and what it found, e.g. {\"image_present\": true}."}},)"
    R"("required":["index","name","ok"]}}},"required":["total","succeeded","failed",)"
    R"("skipped","skipped_by_condition","stopped_at","steps"]}},"required":["batch"]})";

// The windows toolset.
#define CU_WINDOW_ID(what)                                                                  \
  R"({"type":"string","pattern":"^(0[xX][0-9a-fA-F]{1,8}|[0-9]{1,10})$","description":")" \
  what R"( (an id list_windows gives, e.g. \"0x1a00022\")."})"
#define CU_RECT                                                                       \
  R"({"type":"object","properties":{"x":)" CU_INT R"(,"y":)" CU_INT R"(,"width":)" CU_INT \
  R"(,"height":)" CU_INT R"(},"required":["x","y","width","height"]})"
#define CU_RECT_OR_NULL R"({"anyOf":[)" CU_RECT R"(,{"type":"null"}]})"
#define CU_STR_OR_NULL R"({"anyOf":[{"type":"string"},{"type":"null"}]})"
#define CU_INT_OR_NULL R"({"anyOf":[{"type":"integer"},{"type":"null"}]})"
#define CU_WINDOW_STATE_PROPS                                                              \
  R"("minimized":)" CU_BOOL R"(,"maximized":)" CU_BOOL R"(,"fullscreen":)" CU_BOOL    \
  R"(,"above":)" CU_BOOL R"(,"viewable":)" CU_BOOL
constexpr std::string_view kListWindowsIn =
    R"({"type":"object","properties":{"app":{"type":"string","description":"Only windows whose)"
    R"( WM_CLASS (instance or class) or title contains this, case-insensitively."},)"
    R"("title":{"type":"string","description":"Only windows whose title contains this,)"
    R"( case-insensitively."},"max_windows":{"type":"integer","minimum":1,"maximum":1000,)"
    R"("default":100,"description":"Windows listed at most: past it (or past 512 KiB), the)"
    R"( focused one and then the topmost are kept (an extension)."}}})";
constexpr std::string_view kListWindowsOut =
    R"({"type":"object","properties":{"windows":{"type":"array","items":{"type":"object",)"
    R"("properties":{"id":)" CU_STR R"(,"title":)" CU_STR R"(,"class":)" CU_STR
    R"(,"instance":)" CU_STR R"(,"pid":)" CU_INT_OR_NULL R"(,"device":)" CU_RECT
    R"(,"image":)" CU_RECT R"(,"frame_extents":{"type":"object","properties":{"left":)" CU_INT
    R"(,"right":)" CU_INT R"(,"top":)" CU_INT R"(,"bottom":)" CU_INT R"(},)"
    R"("required":["left","right","top","bottom"]},"focused":)" CU_BOOL R"(,)"
    CU_WINDOW_STATE_PROPS R"(,"desktop":)" CU_INT_OR_NULL R"(,"type":)" CU_STR
    R"(,"transient_for":)" CU_STR_OR_NULL R"(},"required":["id","title","class","instance",)"
    R"("pid","device","image","frame_extents","focused","minimized","maximized","fullscreen",)"
    R"("above","viewable","desktop","type","transient_for"]}},"active":)" CU_STR_OR_NULL
    R"(,"window_manager":)" CU_STR_OR_NULL R"(,"truncated":{"type":"boolean","description":)"
    R"("The bounds left matching windows out."},"omitted":{"type":"integer","description":)"
    R"("How many matching windows are not listed."},"note":)" CU_STR
    R"(},"required":["windows","active","window_manager","truncated","omitted"]})";
constexpr std::string_view kFocusWindowIn =
    R"({"type":"object","properties":{"window":)" CU_WINDOW_ID("The window to focus")
    R"(,"app":{"type":"string","description":"Or the application whose window to focus, by)"
    R"( name, window class or title, as open_application matches (it launches nothing)."}}})";
constexpr std::string_view kFocusWindowOut =
    R"({"type":"object","properties":{"window":)" CU_STR R"(,"focused":)" CU_BOOL
    R"(,"via":)" CU_STR R"(,"note":)" CU_STR R"(},"required":["window","focused"]})";
constexpr std::string_view kSetGeometryIn =
    R"({"type":"object","properties":{"window":)" CU_WINDOW_ID("The window to move or resize")
    R"(,"x":{"type":"integer","description":"New left edge of the window's content."},)"
    R"("y":{"type":"integer","description":"New top edge of the window's content."},)"
    R"("width":{"type":"integer","minimum":1,"description":"New content width."},)"
    R"("height":{"type":"integer","minimum":1,"description":"New content height."},)"
    R"("units":{"type":"string","enum":["image","device"],"default":"image","description":)"
    R"("'image': pixels of the last screenshot (of the whole screen or display); 'device':)"
    R"( root window pixels."}},"required":["window"]})";
constexpr std::string_view kSetGeometryOut =
    R"({"type":"object","properties":{"window":)" CU_STR R"(,"requested":)" CU_RECT
    R"(,"device":)" CU_RECT R"(,"image":)" CU_RECT R"(,"changed":)" CU_BOOL R"(,"note":)" CU_STR
    R"(},"required":["window","requested","device","image","changed"]})";
constexpr std::string_view kSetStateIn =
    R"({"type":"object","properties":{"window":)" CU_WINDOW_ID("The window")
    R"(,"state":{"type":"string","enum":["minimized","maximized","fullscreen","above","normal"],)"
    R"("description":"The state to set or clear; 'normal' restores a minimized, maximized or)"
    R"( fullscreen window."},"enable":{"type":"boolean","default":true,"description":"false)"
    R"( clears the state instead (not with 'normal')."}},"required":["window","state"]})";
constexpr std::string_view kSetStateOut =
    R"({"type":"object","properties":{"window":)" CU_STR R"(,)" CU_WINDOW_STATE_PROPS
    R"(,"note":)" CU_STR R"(},"required":["window","minimized","maximized","fullscreen",)"
    R"("above","viewable"]})";
constexpr std::string_view kCloseWindowIn =
    R"({"type":"object","properties":{"window":)" CU_WINDOW_ID("The window to close")
    R"(,"force":{"type":"boolean","default":false,"description":"If the window is still there)"
    R"( after the polite request, disconnect its program from the display (it may lose)"
    R"( unsaved work)."}},"required":["window"]})";
constexpr std::string_view kCloseWindowOut =
    R"({"type":"object","properties":{"window":)" CU_STR R"(,"closed":)" CU_BOOL
    R"(,"via":)" CU_STR R"(,"forced":)" CU_BOOL R"(,"note":)" CU_STR
    R"(},"required":["window","closed","via","forced"]})";
constexpr std::string_view kListDisplaysOut =
    R"({"type":"object","properties":{"displays":{"type":"array","items":{"type":"object",)"
    R"("properties":{"index":)" CU_INT R"(,"name":)" CU_STR R"(,"device":)" CU_RECT
    R"(,"primary":)" CU_BOOL R"(,"chosen":)" CU_BOOL R"(},"required":["index","name","device",)"
    R"("primary","chosen"]}},"chosen":)" CU_STR R"(,"screen":)" CU_SIZE R"(},)"
    R"("required":["displays","chosen","screen"]})";

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

const std::array<tool_def, 6> kWindowsTools = {{
    {"list_windows", "List windows",
     "List the application windows on the desktop, bottom to top: id, title, WM_CLASS, pid, "
     "geometry in device pixels and in the last screenshot's image pixels, frame extents, "
     "focus, state (minimized, maximized, fullscreen, above), desktop, type and the window it "
     "is a dialog of. Optionally only those of an app or title. At most max_windows (100) "
     "are listed, the focused one and the topmost first kept; the answer says how many "
     "were left out. Returns them as JSON.",
     kListWindowsIn, executor::desktop, kReadOnly, 0, handle_list_windows, kListWindowsOut},
    {"focus_window", "Focus a window",
     "Bring a window to the front and give it the keyboard focus, by id or by application "
     "name (never launching anything). Returns JSON saying whether it has the focus.",
     kFocusWindowIn, executor::desktop, {.idempotent = true}, 0, handle_focus_window,
     kFocusWindowOut},
    {"set_window_geometry", "Move or resize a window",
     "Move and/or resize a window's content area; the window manager may adjust the request. "
     "Returns the geometry the window has afterwards, in device and image pixels.",
     kSetGeometryIn, executor::desktop, {.idempotent = true}, 0, handle_set_window_geometry,
     kSetGeometryOut},
    {"set_window_state", "Set a window's state",
     "Minimize, maximize, make fullscreen or keep above others (or clear that), or restore "
     "a window to normal. Returns the window's state afterwards as JSON.",
     kSetStateIn, executor::desktop, {.idempotent = true}, 0, handle_set_window_state,
     kSetStateOut},
    {"close_window", "Close a window",
     "Ask a window to close, as its close button would; with force, disconnect its program "
     "if it is still there afterwards. Returns JSON saying whether the window went away.",
     kCloseWindowIn, executor::desktop, {.destructive = true}, 0, handle_close_window,
     kCloseWindowOut},
    {"list_displays", "List displays",
     "List the monitors of the screen with their geometry, and which one switch_display "
     "chose (screenshots and coordinates cover it). Returns them as JSON.",
     kNoArgs, executor::desktop, kReadOnly, 0, handle_list_displays, kListDisplaysOut},
}};

// The vision toolset.
#define CU_IMAGE_REGION(what)                                                         \
  R"({"type":"array","items":{"type":"integer"},"minItems":4,"maxItems":4,)"        \
  R"("description":")" what R"( [x0, y0, x1, y1] in the screenshot's image pixels,)" \
  R"( x1 and y1 exclusive."})"
constexpr std::string_view kScreenshotFindIn =
    R"({"type":"object","properties":{"template":{"type":"string","description":"The image)"
    R"( to find, as base64 PNG (as an image block carries it)."},"template_path":{"type":)"
    R"("string","description":"Or a PNG file to read it from (an absolute path)."},)"
    R"("template_region":)" CU_IMAGE_REGION(
        "Or the part of the last screenshot to find elsewhere (as the screen shows it now):")
    R"(,"region":)" CU_IMAGE_REGION("Where to search (default: the whole screenshot):")
    R"(,"window":)" CU_WINDOW_ID(
        "Search this window alone (its own pixels, even where covered); the coordinate "
        "session becomes the window's, as a screenshot of it makes it")
    R"(,"threshold":{"type":"number","minimum":0,"maximum":1,"default":0.9,"description":)"
    R"("The lowest score a match may have (1: the template's own pixels)."},"max_results":)"
    R"({"type":"integer","minimum":1,"maximum":100,"default":10,"description":"The most)"
    R"( matches to return, best first."},"until":{"type":"string","enum":["appear",)"
    R"("disappear"],"description":"Wait until the template is found ('appear') or is)"
    R"( found no more ('disappear'), looking again each time something is drawn where it)"
    R"( searches; an error at the timeout. Not with template_region."},"timeout":{"type":)"
    R"("number","minimum":0,"maximum":115,"default":10,"description":"Seconds 'until')"
    R"( waits at most."}}})";
constexpr std::string_view kScreenshotFindOut =
    R"({"type":"object","properties":{"matches":{"type":"array","items":{"type":"object",)"
    R"("properties":{"x":)" CU_INT R"(,"y":)" CU_INT R"(,"width":)" CU_INT R"(,"height":)" CU_INT
    R"(,"center":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,)"
    R"("description":"[x, y] for left_click."},"score":{"type":"number","description":)"
    R"("Zero-mean normalized cross-correlation, -1 to 1."},"device":)" CU_RECT
    R"(},"required":["x","y","width","height","center","score","device"]}},)"
    R"("searched":)" CU_RECT R"(,"template":)" CU_SIZE R"(,"threshold":{"type":"number"},)"
    R"("window":)" CU_STR R"(,"until":{"type":"string","enum":["appear","disappear"]},)"
    R"("after":{"type":"number","description":"With until: seconds until the condition)"
    R"( held."},"checks":{"type":"integer","description":"With until: how many times it)"
    R"( looked."}},"required":["matches","searched","template","threshold"]})";
#define CU_WATCH_PROPS(quiet_min, quiet_default, quiet_text)                                         \
  R"("region":)" CU_IMAGE_REGION("The area to watch (default: the whole screenshot):")  \
  R"(,"window":)" CU_WINDOW_ID(                                                          \
      "Watch this window's area on screen (its visible part, where it is when the wait " \
      "starts); region is then in the image of a screenshot of it")                      \
  R"(,"timeout":{"type":"number","minimum":0,"maximum":115,"default":10,)"              \
  R"("description":"Seconds to wait at most; then an error."},"quiet_ms":{"type":)"     \
  R"("integer","minimum":)" quiet_min R"(,"maximum":10000,"default":)" quiet_default \
  R"(,"description":")" quiet_text R"("})"
constexpr std::string_view kWaitForChangeIn =
    R"({"type":"object","properties":{)" CU_WATCH_PROPS(
        "0", "0", "After the first change, wait until the area has been quiet this long, so the "
             "answer covers the whole change (0: answer at the first change).") R"(}})";
constexpr std::string_view kWaitUntilStableIn =
    R"({"type":"object","properties":{)" CU_WATCH_PROPS(
        "10", "500", "How long nothing may be drawn in the area for it to count as stable.")
    R"(}})";
#define CU_WATCH_OUT_PROPS                                                                   \
  R"("after":{"type":"number","description":"Seconds from the start of the wait."},)"       \
  R"("watched":)" CU_RECT R"(,"image":)" CU_SIZE R"(,"window":)" CU_STR
constexpr std::string_view kWaitForChangeOut =
    R"({"type":"object","properties":{"changed":)" CU_BOOL R"(,"rect":)" CU_RECT
    R"(,"device":)" CU_RECT R"(,"settled":{"type":"boolean","description":"With quiet_ms:)"
    R"( false when it was not quiet that long by the timeout."},)" CU_WATCH_OUT_PROPS
    R"(},"required":["changed","rect","device","after","watched","image"]})";
constexpr std::string_view kWaitUntilStableOut =
    R"({"type":"object","properties":{"stable":)" CU_BOOL R"(,"quiet_ms":)" CU_INT
    R"(,"changed":{"type":"boolean","description":"Whether anything was drawn in the area)"
    R"( during the wait."},"rect":{"anyOf":[)" CU_RECT R"(,{"type":"null"}],"description":)"
    R"("What changed during the wait, in image pixels."},)" CU_WATCH_OUT_PROPS
    R"(},"required":["stable","after","quiet_ms","changed","rect","watched","image"]})";

constexpr std::string_view kFindTextIn =
    R"({"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":256,)"
    R"("description":"The text to find: case-insensitive, spaces normalized; a phrase may)"
    R"( span several words of one line."},"region":)" CU_IMAGE_REGION(
        "Where to look (default: the whole screenshot):")
    R"(,"window":)" CU_WINDOW_ID(
        "Look in this window alone (its own pixels, even where covered); the coordinate "
        "session becomes the window's, as a screenshot of it makes it")
    R"(,"exact":{"type":"boolean","default":false,"description":"Match whole words only.)"
    R"( Default: the text may also begin or end inside a word ('Save' finds 'Save...')."},)"
    R"("max_results":{"type":"integer","minimum":1,"maximum":100,"default":10,"description":)"
    R"("The most matches to return, whole-word matches first."}},"required":["text"]})";
constexpr std::string_view kFindTextOut =
    R"({"type":"object","properties":{"matches":{"type":"array","items":{"type":"object",)"
    R"("properties":{"text":{"type":"string","description":"The words read that hold the)"
    R"( match."},"x":)" CU_INT R"(,"y":)" CU_INT R"(,"width":)" CU_INT R"(,"height":)" CU_INT
    R"(,"center":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,)"
    R"("description":"[x, y] for left_click."},"confidence":{"type":"number","minimum":0,)"
    R"("maximum":1,"description":"The recognizer's confidence in the least sure word."},)"
    R"("device":)" CU_RECT R"(},"required":["text","x","y","width","height","center",)"
    R"("confidence","device"]}},"searched":)" CU_RECT R"(,"backend":{"type":"string","enum":)"
    R"(["ocr"],"description":"How the text was found: 'ocr', Tesseract reading the pixels."},)"
    R"("words_read":{"type":"integer","description":"How many words the OCR read there."},)"
    R"("window":)" CU_STR R"(},"required":["matches","searched","backend"]})";

const std::array<tool_def, 4> kVisionTools = {{
    {"screenshot_find", "Find on screen",
     "Find an image on the screen: a PNG template (base64 or a file) or a part of the last "
     "screenshot, in the whole screenshot or a region of it, or in one window. Answers the "
     "matches above the threshold, best first, in the screenshot's image pixels, each with "
     "its center to click. Matches at the screen's own resolution, so a template cut from a "
     "downscaled screenshot is found at its true place. A template of one flat colour is "
     "refused.",
     kScreenshotFindIn, executor::capture, kReadOnly, 120000, handle_screenshot_find,
     kScreenshotFindOut},
    {"find_text", "Find text on screen",
     "Find visible text on the screen, in the whole screenshot, a region of it, or one "
     "window: answers where it is in the screenshot's image pixels, each match with its "
     "center to click and the recognizer's confidence. Case-insensitive; a phrase may span "
     "several words of a line. Reads the pixels with OCR (Tesseract, which must be "
     "installed: apt-get install tesseract-ocr), which takes about half a second for a "
     "whole screen.",
     kFindTextIn, executor::capture, kReadOnly, 0, handle_find_text, kFindTextOut},
    {"wait_for_change", "Wait for a change",
     "Wait until something is drawn on the screen, in a region of the screenshot or in a "
     "window, instead of sleeping a fixed time: answers within milliseconds of the change "
     "(from X DAMAGE, no screenshots taken) with the changed rectangle in the screenshot's "
     "image pixels; an error when nothing changed before the timeout.",
     kWaitForChangeIn, executor::loop, kReadOnly, 120000, handle_wait_for_change,
     kWaitForChangeOut},
    {"wait_until_stable", "Wait until stable",
     "Wait until nothing has been drawn on the screen (or a region of it, or a window) for "
     "quiet_ms: a page has loaded, an animation ended. Answers when it is stable, with what "
     "changed meanwhile in image pixels; an error when it was not quiet that long by the timeout.",
     kWaitUntilStableIn, executor::loop, kReadOnly, 120000, handle_wait_until_stable,
     kWaitUntilStableOut},
}};


// The a11y toolset: seed 004's nine tools, with its names, arguments and
// descriptions, except `scroll`, which is the default toolset's: here it
// is scroll_app.
#define CU_APP_ARG(what) R"("app":{"type":"string","description":")" what R"("})"
#define CU_ELEMENT_INDEX                                                                  \
  R"("element_index":{"type":"integer","minimum":0,"description":"Index into the latest)" \
  R"( get_app_state element list."})"
#define CU_A11Y_ELEMENT_REF                                                              \
  R"({"type":"object","properties":{"index":)" CU_INT R"(,"role":)" CU_STR R"(,"name":)" \
  CU_STR R"(,"resolved":{"type":"string","enum":["same","path","role_and_name"],)"       \
  R"("description":"How the element was found again: the same object, by its place in)" \
  R"( the tree, or by its role and name."}},"required":["index","role","name"]})"
#define CU_A11Y_APP_OUT                                                                  \
  R"({"type":"object","properties":{"name":)" CU_STR R"(,"pid":)" CU_INT R"(,"bus_name":)" \
  CU_STR R"(},"required":["name","pid","bus_name"]})"

constexpr std::string_view kListAppsIn = R"({"type":"object","properties":{},)"
                                         R"("additionalProperties":false})";
constexpr std::string_view kListAppsOut =
    R"({"type":"object","properties":{"apps":{"type":"array","items":{"type":"object",)"
    R"("properties":{"name":)" CU_STR R"(,"pid":)" CU_INT R"(,"bus_name":{"type":"string",)"
    R"("description":"Its name on the accessibility bus; several applications can share)"
    R"( a pid."},"windows":)" CU_STRINGS R"(,"answering":{"type":"boolean","description":)"
    R"("false: it did not answer in time (hung or stopped); its name and windows are)"
    R"( unknown."}},"required":["name","pid","bus_name","windows","answering"]}}},)"
    R"("required":["apps"]})";
constexpr std::string_view kGetAppStateIn =
    R"({"type":"object","properties":{)" CU_APP_ARG(
        "Application name as list_apps gives it (case-insensitive; a unique part of it "
        "will do), or its pid.")
    R"(,"max_nodes":{"type":"integer","minimum":1,"maximum":5000,"default":2000,)"
    R"("description":"Elements listed at most (an extension)."},"max_depth":{"type":)"
    R"("integer","minimum":1,"maximum":64,"default":64,"description":"Depth listed at most)"
    R"( (an extension)."}},"required":["app"],"additionalProperties":false})";
constexpr std::string_view kGetAppStateOut =
    R"({"type":"object","properties":{"app":)" CU_A11Y_APP_OUT
    R"(,"snapshot":{"type":"integer","description":"This tree's id; element_index refers)"
    R"( to the app's latest."},"window":{"anyOf":[{"type":"object","properties":{"id":)"
    CU_STR R"(,"title":)" CU_STR R"(,"device":)" CU_RECT
    R"(},"required":["id","title","device"]},{"type":"null"}],"description":"The X window)"
    R"( the image shows; null: the image is the whole screen."},"image":)" CU_SIZE
    R"(,"focused":)" CU_INT_OR_NULL R"(,"selected_text":)" CU_STR_OR_NULL
    R"(,"elements":{"type":"array","items":{"type":"object","properties":{"index":)" CU_INT
    R"(,"depth":)" CU_INT R"(,"role":)" CU_STR R"(,"name":)" CU_STR R"(,"value":)" CU_STR
    R"(,"states":)" CU_STRINGS R"(,"actions":)" CU_STRINGS R"(,"frame":{"type":"object",)"
    R"("properties":{"x":)" CU_INT R"(,"y":)" CU_INT R"(,"width":)" CU_INT R"(,"height":)"
    CU_INT R"(},"required":["x","y","width","height"],"description":"In the image's)"
    R"( pixels."},"device":{"type":"object","properties":{"x":)" CU_INT R"(,"y":)" CU_INT
    R"(,"width":)" CU_INT R"(,"height":)" CU_INT R"(},"required":["x","y","width",)"
    R"("height"],"description":"In root window pixels."}},"required":["index","depth",)"
    R"("role","name","states","actions"]}},"truncated":{"type":"boolean","description":)"
    R"("The limits cut the tree short."},"skipped":{"type":"integer","description":)"
    R"("Elements that vanished while the tree was read."},"note":)" CU_STR
    R"(},"required":["app","snapshot","window","image","focused","selected_text",)"
    R"("elements","truncated"]})";
constexpr std::string_view kA11yClickIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.") R"(,)"
    CU_ELEMENT_INDEX R"(,"x":{"type":"integer","description":"X coordinate in screenshot)"
    R"( pixels."},"y":{"type":"integer","description":"Y coordinate in screenshot pixels."},)"
    R"("click_count":{"type":"integer","minimum":1,"maximum":3,"default":1,"description":)"
    R"("Number of clicks (1 = single, 2 = double)."}},"required":["app"],)"
    R"("additionalProperties":false})";
constexpr std::string_view kA11yActionOut =
    R"({"type":"object","properties":{"app":)" CU_STR R"(,"element":)" CU_A11Y_ELEMENT_REF
    R"(,"method":{"type":"string","description":"How it was done: 'action' (the element's)"
    R"( own accessible action), 'pointer' or 'keyboard' (input through XTest),)"
    R"( 'editable_text' or 'value' (the element's interfaces)."},"action":)" CU_STR
    R"(,"point":{"type":"object","properties":{"x":)" CU_INT R"(,"y":)" CU_INT
    R"(},"required":["x","y"],"description":"Where the pointer acted, in root window)"
    R"( pixels."},"value":{"type":"string","description":"set_value: the value read back)"
    R"( afterwards."},"note":)" CU_STR R"(},"required":["app","method"]})";
constexpr std::string_view kSecondaryActionIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.") R"(,)"
    CU_ELEMENT_INDEX R"(,"action":{"type":"string","description":"AX action name to)"
    R"( perform."}},"required":["app","element_index","action"],"additionalProperties":false})";
constexpr std::string_view kScrollAppIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.") R"(,)"
    CU_ELEMENT_INDEX R"(,"x":)" CU_INT R"(,"y":)" CU_INT
    R"(,"pages":{"type":"number","minimum":-100,"maximum":100,"description":"Fractional page)"
    R"( count to scroll (negative = up)."}},"required":["app","pages"],)"
    R"("additionalProperties":false})";
constexpr std::string_view kA11yDragIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.")
    R"(,"from_x":)" CU_INT R"(,"from_y":)" CU_INT R"(,"to_x":)" CU_INT R"(,"to_y":)" CU_INT
    R"(},"required":["app","from_x","from_y","to_x","to_y"],"additionalProperties":false})";
constexpr std::string_view kTypeTextIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.")
    R"(,"text":{"type":"string","description":"Text to type. Supports Unicode."}},)"
    R"("required":["app","text"],"additionalProperties":false})";
constexpr std::string_view kPressKeyIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.")
    R"(,"key":{"type":"string","description":"Key or combo, xdotool names (Return, ctrl+c,)"
    R"( Page_Up)."}},"required":["app","key"],"additionalProperties":false})";
constexpr std::string_view kSetValueIn =
    R"({"type":"object","properties":{)" CU_APP_ARG("Target application.") R"(,)"
    CU_ELEMENT_INDEX R"(,"value":{"type":"string"}},"required":["app","element_index",)"
    R"("value"],"additionalProperties":false})";

const std::array<tool_def, 9> kA11yTools = {{
    {"list_apps", "List accessible applications",
     "List running and recently-used desktop applications on the current machine. Returns "
     "each app with a bundle identifier and display name. Use this before get_app_state to "
     "discover what is available to interact with. On Linux: the applications on the "
     "AT-SPI accessibility bus, each with its pid, bus name and window titles.",
     kListAppsIn, executor::a11y, kReadOnly, 0, handle_list_apps, kListAppsOut},
    {"get_app_state", "Get an application's state",
     "Capture the current accessibility tree and a screenshot of the given application. "
     "Returns element_index values that subsequent actions (click, set_value, etc.) can "
     "target. Always call this before any element-targeted action; element_index values "
     "are valid only within the current snapshot. The tree is one line per element, "
     "indented by depth: index, role, \"name\", = \"value\", [states], {actions}, and @x,y "
     "wxh in the image's pixels; the image is the application's window and becomes the "
     "coordinate session, so x/y arguments refer to it.",
     kGetAppStateIn, executor::a11y, kReadOnly, 0, handle_get_app_state, kGetAppStateOut},
    {"click", "Click an element",
     "Left-click a target. Prefer element_index from a recent get_app_state result. Fall "
     "back to x/y screenshot pixel coordinates only when no AX element matches the target. "
     "By index, the element's own click action is used when it has one; otherwise the "
     "pointer clicks its center.",
     kA11yClickIn, executor::a11y, kInput, 0, handle_a11y_click, kA11yActionOut},
    {"perform_secondary_action", "Perform an element's action",
     "Perform a non-click semantic action exposed by the target AX element (e.g. "
     "\"Raise\", \"ShowMenu\"). Returns an error if the action is not valid for the "
     "element. On Linux the names are AT-SPI's (\"activate\", \"expand or contract\", "
     "\"press\"), as get_app_state lists them in braces.",
     kSecondaryActionIn, executor::a11y, kInput, 0, handle_perform_secondary_action,
     kA11yActionOut},
    {"scroll_app", "Scroll in an application",
     "Scroll inside the target element or at the given coordinates. `pages` is a "
     "fractional page count (positive = down, negative = up). The a11y toolset's `scroll` "
     "(renamed: `scroll` is the default toolset's tool); a page is 5 wheel clicks.",
     kScrollAppIn, executor::a11y, kInput, 0, handle_scroll_app, kA11yActionOut},
    {"drag", "Drag in an application",
     "Drag from one coordinate pair to another inside the target application window. "
     "Coordinates are in screenshot pixels.",
     kA11yDragIn, executor::input, kInput, 0, handle_a11y_drag, kA11yActionOut},
    {"type_text", "Type text into an application",
     "Type text into the currently-focused text input of the target application. Click "
     "the input area first if it is not focused. For unfocused text fields, prefer "
     "set_value instead.",
     kTypeTextIn, executor::a11y, kInput, 0, handle_type_text, kA11yActionOut},
    {"press_key", "Press a key in an application",
     "Press a keyboard key or combo against the target application. Key names follow "
     "xdotool conventions (e.g. \"Return\", \"BackSpace\", \"cmd+c\", \"Page_Up\"). The "
     "application's window is focused first.",
     kPressKeyIn, executor::a11y, kInput, 0, handle_press_key, kA11yActionOut},
    {"set_value", "Set an element's value",
     "Directly set the value of a settable AX element (text fields, sliders, etc.). "
     "Returns an error if the target is not settable.",
     kSetValueIn, executor::a11y, kInputIdempotent, 0, handle_set_value, kA11yActionOut},
}};

const std::array<toolset_def, 4> kToolsets = {{
    {toolset::computer, "computer",
     "The contract's 24 tools: screenshots, pointer, keyboard, clipboard, session, batch",
     kComputerTools},
    {toolset::windows, "windows",
     "List, focus, move, resize, minimize, maximize and close windows; list monitors",
     kWindowsTools},
    {toolset::vision, "vision",
     "Find a template image or text on the screen, in image pixels ready to click; wait "
     "for the screen to change or to settle",
     kVisionTools},
    {toolset::a11y, "a11y",
     "Drive applications through their accessibility tree (AT-SPI): list them, read an "
     "app's elements with a screenshot of its window, act on elements by index",
     kA11yTools},
}};

// The step-name enum of computer_batch's schema, as the registry writes it.
constexpr std::string_view kStepNamesText = CU_STEP_NAMES;

}  // namespace

std::span<const toolset_def> all_toolsets() { return kToolsets; }

bool toolset_built(toolset t) { return t != toolset::a11y || CU_HAVE_A11Y; }

toolset_mask every_toolset() {
  toolset_mask m = 0;
  for (const toolset_def& t : kToolsets) {
    if (toolset_built(t.id)) m |= mask_of(t.id);
  }
  return m;
}

result<toolset_mask> parse_toolsets(std::string_view text) {
  auto known = [] {
    std::string names;
    for (const toolset_def& t : kToolsets) names += str_cat(names.empty() ? "" : ", ", t.name);
    return names + ", or all";
  };
  toolset_mask m = kDefaultToolsets;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string_view name = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name == "all") {
      m |= every_toolset();
    } else {
      const toolset_def* found = nullptr;
      for (const toolset_def& t : kToolsets) {
        if (t.name == name) found = &t;
      }
      if (found == nullptr) {
        std::string shown;
        append_json_string(shown, name);
        return make_error(errc::invalid_argument,
                          str_cat(name.empty() ? std::string("an empty toolset name")
                                               : str_cat("unknown toolset ", shown),
                                  " in \"", text, "\": the toolsets are ", known()));
      }
      if (!toolset_built(found->id)) {
        return make_error(errc::invalid_argument,
                          str_cat("the toolset ", name, " is not built into this server (the a11y"
                                  " toolset needs libatspi2.0-dev at build time)"));
      }
      m |= mask_of(found->id);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return m;
}

std::string toolsets_text(toolset_mask on) {
  std::string out;
  for (const toolset_def& t : kToolsets) {
    if (has(on, t.id)) out += str_cat(out.empty() ? "" : ",", t.name);
  }
  return out;
}

namespace {

// What the windows toolset adds to screenshot's and zoom's schemas.
constexpr std::string_view kCaptureWindowIn = R"("window":)" CU_WINDOW_ID(
    "Capture this window alone: its own pixels, even where other windows cover it. The "
    "coordinate session becomes the window's: coordinates are then pixels of this image, "
    "wherever the window moves. For zoom, region is in this window's image");
constexpr std::string_view kCaptureWindowOut =
    R"("window":{"type":"string","description":"The window captured (with the window )"
    R"(argument, or in a window's session)."},"source":{"type":"string","enum":["composite",)"
    R"("screen"],"description":"Where a window's pixels came from: 'composite', its own; )"
    R"('screen', what the screen shows there (no Composite extension)."})";

bool takes_window(const tool_def& t) { return t.name == "screenshot" || t.name == "zoom"; }

// schema with props added first to its top-level "properties".
std::string with_properties(std::string_view schema, std::string_view props) {
  constexpr std::string_view kOpen = R"("properties":{)";
  std::string out(schema);
  size_t at = out.find(kOpen);
  if (at == std::string::npos) return out;
  at += kOpen.size();
  out.insert(at, std::string(props) + (out[at] == '}' ? "" : ","));
  return out;
}

// What the vision toolset adds to computer_batch's schema: the batch's
// stop_on_error, and each action's capture and if. A condition's value is
// the input schema of the tool that checks it (a condition whose tool this
// build lacks is not offered).
constexpr std::string_view kBatchStopOnError =
    R"("stop_on_error":{"type":"boolean","default":true,"description":"false: go on after a)"
    R"( step that fails; the summary counts the failures, and the result is still an error."})";
constexpr std::string_view kBatchCapture =
    R"("capture":{"type":"boolean","default":false,"description":"Append a screenshot after)"
    R"( this step, whatever 'screenshot' says."})";

std::string batch_condition_property() {
  struct condition {
    std::string_view name, tool, description;
  };
  static constexpr condition kConditions[] = {
      {"image_present", "screenshot_find", "The image is on the screen (screenshot_find's arguments)."},
      {"image_absent", "screenshot_find", "The image is not on the screen (screenshot_find's arguments)."},
      {"window_exists", "list_windows", "A window matches (list_windows' arguments)."},
      {"text_present", "find_text", "The text is on the screen (find_text's arguments)."},
  };
  std::string props;
  for (const condition& c : kConditions) {
    const tool_def* tool = find_tool(c.tool, every_toolset());
    if (tool == nullptr) continue;
    std::string schema(tool->input_schema);
    std::string described = R"({"description":)";
    append_json_string(described, c.description);
    described += ",";
    schema.replace(0, 1, described);
    if (!props.empty()) props += ",";
    append_json_string(props, c.name);
    props += ":" + schema;
  }
  return str_cat(R"("if":{"type":"object","minProperties":1,"maxProperties":1,)"
                 R"("additionalProperties":false,"description":"Run this step only when the)"
                 R"( condition holds (checked just before it, by a call of the tool named);)"
                 R"( otherwise it is skipped. Exactly one condition.","properties":{)",
                 props, "}}");
}

}  // namespace

std::string_view capture_window_input_property() { return kCaptureWindowIn; }
std::string_view capture_window_output_properties() { return kCaptureWindowOut; }

std::string output_schema_of(const tool_def& t, toolset_mask on) {
  if (takes_window(t) && has(on, toolset::windows)) {
    return with_properties(t.output_schema, kCaptureWindowOut);
  }
  if (t.name == "computer_batch" && has(on, toolset::vision)) {
    return std::string(kBatchOutConditions);
  }
  return std::string(t.output_schema);
}

std::string input_schema_of(const tool_def& t, toolset_mask on) {
  if (takes_window(t) && has(on, toolset::windows)) {
    return with_properties(t.input_schema, kCaptureWindowIn);
  }
  std::string schema(t.input_schema);
  if (t.name == "computer_batch" && on != kDefaultToolsets) {
    std::string names = "[";
    for (const toolset_def& set : kToolsets) {
      if (!has(on, set.id)) continue;
      for (const tool_def& step : set.tools) {
        if (step.name == "computer_batch") continue;
        if (names.size() > 1) names += ",";
        append_json_string(names, step.name);
      }
    }
    names += "]";
    size_t at = schema.find(kStepNamesText);
    if (at != std::string::npos) schema.replace(at, kStepNamesText.size(), names);
  }
  if (t.name == "computer_batch" && has(on, toolset::vision)) {
    // Each action's capture and if after its arguments; stop_on_error last
    // among the batch's own properties.
    constexpr std::string_view kArguments = R"("arguments":{"type":"object"})";
    size_t at = schema.find(kArguments);
    if (at != std::string::npos) {
      schema.insert(at + kArguments.size(),
                    str_cat(",", kBatchCapture, ",", batch_condition_property()));
    }
    constexpr std::string_view kEnd = R"(},"required":["actions"]})";
    if (schema.size() >= kEnd.size() && schema.ends_with(kEnd)) {
      schema.insert(schema.size() - kEnd.size(), str_cat(",", kBatchStopOnError));
    }
  }
  return schema;
}


std::span<const tool_def> computer_tools() { return kComputerTools; }

std::string unknown_tool_message(std::string_view name) {
  std::string msg = "Unknown tool: ";
  append_json_string(msg, name);
  msg += ". tools/list names the available tools.";
  return msg;
}

const tool_def* find_tool(std::string_view name, toolset_mask on) {
  for (const toolset_def& set : kToolsets) {
    if (!has(on, set.id)) continue;
    for (const tool_def& t : set.tools) {
      if (t.name == name) return &t;
    }
  }
  return nullptr;
}

const char* executor_name(executor e) {
  switch (e) {
    case executor::loop: return "loop";
    case executor::input: return "input actor";
    case executor::capture: return "capture pool";
    case executor::desktop: return "desktop thread";
    case executor::a11y: return "a11y thread";
  }
  return "?";
}

}  // namespace cu

#include "core/json_writer.h"

namespace cu {

std::string tools_list_json(toolset_mask on) {
  std::string out;
  json_writer w(out);
  w.begin_object().key("tools").begin_array();
  for (const toolset_def& set : kToolsets) {
    if (!has(on, set.id)) continue;
    for (const tool_def& t : set.tools) {
      w.begin_object();
      w.key("name").string(t.name);
      w.key("title").string(t.title);
      w.key("description").string(t.description);
      w.key("inputSchema").raw(input_schema_of(t, on));
      if (!t.output_schema.empty()) w.key("outputSchema").raw(output_schema_of(t, on));
      w.key("annotations").begin_object();
      w.key("title").string(t.title);
      w.key("readOnlyHint").boolean(t.annotations.read_only);
      w.key("destructiveHint").boolean(t.annotations.destructive);
      w.key("idempotentHint").boolean(t.annotations.idempotent);
      w.key("openWorldHint").boolean(t.annotations.open_world);
      w.end_object();
      w.end_object();
    }
  }
  w.end_array().end_object();
  return out;
}

}  // namespace cu
