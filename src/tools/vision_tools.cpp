// The vision toolset's tools: arguments checked here, the search done by a
// capture worker (capture/find.cpp), which grabs the pixels it searches.
#include <vector>

#include "tools/args.h"
#include "tools/handlers.h"
#include "tools/tool_call.h"
#include "util/base64.h"
#include "util/str_cat.h"

namespace cu {
namespace {

bool present(simdjson::dom::object args, std::string_view name) {
  simdjson::dom::element e;
  return args.at_key(name).get(e) == simdjson::SUCCESS && !e.is_null();
}

// The largest template file read: a template is a small part of a screen.
constexpr size_t kMaxTemplatePathBytes = 4096;

}  // namespace

void handle_screenshot_find(tool_call& call) {
  const bool by_png = present(call.args, "template");
  const bool by_path = present(call.args, "template_path");
  const bool by_region = present(call.args, "template_region");
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
  if (present(call.args, "region")) {
    auto r = arg_region(call.args, "region");
    if (!r) return call.fail(r.err().message);
    find->region = *r;
  }
  auto window = arg_optional_window(call.args, "window");
  if (!window) return call.fail(window.err().message);
  auto threshold = present(call.args, "threshold")
                       ? arg_number(call.args, "threshold", 0, false, 1)
                       : result<double>(0.9);
  if (!threshold) return call.fail(threshold.err().message);
  find->threshold = *threshold;
  auto most = arg_integer(call.args, "max_results", 1, 100, 10);
  if (!most) return call.fail(most.err().message);
  find->max_results = int(*most);

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
  job.find = std::move(find);
  call.capture(std::move(job));
}

}  // namespace cu
