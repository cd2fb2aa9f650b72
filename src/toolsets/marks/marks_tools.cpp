// screenshot_marks (the marks toolset): arguments checked here, then up to
// three steps chained: the accessibility trees' actionable elements on the
// a11y thread (a11y/text_search.h's actionable mode: one Collection call
// per window, occlusion checked), the title bars and X programs' control
// windows on the desktop thread, and the capture, OCR and drawing on a
// capture worker and the recognizer (capture/marks_capture.h). Each step's findings are kept in root pixels
// until the capture makes the session they are drawn in.
#include "build_config.h"
#include "toolsets/args.h"
#include "toolsets/marks/looks.h"
#include "toolsets/marks/room.h"
#include "toolsets/tool_call.h"
#include "util/ascii.h"
#include "util/str_cat.h"

#if CU_HAVE_A11Y
#include "a11y/text_search.h"
#endif

namespace cu {
namespace {

// Past the bound a model reads no list well, and a screen rarely has more.
constexpr size_t kMostElements = 500;

struct sources {
  bool a11y = true, ocr = true, windows = true;
};

result<sources> read_sources(simdjson::dom::object args) {
  sources s;
  if (!arg_present(args, "sources")) return s;
  auto list = arg_string_list(args, "sources");
  if (!list) return list.take_error();
  if (list->empty()) {
    return make_error(errc::invalid_argument,
                      "Invalid argument \"sources\": expected at least one of \"a11y\", \"ocr\", "
                      "\"windows\", got []");
  }
  s = sources{false, false, false};
  for (const std::string& n : *list) {
    bool* on = n == "a11y" ? &s.a11y : n == "ocr" ? &s.ocr : n == "windows" ? &s.windows : nullptr;
    if (on == nullptr) {
      return make_error(errc::invalid_argument,
                        str_cat("Invalid argument \"sources\": expected \"a11y\", \"ocr\" or "
                                "\"windows\", got \"", n, "\""));
    }
    *on = true;
  }
  return s;
}

// The last step: the capture, with what the earlier steps found; a map
// made is kept as a look (acting by mark, `since`).
void capture_step(tool_call& call, std::shared_ptr<marks_request> req, uint32_t window,
                  std::optional<rect> area) {
  if (auto* kept = static_cast<looks*>(call.service(toolset::marks))) {
    req->look_id = kept->reserve();
    req->record = std::make_shared<look_record>();
    call.then([req](tool_call& next, tool_result r) {
      // The service outlives every call; looked up again in case.
      auto* store = static_cast<looks*>(next.service(toolset::marks));
      if (!r.is_error && store != nullptr) store->keep(req->look_id, req->record);
      next.finish(std::move(r));
    });
  }
  capture_job job;
  job.what = capture_job::kind::marks;
  job.area = area;
  job.window = window;
  job.marks = std::move(req);
  call.capture(std::move(job));
}

// An X program's control window's role: a button when its WM_CLASS says
// so; Xt widgets set no properties, so most are just controls.
std::string control_role(const control_window& w) {
  for (const std::string* s : {&w.instance, &w.cls}) {
    if (ascii_lower(*s).find("button") != std::string::npos) return "button";
  }
  return "control";
}

// The windows source's step (title bars, and the control windows of X
// programs whose buttons are windows of their own), then the capture.
void title_bar_step(tool_call& call, std::shared_ptr<marks_request> req, uint32_t window,
                    std::optional<rect> area) {
  auto bars = std::make_shared<std::vector<title_bar>>();
  auto controls = std::make_shared<std::vector<control_window>>();
  call.then([req, window, area, bars, controls](tool_call& next, tool_result r) {
    if (r.is_error) {
      req->unavailable.push_back("windows: " + (r.content.empty() ? std::string("failed") : r.content[0].text));
    }
    for (const title_bar& b : *bars) {
      mark_candidate c{"title bar", b.title, b.box, mark_source::windows};
      c.window = b.window;
      req->on_root.push_back(std::move(c));
    }
    for (const control_window& w : *controls) {
      mark_candidate c{control_role(w), w.name, w.box, mark_source::windows};
      c.named_by_text = true;
      c.window = w.id;
      req->on_root.push_back(std::move(c));
    }
    capture_step(next, req, window, area);
  });
  call.desktop(make_title_bars(bars, controls, call.policy().view()));
}

}  // namespace

void handle_screenshot_marks(tool_call& call) {
  auto req = std::make_shared<marks_request>();
  if (arg_present(call.args, "region")) {
    auto r = arg_region(call.args, "region");
    if (!r) return call.fail(r.err().message);
    req->region = *r;
  }
  auto window = arg_optional_window(call.args, "window");
  if (!window) return call.fail(window.err().message);
  auto from = read_sources(call.args);
  if (!from) return call.fail(from.err().message);
  auto most = arg_integer(call.args, "max_marks", 1, 500, 150);
  if (!most) return call.fail(most.err().message);
  req->max_marks = size_t(*most);
  if (auto* kept = static_cast<looks*>(call.service(toolset::marks))) {
    auto since = read_since(call, *kept);
    if (!since) return call.fail(since.err().message);
    req->since = std::move(*since);
  }
  req->ocr = from->ocr;
  const uint32_t win = *window;
  const std::optional<rect> area = call.display_area();
  // A window's own map: its title bar is outside its pixels.
  const bool bars = from->windows && win == 0;
  auto after_a11y = [req, win, area, bars](tool_call& next) {
    if (bars) return title_bar_step(next, req, win, area);
    capture_step(next, req, win, area);
  };
  if (from->a11y) {
#if CU_HAVE_A11Y
    auto io = std::make_shared<a11y_text_search>();
    io->actionable = true;
    io->max_results = kMostElements;
    io->window = win;
    io->view = call.policy().view();
    // The whole root: what the session shows is cut by the map's region
    // once the capture has made it.
    io->area = rect{0, 0, 1 << 15, 1 << 15};
    call.then([io, req, after_a11y](tool_call& next, tool_result r) {
      if (r.is_error) {
        req->unavailable.push_back("a11y: " + (r.content.empty() ? std::string("failed") : r.content[0].text));
      } else if (!io->unavailable.empty()) {
        req->unavailable.push_back("a11y: " + io->unavailable);
      }
      for (const a11y_text_hit& h : io->hits) {
        const rect on_root{h.box.x + io->origin.x, h.box.y + io->origin.y, h.box.w, h.box.h};
        mark_candidate c{h.role, h.text, on_root, mark_source::a11y};
        c.window = h.window;
        c.pid = h.pid;
        req->on_root.push_back(std::move(c));
      }
      after_a11y(next);
    });
    return call.a11y(make_text_search(io));
#else
    req->unavailable.push_back("a11y: this server was built without libatspi");
#endif
  }
  after_a11y(call);
}

}  // namespace cu
