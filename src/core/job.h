// Owns: the header every executor's job starts with (the capture pool's,
// the input actor's, the desktop thread's), and how a job's end becomes the
// one completion that goes back to the loop.
//
// The three executors are shaped alike, as libuv shapes its handles: post()
// hands a job over, cancel(seq) stops the job of request seq (a queued one
// never runs; its completion carries nothing), stop() finishes what is
// queued and joins. Each job ends in exactly one completion.
// Thread affinity: a value; made on the loop thread, ended on an executor's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/completion_queue.h"
#include "core/tool_result.h"

namespace cu {

struct job_header {
  // The request the job belongs to; for a computer_batch step, the batch's.
  uint64_t seq = 0;
  // Where its end goes: a response line to the request's id, or the
  // result itself to the loop (completion_queue.h).
  reply_to reply;
};

// The completion that ends job h: with r, or with nothing when the job was
// cancelled (the loop then sends no answer for it).
inline completion job_done(uint64_t seq, const reply_to& reply, std::optional<tool_result> r) {
  completion c;
  c.seq = seq;
  if (r) set_outcome(c, reply, std::move(*r));
  return c;
}
inline completion job_done(const job_header& h, std::optional<tool_result> r) {
  return job_done(h.seq, h.reply, std::move(r));
}

}  // namespace cu
