"""The spawn section of tools/bench/bench-protocol (--spawn-only).

Spawn to initialize answer of the bare binary, tools/serve, tools/run, the
installed binary and `cat`, in turns; with the section's table and report.
"""

import json
import os
import select
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench import READ_CHUNK, BenchError, log, vm_hwm_kib, x_env
from common import (DEFAULT_BINARY, INITIALIZE_LINE, INSTALLED_BINARY, REPO, RUN, SERVE,
                    goal_lines, machine_text)


# Untimed spawns of each command before the timed ones.
SPAWN_WARMUP = 3
# The spawn section's harness floor: a process that answers with the request
# line itself, so the row is what spawning and one pipe round trip cost here.
SPAWN_ECHO_ARGV = ["cat"]
# Seconds tools/run's untimed spawns may take: the first one builds when the
# sources changed since the last build.
RUN_WARMUP_TIMEOUT = 900


def repo_relative(path):
    """path relative to the repository when it is inside it, else as given."""
    path = os.path.abspath(path)
    return os.path.relpath(path, REPO) if path.startswith(REPO + os.sep) else path


def spawn_commands(args):
    """The commands of the spawn section: dicts with method, kind, argv, env and context.

    tools/serve finds build/computer-use-mcp itself, as it does for a host;
    only when --binary is another file is CU_BINARY passed to it.  tools/run
    always runs its own build/ (it sets CU_BINARY itself).
    """
    binary = os.path.abspath(args.binary)
    default = os.path.realpath(binary) == os.path.realpath(DEFAULT_BINARY)
    serve_env = {} if default else {"CU_BINARY": binary}
    serve_note = "" if default else f", with CU_BINARY={binary}"
    run_note = "" if default else f", which runs {repo_relative(DEFAULT_BINARY)}"
    commands = [
        {"method": f"bare binary: `{repo_relative(binary)}`", "kind": "spawn-binary",
         "argv": [binary], "env": {}, "context": False},
        {"method": f"`tools/serve` (what hosts spawn){serve_note}", "kind": "spawn-serve",
         "argv": [SERVE], "env": serve_env, "context": False},
        {"method": f"`tools/run` (what hosts spawned before){run_note}", "kind": "spawn-run",
         "argv": [RUN], "env": {}, "context": True},
        {"method": f"installed: `{INSTALLED_BINARY}`", "kind": "spawn-installed",
         "argv": [INSTALLED_BINARY], "env": {}, "context": False},
        {"method": f"harness floor: `{shlex.join(SPAWN_ECHO_ARGV)}` echoing the request line",
         "kind": "spawn-echo", "argv": SPAWN_ECHO_ARGV, "env": {}, "context": False},
    ]
    by_kind = {command["kind"]: command for command in commands}
    if not os.access(INSTALLED_BINARY, os.X_OK):
        by_kind["spawn-installed"]["skipped"] = "not installed (no Debian package here)"
    if not os.access(RUN, os.X_OK):
        by_kind["spawn-run"]["skipped"] = f"{RUN} is missing"
    return commands


def spawn_to_initialize(argv, env, timeout, what, echo=False):
    """Spawn argv the way a host does, write initialize, read its answer, close stdin.

    Returns (ns from spawning to the whole answer line, VmHWM in KiB of the
    spawned pid right after the answer).  The clock starts before the spawn
    and stops when the answer line is complete; it is checked afterwards
    (with echo, it must be the request line itself).
    stderr goes to a temporary file that is quoted should anything fail.
    """
    with tempfile.TemporaryFile() as errors:

        def failure(message):
            errors.seek(0)
            text = errors.read(2000).decode(errors="replace").strip()
            tail = " / ".join(text.splitlines()[-3:])
            if len(tail) > 300:
                tail = "..." + tail[-300:]
            return BenchError(f"{what}: {message}; stderr: {tail or 'empty'}")

        start = time.perf_counter_ns()
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=errors, start_new_session=True)
        try:
            out_fd = proc.stdout.fileno()
            try:
                os.write(proc.stdin.fileno(), INITIALIZE_LINE)
            except BrokenPipeError as exc:
                raise failure("exited before the initialize request was written") from exc
            deadline = start + int(timeout * 1e9)
            buf = b""
            while True:
                end_of_line = buf.find(b"\n")
                if end_of_line >= 0:
                    end = time.perf_counter_ns()
                    line, buf = buf[:end_of_line], buf[end_of_line + 1:]
                    try:
                        reply = json.loads(line)
                    except ValueError as exc:
                        raise failure(f"wrote a line that is not JSON: {line[:200]!r}") from exc
                    if "id" in reply or echo:
                        break
                    continue  # A notification before the answer.
                remaining = (deadline - time.perf_counter_ns()) / 1e9
                if remaining <= 0 or not select.select([out_fd], [], [], remaining)[0]:
                    raise failure(f"no initialize answer within {timeout:g} s")
                chunk = os.read(out_fd, READ_CHUNK)
                if not chunk:
                    raise failure(f"closed stdout without an initialize answer "
                                  f"(exit status {proc.wait()})")
                buf += chunk
            if echo:
                if line + b"\n" != INITIALIZE_LINE:
                    raise failure(f"did not echo the request line: {line[:300]!r}")
            elif reply.get("id") != 1 or not isinstance(reply.get("result"), dict):
                raise failure(f"not an initialize result: {line[:300]!r}")
            peak = vm_hwm_kib(proc.pid)
            proc.stdin.close()
            try:
                status = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                raise failure(f"still running {timeout:g} s after stdin closed") from exc
            if status != 0:
                raise failure(f"exited with status {status} after stdin closed")
            return end - start, peak
        finally:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if not pipe.closed:
                    pipe.close()


