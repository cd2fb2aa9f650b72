// find_text (the vision toolset): arguments checked here, the pixels grabbed
// by a capture worker and read by the recognizer thread
// (capture/find_text.h). With the a11y toolset on, the applications' own
// labels are searched first, on the a11y thread (a11y/text_search.h), and
// answer with "backend":"a11y" when they hold the phrase; OCR reads the
// pixels when they do not (xterm, X programs, canvas, no bus).
#include "build_config.h"
#include "core/json_writer.h"
#include "toolsets/args.h"
#include "toolsets/vision/room.h"
#include "toolsets/tool_call.h"
#include "util/str_cat.h"
#include "vision/phrase.h"

#if CU_HAVE_A11Y
#include "a11y/text_search.h"
#include "x11/windows.h"
#endif

namespace cu {
namespace {

#if CU_HAVE_A11Y
// The accessibility backend's answer, in the form OCR's has (the same
// matches, in the session's image pixels), with each element's role.
tool_result a11y_answer(const a11y_text_search& found, const coord_session& s,
                        const rect& searched, uint32_t window) {
  std::string out;
  json_writer j(out);
  std::vector<found_match> typed;
  j.begin_object().key("matches").begin_array();
  for (const a11y_text_hit& h : found.hits) {
    const rect image = device_rect_to_image(s, h.box);
    const point center = device_to_image(s, point{h.box.x + h.box.w / 2, h.box.y + h.box.h / 2});
    typed.push_back(found_match{image, center});
    j.begin_object().key("text").string(h.text).key("role").string(h.role);
    j.key("x").number(int64_t(image.x)).key("y").number(int64_t(image.y));
    j.key("width").number(int64_t(image.w)).key("height").number(int64_t(image.h));
    j.key("center").begin_array().number(int64_t(center.x)).number(int64_t(center.y)).end_array();
    j.key("confidence").number(int64_t(1)).key("device");
    write_rect(j, rect{found.origin.x + h.box.x, found.origin.y + h.box.y, h.box.w, h.box.h});
    j.end_object();
  }
  j.end_array().key("searched");
  write_rect(j, searched);
  j.key("backend").string("a11y").key("elements_read").number(int64_t(found.elements_read));
  if (window != 0) j.key("window").string(window_id_text(window));
  j.end_object();
  tool_result r = tool_result::json(std::move(out));
  r.matches = std::move(typed);
  return r;
}
#endif

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
#if CU_HAVE_A11Y
  // The accessibility trees first, when the toolset is on and there is a
  // session to answer in (without one, OCR's capture makes it).
  if (has(call.toolsets(), toolset::a11y) && job.session) {
    const coord_session s = *job.session;
    auto io = std::make_shared<a11y_text_search>();
    io->phrase = req->text;
    io->exact = req->exact;
    io->max_results = size_t(req->max_results);
    io->window = s.window;
    io->area = s.device;
    io->view = call.policy().view();
    rect searched{0, 0, s.image.w, s.image.h};
    if (req->region) {
      io->area = *region_to_device(s, *req->region);
      searched = rect{(*req->region)[0], (*req->region)[1], (*req->region)[2] - (*req->region)[0],
                      (*req->region)[3] - (*req->region)[1]};
    }
    job.text = std::move(req);
    call.then([io, s, searched, job = std::move(job)](tool_call& next, tool_result r) mutable {
      if (!r.is_error && !io->hits.empty()) {
        return next.finish(a11y_answer(*io, s, searched, s.window));
      }
      next.capture(std::move(job));
    });
    return call.a11y(make_text_search(io));
  }
#endif
  job.text = std::move(req);
  call.capture(std::move(job));
}

}  // namespace cu
