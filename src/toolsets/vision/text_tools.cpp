// find_text (the vision toolset): arguments checked here, the pixels grabbed
// by a capture worker and read by the recognizer thread
// (capture/find_text.h). Its one backend is OCR; an accessibility backend
// (the a11y toolset, when there is one) would answer here instead, before
// any capture, with "backend":"a11y".
#include "toolsets/args.h"
#include "toolsets/vision/room.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"
#include "vision/phrase.h"

namespace cu {
namespace {

}  // namespace

void handle_find_text(tool_call& call) {
  auto text = arg_string(call.args, "text");
  if (!text) return call.fail(text.err().message);
  if (text->size() > kMaxPhraseBytes) {
    return call.fail(str_cat("Invalid argument \"text\": at most ", std::to_string(kMaxPhraseBytes),
                             " bytes, got ", std::to_string(text->size())));
  }
  if (phrase_tokens(*text).empty()) {
    return call.fail("Invalid argument \"text\": expected the text to find, got an empty or "
                     "blank string");
  }
  auto req = std::make_shared<text_request>();
  req->text = std::string(*text);
  if (arg_present(call.args, "region")) {
    auto r = arg_region(call.args, "region");
    if (!r) return call.fail(r.err().message);
    req->region = *r;
  }
  auto window = arg_optional_window(call.args, "window");
  if (!window) return call.fail(window.err().message);
  auto exact = arg_bool(call.args, "exact", false);
  if (!exact) return call.fail(exact.err().message);
  req->exact = *exact;
  auto most = arg_integer(call.args, "max_results", 1, 100, 10);
  if (!most) return call.fail(most.err().message);
  req->max_results = int(*most);

  capture_job job;
  job.what = capture_job::kind::find_text;
  job.area = call.display_area();
  auto s = call.session();
  job.window = *window != 0 ? *window : s ? s->window : 0;
  if (s && s->window == job.window) job.session = *s;
  // A region is checked against the session's image when there is one, so
  // a bad one costs no capture; without one, the worker checks it.
  if (job.session && req->region) {
    auto device = region_to_device(*job.session, *req->region);
    if (!device) return call.fail("Invalid argument \"region\": " + device.err().message);
  }
  job.text = std::move(req);
  call.capture(std::move(job));
}

}  // namespace cu
