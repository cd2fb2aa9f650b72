#include <string>

#include "tools/handlers.h"
#include "tools/tool_call.h"

namespace cu {

void handle_not_available(tool_call& call) {
  std::string msg;
  msg.append("\"").append(call.tool_name());
  msg.append("\" is not available yet in this build of computer-use-mcp");
  call.fail(std::move(msg));
}

}  // namespace cu
