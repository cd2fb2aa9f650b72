"""What the sections of tools/bench/bench-protocol share.

It owns the run's settings that more than one section reads (the repository's
paths, the packages, the goals, the request lines), the helpers more than one
section calls (tool_text, tool_result, native_command, GnuTimeRunner), the
result records' figures (summarize), the machine line and the goals.  The MCP
client and the PNG codec are tools/bench/lib/bench.py's, shared with every
benchmark.  Standard library only.
"""

import json
import os
import re
import shutil
import statistics
import sys

from bench import (INITIALIZE_PARAMS, SCREEN_HEIGHT, SCREEN_WIDTH, BenchError, cpu_model,
                   percentile, spawn_pipeline, xdotool_version, xvfb_version)


REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DEFAULT_BINARY = os.path.join(REPO, "build", "computer-use-mcp")
# What MCP hosts spawn (plugin.json's service.command), what they spawned
# before, and where the Debian package installs the server.
SERVE = os.path.join(REPO, "tools", "serve")
RUN = os.path.join(REPO, "tools", "run")
INSTALLED_BINARY = "/usr/bin/computer-use-mcp"
# Command -> Debian package that provides it.  xdotool is optional: without it
# the alternative row is skipped with a note.
REQUIRED_COMMANDS = {
    "Xvfb": "xvfb",
    "xdpyinfo": "x11-utils",
    "time": "time",
    "cat": "coreutils",
    "grep": "grep",
}
OPTIONAL_COMMANDS = {"xdotool": "xdotool"}
XDOTOOL_ARGV = ["xdotool", "getmouselocation"]
XDOTOOL_CALLS_PER_RUN = 50
# Untimed runs of the xdotool alternative under GNU time, for its peak RSS.
ALT_RSS_RUNS = 3
OURS = "computer-use-mcp"
GOAL_REQ_PER_S = 20000
GOAL_HELD_IDLE_RATIO = 1.2
# Idle p50 before and after the hold further apart than this: a noisy run.
IDLE_DRIFT_LIMIT = 1.2
GOAL_SPAWN_P50_MS = 30


CURSOR_TEXT = re.compile(r"^\[-?\d+, -?\d+\]$")
# The first line a host writes to a server it has just spawned.
INITIALIZE_LINE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": INITIALIZE_PARAMS},
                             separators=(",", ":")).encode() + b"\n"
CURSOR_PARAMS = {"name": "cursor_position", "arguments": {}}
# The pipelined request lines, by kind; %d is the id.
PIPELINED_REQUESTS = {
    "ping": b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n',
    "cursor_position": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
                       b'"params":{"name":"cursor_position","arguments":{}}}\n',
}
# (label suffix, argv) of the echo processes that give the harness's own
# ceiling: cat writes back what it read in large chunks, grep one write per line.
ECHO_COMMANDS = [
    ("", ["cat"]),
    (" (one write per line)", ["grep", "--line-buffered", ""]),
]


def tool_text(reply):
    """The joined text blocks of a tool result."""
    return " ".join(item.get("text", "") for item in reply.get("result", {}).get("content", [])
                    if item.get("type") == "text")


def native_command(name):
    """The first `name` on PATH that is machine code (ELF), else whatever is first.

    A script in front of the real program (a wrapper in /usr/local/bin that
    passes every call on to ImageMagick's convert, say) would add its
    interpreter's start-up to every timed call and make the alternative look
    slower than it is; the row names the path that ran.
    """
    first = None
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(directory or ".", name)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        first = first or path
        try:
            with open(path, "rb") as program:
                if program.read(4) == b"\x7fELF":
                    return path
        except OSError:
            pass
    return first


class GnuTimeRunner:
    """Runs pipelines as spawn_pipeline does, each command under GNU time, and
    keeps the largest ru_maxrss seen (KiB): the alternatives' peak RSS."""

    def __init__(self, env, timeout, tmp):
        self.env = env
        self.timeout = timeout
        self.files = [os.path.join(tmp, f"maxrss-{i}") for i in range(4)]
        self.peak_kib = 0

    def __call__(self, argvs):
        wrapped = [[shutil.which("time"), "-f", "%M", "-o", rss_file, *argv]
                   for argv, rss_file in zip(argvs, self.files)]
        _, out = spawn_pipeline(wrapped, self.env, self.timeout)
        for rss_file in self.files[:len(argvs)]:
            with open(rss_file, encoding="ascii") as rss:
                self.peak_kib = max(self.peak_kib, int(rss.read().split()[-1]))
        return out


