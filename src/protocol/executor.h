// Owns: the one shape every executor has as the call table sees it. A
// call's entry points at the executor its work is on right now (nothing:
// on the loop, between steps), and a cancellation goes to that executor;
// the table has no list of executors and no switch over them, so a new one
// (a thread, a pool, a kind of loop timer) is a class of its own here.
// Thread affinity: the loop thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace cu {

class call_executor {
 public:
  virtual ~call_executor() = default;

  // Its name, for the debug log ("the input actor").
  virtual std::string_view name() const = 0;

  // Stops call seq's work. true: the work ended here and no completion will
  // come, so the call table ends the call (unanswered) itself. false: the
  // executor stops it and sends back an empty completion, or drops its
  // result when it comes; that completion ends the call.
  virtual bool cancel(uint64_t seq) = 0;
};

// An executor that takes jobs of one type (core/job.h's job_header first).
template <class Job>
class job_executor : public call_executor {
 public:
  // Hands job over; it ends in exactly one completion.
  virtual void submit(Job job) = 0;
};

}  // namespace cu