def bench_spawn(args, display):
    """Spawn to initialize answer of each spawn_commands entry; return their records.

    After SPAWN_WARMUP untimed spawns of each command (tools/run's may take
    RUN_WARMUP_TIMEOUT: it builds when the sources changed), the timed spawns go
    round the commands in turns, one spawn at a time, so that a change in
    the machine's speed hits every row alike.  A failure of a context row
    (tools/run) drops that row with a note; any other failure is an error.
    """
    commands = spawn_commands(args)
    with tempfile.TemporaryDirectory(prefix="bench-protocol-spawn-") as tmp:
        base_env = dict(x_env(display), CU_LOCK_PATH=os.path.join(tmp, "lock"),
                        CU_SAVE_DIR=tmp)
        # A host's environment has neither; tools/serve must find build/ itself.
        for name in ("CU_BINARY", "CU_BUILD_DIR"):
            base_env.pop(name, None)
        active = [c for c in commands if "skipped" not in c]
        for command in commands:
            if "skipped" in command:
                log(f"spawn: skipping {command['method']}: {command['skipped']}")
            command["times_ns"] = []
            command["peak_rss_each_kib"] = []

        def spawn(command, timed):
            what = f"spawn of {shlex.join(command['argv'])}"
            timeout = args.timeout
            if not timed and command["kind"] == "spawn-run":
                timeout = max(timeout, RUN_WARMUP_TIMEOUT)
            try:
                elapsed, peak = spawn_to_initialize(
                    command["argv"], dict(base_env, **command["env"]), timeout, what,
                    echo=command["kind"] == "spawn-echo")
            except BenchError as exc:
                if not command["context"]:
                    raise
                log(f"warning: {exc}; leaving the {command['method']} row out")
                command["skipped"] = (f"failed after {len(command['times_ns'])} timed "
                                      f"spawns ({exc})")
                active.remove(command)
                return
            if timed:
                command["times_ns"].append(elapsed)
                command["peak_rss_each_kib"].append(peak)

        log(f"spawn to initialize: {SPAWN_WARMUP} warm-up, then {args.spawns} spawns of each "
            f"of {len(active)} commands in turns")
        for command in list(active):
            if command["kind"] == "spawn-run":
                log("  tools/run warm-up: the first spawn builds when the sources changed")
            for _ in range(SPAWN_WARMUP):
                if command in active:
                    spawn(command, timed=False)
        for _ in range(args.spawns):
            for command in list(active):
                spawn(command, timed=True)
    records = []
    for command in commands:
        record = {key: command[key] for key in ("method", "kind", "argv")}
        record["env"] = command["env"]
        if "skipped" in command:
            record["skipped"] = command["skipped"]
        else:
            record["times_ns"] = command["times_ns"]
            record["peak_rss_each_kib"] = command["peak_rss_each_kib"]
            record["peak_rss_kib"] = max(command["peak_rss_each_kib"])
            log(f"  {command['method']}: p50 "
                f"{statistics.median(command['times_ns']) / 1e6:.2f} ms")
        records.append(record)
    return records


def spawn_table(records):
    """The Markdown table of the spawn-to-initialize rows."""
    bare = next((r for r in records if r["kind"] == "spawn-binary" and "p50_ms" in r), None)
    lines = [
        "| command | p50 ms | p90 ms | max ms | peak RSS MiB | ratio vs bare binary (p50) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for record in records:
        method = record["method"].replace("|", "\\|")
        if "skipped" in record:
            lines.append(f"| {method} | skipped: {record['skipped']} | | | | |")
            continue
        ratio = f"{record['p50_ms'] / bare['p50_ms']:.2f}x" if bare else "n/a"
        lines.append(
            f"| {method} | {record['p50_ms']:.2f} | {record['p90_ms']:.2f} | "
            f"{record['max_ms']:.2f} | {record['peak_rss_mib']:.1f} | {ratio} |")
    return lines


def spawn_runs_text(args):
    """How the spawn rows were measured."""
    return (f"Spawn to initialize: {SPAWN_WARMUP} untimed spawns of each command, then "
            f"{args.spawns} timed ones of each, taken in turns; each spawns the command with "
            "stdin/stdout pipes from the repository root (as a host spawns plugin.json's "
            "`service.command`), DISPLAY set to the private Xvfb, a private CU_LOCK_PATH and "
            "CU_BINARY/CU_BUILD_DIR unset, writes the initialize request at once and stops "
            "the clock when the whole answer line (id 1, a result) has been read; then stdin "
            "is closed and exit status 0 is required. Peak RSS is the largest VmHWM of the "
            "spawned pid read right after the answer (bash's `exec` keeps the pid, so for "
            "the scripts it is the server's, not bash's). The harness floor row is the same "
            f"spawn of `{shlex.join(SPAWN_ECHO_ARGV)}`, whose answer is the request line "
            "itself: what starting a process and one pipe round trip cost from this script "
            "on this machine.")


def is_spawn(record):
    """Whether a record is a spawn-to-initialize row."""
    return record["kind"].startswith("spawn-")


def spawn_report(records, machine, args):
    """The Markdown report of a --spawn-only run."""
    lines = spawn_table(records) + [
        "",
        f"Command: `{shlex.join(sys.argv)}`",
        "",
        machine_text(machine),
        "",
        spawn_runs_text(args),
        "",
    ]
    return "\n".join(lines + goal_lines(records))
