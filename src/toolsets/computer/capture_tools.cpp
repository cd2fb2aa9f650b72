#include "toolsets/args.h"
#include "toolsets/computer/room.h"
#include "toolsets/look_hook.h"
#include "toolsets/tool_call.h"

namespace cu {

void handle_screenshot(tool_call& call) {
  auto save = arg_bool(call.args, "save_to_disk", false);
  if (!save) return call.fail(save.err().message);
  // Without the windows toolset `window` was refused before the handler
  // ran (known_args.h): nobody gets the whole screen believing it is one
  // window.
  auto window = arg_optional_window(call.args, "window");
  if (!window) return call.fail(window.err().message);
  capture_job job;
  job.what = capture_job::kind::screenshot;
  job.area = call.display_area();
  job.save_to_disk = *save;
  job.window = *window;
  // With the marks toolset on, every screenshot is a look (and may answer
  // only what changed since an earlier one).
  if (!make_look(call, job)) return;
  call.capture(std::move(job));
}

void handle_zoom(tool_call& call) {
  auto region = arg_region(call.args, "region");
  if (!region) return call.fail(region.err().message);
  auto save = arg_bool(call.args, "save_to_disk", false);
  if (!save) return call.fail(save.err().message);
  auto window = arg_optional_window(call.args, "window");
  if (!window) return call.fail(window.err().message);
  capture_job job;
  job.what = capture_job::kind::zoom;
  job.area = call.display_area();
  job.region = *region;
  job.save_to_disk = *save;
  auto s = call.session();
  // A zoom of the session's window, or with no window named, of what the
  // session shows (a window's session zooms into that window).
  job.window = *window != 0 ? *window : s ? s->window : 0;
  // With a session of what is zoomed, check the region now so a bad one
  // costs no capture; without one, the worker establishes the session and
  // checks it there.
  if (s && s->window == job.window) {
    auto device = region_to_device(*s, *region);
    if (!device) return call.fail("Invalid argument \"region\": " + device.err().message);
    job.session = *s;
  }
  call.capture(std::move(job));
}

}  // namespace cu
