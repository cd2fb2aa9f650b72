// The vision toolset's tools: arguments checked here; the search done by a
// capture worker (capture/find.cpp), which grabs the pixels it searches;
// the waits carried out on the loop from X DAMAGE's record of drawing
// (protocol/screen_watch.h).
#include <vector>

#include "capture/png.h"
#include "toolsets/args.h"
#include "toolsets/vision/room.h"
#include "toolsets/tool_call.h"
#include "util/base64.h"
#include "util/str_cat.h"
#include "vision/match.h"

namespace cu {
namespace {

// The longest template_path taken.
constexpr size_t kMaxTemplatePathBytes = 4096;

// The longest any wait on the screen may last, as for wait: under the
// two-minute request timeout hosts commonly allow.
constexpr double kMaxWaitSecs = 115;

// An optional timeout in seconds, 10 when absent.
result<double> arg_timeout(simdjson::dom::object args) {
  if (!arg_present(args, "timeout")) return 10.0;
  return arg_number(args, "timeout", 0, false, kMaxWaitSecs);
}

// The region and window a wait watches, and the session the region refers
// to when the last screenshot was of that target.
std::optional<std::string> read_watch_target(tool_call& call, watch_spec& spec) {
  auto window = arg_optional_window(call.args, "window");
  if (!window) return window.err().message;
  auto s = call.session();
  spec.window = *window != 0 ? *window : s ? s->window : 0;
  if (s && s->window == spec.window) spec.session = *s;
  spec.display_area = call.display_area();
  if (arg_present(call.args, "region")) {
    auto r = arg_region(call.args, "region");
    if (!r) return r.err().message;
    spec.region = *r;
    if (spec.session) {
      auto device = region_to_device(*spec.session, *r);
      if (!device) return str_cat("Invalid argument \"region\": ", device.err().message);
    }
  }
  auto timeout = arg_timeout(call.args);
  if (!timeout) return timeout.err().message;
  spec.timeout_secs = *timeout;
  return std::nullopt;
}

void start_watch(tool_call& call, watch_spec::kind what, int64_t quiet_min,
                 int64_t quiet_default) {
  watch_spec spec;
  spec.what = what;
  if (auto why = read_watch_target(call, spec)) return call.fail(*why);
  auto quiet = arg_integer(call.args, "quiet_ms", quiet_min, 10000, quiet_default);
  if (!quiet) return call.fail(quiet.err().message);
  spec.quiet_ms = double(*quiet);
  if (auto view = call.policy().view(); view->filtering()) spec.view = std::move(view);
  call.watch(std::move(spec));
}

}  // namespace

void handle_screenshot_find(tool_call& call) {
  const bool by_png = arg_present(call.args, "template");
  const bool by_path = arg_present(call.args, "template_path");
  const bool by_region = arg_present(call.args, "template_region");
  if (int(by_png) + int(by_path) + int(by_region) != 1) {
    return call.fail(
        "screenshot_find needs exactly one of \"template\" (a base64 PNG), \"template_path\" "
        "(a PNG file) or \"template_region\" (a part of the last screenshot)");
  }
  auto find = std::make_shared<find_request>();
  if (by_png) {
    auto text = arg_string(call.args, "template");
    if (!text) return call.fail(text.err().message);
    if (text->empty() || !base64_decode(*text, find->template_png)) {
      return call.fail(
          "Invalid argument \"template\": expected a base64 PNG (as an image block carries "
          "it), got text that is not base64");
    }
  } else if (by_path) {
    auto path = arg_string(call.args, "template_path");
    if (!path) return call.fail(path.err().message);
    if (path->empty() || path->front() != '/' || path->size() > kMaxTemplatePathBytes ||
        path->find('\0') != std::string_view::npos) {
      return call.fail("Invalid argument \"template_path\": expected an absolute path to a PNG "
                       "file");
    }
    find->template_path = std::string(*path);
  } else {
    auto r = arg_region(call.args, "template_region");
    if (!r) return call.fail(r.err().message);
    find->template_region = *r;
  }
  if (arg_present(call.args, "region")) {
    auto r = arg_region(call.args, "region");
    if (!r) return call.fail(r.err().message);
    find->region = *r;
  }
  auto window = arg_optional_window(call.args, "window");
  if (!window) return call.fail(window.err().message);
  auto threshold = arg_present(call.args, "threshold")
                       ? arg_number(call.args, "threshold", 0, false, 1)
                       : result<double>(0.9);
  if (!threshold) return call.fail(threshold.err().message);
  find->threshold = *threshold;
  auto most = arg_integer(call.args, "max_results", 1, 100, 10);
  if (!most) return call.fail(most.err().message);
  find->max_results = int(*most);
  std::optional<bool> appear;
  if (arg_present(call.args, "until")) {
    auto until = arg_choice(call.args, "until", {"appear", "disappear"});
    if (!until) return call.fail(until.err().message);
    appear = *until == "appear";
    if (by_region) {
      return call.fail(
          "Invalid argument \"until\": not with \"template_region\", which is cut from the "
          "screen as it is at each look; give the template as \"template\" or "
          "\"template_path\"");
    }
  }
  auto timeout = arg_timeout(call.args);
  if (!timeout) return call.fail(timeout.err().message);
  if (!appear && arg_present(call.args, "timeout")) {
    return call.fail("Invalid argument \"timeout\": only with \"until\"");
  }

  capture_job job;
  job.what = capture_job::kind::find;
  job.area = call.display_area();
  auto s = call.session();
  job.window = *window != 0 ? *window : s ? s->window : 0;
  if (s && s->window == job.window) job.session = *s;
  if (find->template_region && !job.session) {
    return call.fail(
        "no screenshot session yet: \"template_region\" is a part of the last screenshot "
        "(of this window); take one first");
  }
  // Regions are checked against the session's image when there is one, so
  // a bad one costs no capture; without one, the worker checks them.
  if (job.session) {
    for (const auto* r : {&find->region, &find->template_region}) {
      if (!*r) continue;
      auto device = region_to_device(*job.session, **r);
      if (!device) {
        return call.fail(str_cat("Invalid argument \"",
                                 r == &find->region ? "region" : "template_region", "\": ",
                                 device.err().message));
      }
    }
  }
  // The PNG's header, last of the arguments and before any capture: a
  // small file can declare an image of gigabytes, which must be refused
  // before a worker grabs or decodes anything.
  if (by_png) {
    auto size = png_header_size(find->template_png);
    if (!size) return call.fail(str_cat("Invalid argument \"template\": ", size.err().message));
    if (auto e = check_template_size(size->w, size->h); !e) {
      return call.fail(str_cat("Invalid argument \"template\": ", e.err().message));
    }
  }
  job.find = std::move(find);
  if (appear) return call.find_until(std::move(job), *appear, *timeout);
  call.capture(std::move(job));
}

void handle_wait_for_change(tool_call& call) {
  start_watch(call, watch_spec::kind::change, 0, 0);
}

void handle_wait_until_stable(tool_call& call) {
  start_watch(call, watch_spec::kind::stable, 10, 500);
}

}  // namespace cu
