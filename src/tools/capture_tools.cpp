#include "tools/args.h"
#include "tools/handlers.h"
#include "tools/tool_call.h"

namespace cu {

void handle_screenshot(tool_call& call) {
  auto save = arg_bool(call.args, "save_to_disk", false);
  if (!save) return call.fail(save.err().message);
  capture_job job;
  job.what = capture_job::kind::screenshot;
  job.area = call.display_area();
  job.save_to_disk = *save;
  call.capture(std::move(job));
}

void handle_zoom(tool_call& call) {
  auto region = arg_region(call.args, "region");
  if (!region) return call.fail(region.err().message);
  auto save = arg_bool(call.args, "save_to_disk", false);
  if (!save) return call.fail(save.err().message);
  capture_job job;
  job.what = capture_job::kind::zoom;
  job.area = call.display_area();
  job.region = *region;
  job.save_to_disk = *save;
  // With a session, check the region now so a bad one costs no capture;
  // without one, the worker establishes the session and checks it there.
  if (auto s = call.session()) {
    auto device = region_to_device(*s, *region);
    if (!device) return call.fail("Invalid argument \"region\": " + device.err().message);
    job.session = *s;
  }
  call.capture(std::move(job));
}

}  // namespace cu
