// `since` (the marks toolset): the look it names, read from a call's
// arguments and found among the kept looks, for screenshot_marks and for
// screenshot (a look of its own with the toolset on: toolsets/look_hook.h).
// What changed is measured on the capture side (capture/since.h).
#include "toolsets/args.h"
#include "toolsets/look_hook.h"
#include "toolsets/marks/looks.h"
#include "toolsets/marks/room.h"
#include "util/str_cat.h"

namespace cu {

result<std::optional<since_look>> read_since(tool_call& call, const looks& kept) {
  if (!arg_present(call.args, "since")) return std::optional<since_look>{};
  // Ids count looks from 1; no server lives to make 2^31 of them.
  auto id = arg_integer(call.args, "since", 1, INT32_MAX);
  if (!id) return id.take_error();
  const look* l = kept.find(uint64_t(*id));
  if (l == nullptr) {
    const std::vector<uint64_t> ids = kept.kept_ids();
    std::string which = "no look is kept yet";
    if (!ids.empty()) {
      which = "the kept looks are";
      for (uint64_t i : ids) which += str_cat(" ", std::to_string(i));
    }
    return make_error(errc::invalid_argument,
                      str_cat("Invalid argument \"since\": look ", std::to_string(*id),
                              " is not kept (the last ", std::to_string(looks::kKept),
                              " looks that succeeded are; ", which, ")"));
  }
  return std::optional<since_look>{since_look{l->id, l->seen}};
}

bool make_look(tool_call& call, capture_job& job) {
  auto* kept = static_cast<looks*>(call.service(toolset::marks));
  if (kept == nullptr) return true;
  auto since = read_since(call, *kept);
  if (!since) {
    call.fail(since.err().message);
    return false;
  }
  job.since = std::move(*since);
  job.look_id = kept->reserve();
  job.record = std::make_shared<look_record>();
  call.then([id = job.look_id, record = job.record](tool_call& next, tool_result r) {
    auto* store = static_cast<looks*>(next.service(toolset::marks));
    if (!r.is_error && store != nullptr) store->keep(id, record);
    next.finish(std::move(r));
  });
  return true;
}

}  // namespace cu
