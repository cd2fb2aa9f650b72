#include "toolsets/vision/find_until.h"

#include <cmath>

#include "core/json_writer.h"
#include "util/log.h"
#include "util/seconds_text.h"
#include "util/str_cat.h"

namespace cu {

find_until::find_until(until_host& host, uint64_t seq, capture_job job, bool appear,
                       double timeout_secs, std::chrono::steady_clock::time_point started)
    : host_(host),
      seq_(seq),
      job_(std::move(job)),
      appear_(appear),
      timeout_secs_(timeout_secs),
      started_(started) {}

watch_spec find_until::watch() const {
  watch_spec spec;
  spec.what = watch_spec::kind::touch;
  spec.region = job_.find->region;
  spec.window = job_.window;
  spec.session = job_.session;
  spec.display_area = job_.area;
  spec.timeout_secs = timeout_secs_;
  return spec;
}

void find_until::armed() {
  host_.note(seq_, "watching");
  look();
}

void find_until::touched() {
  if (looking_) {
    dirty_ = true;
  } else {
    look();
  }
}

void find_until::timed_out() {
  end_reason_ = "timeout";
  if (!looking_) give_up();
}

void find_until::watch_ended(tool_result r) {
  // Not an error: the watch is over for another reason, which is not news.
  if (!r.is_error) return;
  // Before any look this is the answer, not a timeout.
  if (checks_ == 0 && !looking_) return host_.end(seq_, std::move(r));
  end_reason_ = r.content.empty() ? std::string("the watch ended") : r.content[0].text;
  if (!looking_) give_up();
}

void find_until::look() {
  looking_ = true;
  dirty_ = false;
  ++checks_;
  host_.look(seq_, job_);
}

void find_until::looked(std::optional<tool_result> r) {
  if (r) looking_ = false;
  if (host_.cancelled(seq_) || (!r && !end_reason_)) return host_.end(seq_, std::nullopt);
  if (!r) return give_up();
  if (r->is_error) return host_.end(seq_, std::move(*r));
  const char* what = appear_ ? "appear" : "disappear";
  // The find carries its matches as values (capture/find.cpp).
  const size_t n = r->matches ? r->matches->size() : 0;
  last_matches_ = n;
  last_first_ = n > 0 ? r->matches->front().center : point{};
  if (appear_ == (n > 0)) {
    // The find's answer, and how the wait went.
    std::string json = std::move(r->structured);
    const double after =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    json.pop_back();
    json_writer w(json);
    json += str_cat(",\"until\":\"", what, "\",\"after\":");
    w.number(std::round(after * 1000) / 1000);
    json += str_cat(",\"checks\":", std::to_string(checks_), "}");
    return host_.end(seq_, tool_result::json(std::move(json)));
  }
  if (!end_reason_) {
    log(log_level::debug, "call %llu: look %d, the template did not %s yet",
        static_cast<unsigned long long>(seq_), checks_, what);
    if (dirty_) look();
    return;  // Until the next drawing there.
  }
  give_up();
}

void find_until::give_up() {
  const char* what = appear_ ? "appear" : "disappear";
  const std::string looks = str_cat(std::to_string(checks_), checks_ == 1 ? " look" : " looks");
  if (*end_reason_ != "timeout") {
    return host_.end(seq_, tool_result::failure(str_cat("screenshot_find ended early: ",
                                                         *end_reason_, " (after ", looks, ")")));
  }
  // The timeout: the last look stands.
  std::string why = str_cat("timeout: the template did not ", what, " within ",
                            seconds_text(std::chrono::duration<double>(timeout_secs_)), "s (",
                            looks);
  if (!appear_) {
    why += str_cat("; still ", std::to_string(last_matches_), " on screen, the first at ",
                   point_text(last_first_));
  }
  why += ")";
  host_.end(seq_, tool_result::failure(std::move(why)));
}

}  // namespace cu
