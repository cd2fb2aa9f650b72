#include "protocol/replies.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace cu {
namespace {

// Hands freed heap pages back to the system. glibc keeps what threads
// freed in their arenas, so after a burst of large answers the process
// would otherwise keep its peak size.
void give_back_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace

replies::replies(uv_loop_t* loop, std::function<void(int status)> on_broken,
                 std::function<void()> on_drained)
    : out_(loop, std::move(on_broken), std::move(on_drained)) {}

int replies::start(int fd) { return out_.start(fd); }

void replies::send(std::string line, std::function<void()> written) {
  out_.write(std::move(line), std::move(written));
  if (waiting_bytes() > kStdoutHighBytes) trim_after_drain_ = true;
}

void replies::open_group() { current_ = std::make_shared<rpc_group>(); }

void replies::close_group() {
  std::shared_ptr<rpc_group> g = std::move(current_);
  current_.reset();
  g->open = false;
  if (g->pending == 0) flush(*g);
}

void replies::respond(std::string line) {
  if (current_) {
    add(*current_, std::move(line));
  } else {
    send(std::move(line));
  }
}

std::shared_ptr<rpc_group> replies::join() {
  if (current_) ++current_->pending;
  return current_;
}

void replies::answer(std::shared_ptr<rpc_group> group, std::string line,
                     std::function<void()> written) {
  if (!group) {
    if (!line.empty()) send(std::move(line), std::move(written));
    return;
  }
  if (!line.empty()) add(*group, std::move(line));
  if (--group->pending == 0 && !group->open) flush(*group);
}

void replies::after_drain() {
  if (trim_after_drain_ && out_.queued_bytes() == 0) {
    // The answers that piled up were freed, but into the heaps of the
    // threads that made them: hand those pages back to the system.
    trim_after_drain_ = false;
    give_back_memory();
  }
}

void replies::add(rpc_group& g, std::string line) {
  g.bytes += line.size();
  group_bytes_ += line.size();
  g.lines.push_back(std::move(line));
}

void replies::flush(rpc_group& g) {
  if (g.lines.empty()) return;  // Only notifications (or cancelled requests).
  std::string out = "[";
  for (std::string& l : g.lines) {
    if (out.size() > 1) out += ',';
    l.pop_back();  // The newline.
    out += l;
  }
  out += "]\n";
  g.lines.clear();
  group_bytes_ -= g.bytes;
  g.bytes = 0;
  send(std::move(out));
}

}  // namespace cu