def tool_result(reply, what):
    """The result of a tools/call that must not be an isError."""
    result = reply.get("result", {})
    if result.get("isError"):
        raise BenchError(f"{what} answered isError: {tool_text(reply)[:300]}")
    return result


def summarize(record):
    """Add medians, percentiles and MiB to a result record."""
    if "rates" in record:
        record["median_rate"] = statistics.median(record["rates"])
        record["min_rate"] = min(record["rates"])
        record["max_rate"] = max(record["rates"])
        for label, values in record.get("cpu_ns_per_req", {}).items():
            key = "other_end" if label == record.get("other_end") else label
            record[f"{key}_cpu_us_per_req"] = statistics.median(values) / 1e3
        if "harness_cpu_ns_per_req" in record:
            record["harness_cpu_us_per_req"] = \
                statistics.median(record["harness_cpu_ns_per_req"]) / 1e3
            record["median_answers_per_read"] = statistics.median(record["answers_per_read"])
    if "times_ns" in record:
        times_ms = [t / 1e6 for t in record["times_ns"]]
        record["p50_ms"] = percentile(times_ms, 0.5)
        record["p90_ms"] = percentile(times_ms, 0.9)
        record["max_ms"] = max(times_ms)
        record["mean_ms"] = statistics.fmean(times_ms)
    if "peak_rss_kib" in record:
        record["peak_rss_mib"] = record["peak_rss_kib"] / 1024
    return record


def machine_info(display):
    """nproc, CPU model, kernel, Python, load average, X server and xdotool version of this run."""
    xvfb = xvfb_version(display)
    xdotool = xdotool_version(display)
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu_model(),
        "kernel": os.uname().release,
        "python": sys.version.split()[0],
        "loadavg": os.getloadavg(),
        "xvfb": xvfb,
        "screen": f"{SCREEN_WIDTH}x{SCREEN_HEIGHT}x24",
        "xdotool": xdotool,
    }


def cell(record, key, fmt):
    """A formatted number from a record, or an empty cell."""
    return format(record[key], fmt) if key in record else ""


def goals(records):
    """(text, passed) of each goal whose rows are among records."""
    result = []
    for kind in ("ping", "cursor_position"):
        record = next((r for r in records
                       if r["kind"] == kind and r["method"].endswith("pipelined")), None)
        if record is None:
            continue
        passed = record["median_rate"] >= GOAL_REQ_PER_S
        result.append((f"pipelined `{kind}` median at least {GOAL_REQ_PER_S:,} req/s: "
                       f"measured {record['median_rate']:,.0f} req/s", passed))
    held = next((r for r in records if r["kind"] == "screenshot-held"), None)
    if held is not None:
        idle_p50 = pooled_idle_p50_ms(records)
        ratio = held["p50_ms"] / idle_p50
        result.append((f"screenshot p50 during `hold_key` over idle p50 (before and after the "
                       f"hold, pooled) at most {GOAL_HELD_IDLE_RATIO:g}: measured "
                       f"{held['p50_ms']:.2f} / {idle_p50:.2f} ms = {ratio:.2f}",
                       ratio <= GOAL_HELD_IDLE_RATIO))
    serve = next((r for r in records if r["kind"] == "spawn-serve"), None)
    if serve is not None:
        result.append((f"spawn to initialize p50 of `tools/serve` at most {GOAL_SPAWN_P50_MS} "
                       f"ms: measured {serve['p50_ms']:.2f} ms",
                       serve["p50_ms"] <= GOAL_SPAWN_P50_MS))
    return result


def goal_lines(records):
    """The Markdown list of the goals, PASS or FAIL."""
    return ["Goals:", ""] + [f"- {'PASS' if passed else 'FAIL'}: {text}"
                             for text, passed in goals(records)]


def machine_text(machine, screen="empty screen"):
    """The line describing the machine of this run; screen says what was on it."""
    return (f"Machine: {machine['nproc']} CPUs (nproc), {machine['cpu']}, Linux "
            f"{machine['kernel']}, Python {machine['python']}, {machine['xvfb']} at "
            f"{machine['screen']} ({screen}), {machine['xdotool']}; load average "
            f"{machine['loadavg'][0]:.2f} at the end (1 min; "
            f"{machine['start_loadavg'][0]:.2f} at the start).")


def pooled_idle_p50_ms(records):
    """The p50 of the idle screenshots before and after the hold together.

    The two idle series bracket the held one, so a machine that speeds up or
    slows down during the run does not decide the ratio.
    """
    times = [t for r in records if r["kind"] in ("screenshot", "screenshot-after")
             for t in r["times_ns"]]
    return statistics.median(times) / 1e6
