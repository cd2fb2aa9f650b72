// bench_a11y APP [ROUNDS] [--print]: walks APP's accessibility tree ROUNDS
// times (default 20) through the a11y thread, as a tool call will: a job
// posted, libatspi on the thread's own GLib context, the completion back
// through a completion_queue on a libuv loop. Prints one line of JSON: the
// elements read, the D-Bus calls of the last walk, the first round (which connects to the bus), the later
// rounds' p50, min and max, and the process's peak RSS. --print also
// writes the last tree as get_app_state's text to stderr.
// Run it on an accessible desktop: tools/bench/bench-a11y does, beside
// tools/bench/lib/a11y_walk.py walking the same tree with python3-pyatspi.
#include <sys/resource.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "a11y/a11y.h"
#include "a11y/walk.h"

using namespace cu;

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_a11y APP [ROUNDS] [--print]\n");
    return 2;
  }
  std::string app = argv[1];
  int rounds = 20;
  bool print = false;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--print") == 0) {
      print = true;
    } else {
      rounds = std::max(1, atoi(argv[i]));
    }
  }

  uv_loop_t loop;
  uv_loop_init(&loop);
  bool got = false;
  completion last;
  completion_queue done(&loop, [&](std::vector<completion>& cs) {
    for (completion& c : cs) {
      if (c.seq == 0) continue;
      last = std::move(c);
      got = true;
    }
  });
  a11y thread(getenv("DISPLAY") != nullptr ? getenv("DISPLAY") : ":0", done);

  size_t elements = 0;
  int calls = 0;
  std::string text;
  std::string failure;
  std::vector<double> ms;
  for (int r = 0; r < rounds && failure.empty(); ++r) {
    a11y_job job;
    job.seq = uint64_t(r + 1);  // No id: the completion carries the result.
    job.op = make_a11y_function([&](const a11y_control& c) -> std::optional<tool_result> {
      auto w = walk_app(app, walk_limits{}, c);
      if (!w) return tool_result::failure(w.err().message);
      elements = w->elements.size();
      calls = w->bus_calls;
      if (print) text = render_tree(w->elements);
      return tool_result::text("ok");
    });
    auto t0 = std::chrono::steady_clock::now();
    got = false;
    thread.post(std::move(job));
    while (!got) uv_run(&loop, UV_RUN_ONCE);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count());
    if (!last.result || last.result->is_error) {
      failure = last.result && !last.result->content.empty() ? last.result->content[0].text
                                                             : "cancelled";
    }
  }
  thread.stop();
  done.close();
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  if (!failure.empty()) {
    fprintf(stderr, "bench_a11y: %s\n", failure.c_str());
    return 1;
  }
  if (print) fputs(text.c_str(), stderr);
  double first = ms.front();
  std::vector<double> rest(ms.begin() + (ms.size() > 1 ? 1 : 0), ms.end());
  std::sort(rest.begin(), rest.end());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  printf("{\"walker\":\"libatspi (a11y thread)\",\"elements\":%zu,\"bus_calls\":%d,\"rounds\":%d,"
         "\"first_ms\":%.2f,\"p50_ms\":%.2f,\"min_ms\":%.2f,\"max_ms\":%.2f,"
         "\"peak_rss_kib\":%ld}\n",
         elements, calls, rounds, first, rest[rest.size() / 2], rest.front(), rest.back(), ru.ru_maxrss);
  return 0;
}
