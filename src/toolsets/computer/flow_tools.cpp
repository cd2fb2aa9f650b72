#include <charconv>
#include <cmath>
#include <string>

#include "toolsets/args.h"
#include "toolsets/computer/batch.h"
#include "toolsets/computer/room.h"
#include "toolsets/tool_call.h"

namespace cu {

void handle_wait(tool_call& call) {
  auto d = arg_number(call.args, "duration", 0, false, 115);
  if (!d) return call.fail(d.err().message);
  // The number as given: 2 gives "waited 2s", 0.25 "waited 0.25s".
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
  std::string text = "waited ";
  text.append(buf, ec == std::errc() ? end : buf);
  text += 's';
  call.finish_after(*d, tool_result::text(std::move(text)));
}

void handle_computer_batch(tool_call& call) {
  auto plan = parse_batch(call.args, call.toolsets());
  if (!plan) return call.fail(plan.err().message);
  call.run_batch(std::move(*plan));
}

}  // namespace cu
