// Owns: the table of the server's threads: the name the kernel shows for
// each (/proc/<pid>/task/*/comm, top -H, gdb's info threads), when it runs
// and what it owns; and naming a thread after its row. docs/HACKING.md's
// thread table is generated from it (gen-manifest write), and
// tests/unit/test_threads holds the code and a running server to it.
// Thread affinity: none. A thread is named by the thread that starts it,
// right after it starts and before the server answers anything.
#pragma once

#include <span>
#include <string_view>
#include <thread>

namespace cu {

struct thread_row {
  // The kernel's name, at most 15 bytes; empty for the loop thread, which
  // keeps the process's own name so ps and pkill find the server by it.
  std::string_view comm;
  std::string_view name;  // What the docs call it: "input actor".
  std::string_view runs;  // When it exists: "always", "with the a11y toolset".
  std::string_view owns;  // One line: what it owns.
  std::string_view code;  // Where it lives under src/.
  // Started with the server (given its toolsets and CU_TRACE_DIR), so a
  // running server has it before it answers initialize.
  bool at_start;
};

// Every kind of thread, the loop thread first.
std::span<const thread_row> server_threads();

// Gives t the kernel name comm, which must be a row's (a name that is none
// is a programming error, caught by test_threads). A std::thread starts
// with its creator's name, so an unnamed one would pass for the loop.
void name_thread(std::thread& t, std::string_view comm);

}  // namespace cu
