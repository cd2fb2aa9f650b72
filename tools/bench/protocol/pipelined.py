"""The pipelined section of tools/bench/bench-protocol: one server, timed.

Pipelined and one-at-a-time throughput of ping and cursor_position (with the
`cat`/`grep` echoes as the harness's ceiling and per-call xdotool beside it),
the CPU each process spends per request, and screenshot latency idle, during a
hold_key and idle again; with the tables of those rows.
"""

import json
import os
import resource
import shlex
import shutil
import subprocess
import tempfile
import time

from bench import (SCREENSHOT_PARAMS, BenchError, StdioClient, close_server, image_size,
                   initialize, log, peak_rss_kib, screenshot_image, server_env, spawn_and_wait,
                   vm_hwm_kib, x_env)
from common import (ALT_RSS_RUNS, CURSOR_PARAMS, CURSOR_TEXT, ECHO_COMMANDS, OURS,
                    PIPELINED_REQUESTS, XDOTOOL_ARGV, XDOTOOL_CALLS_PER_RUN, cell, tool_text)


HOLD_KEY = "shift"


def task_cpu_ns(pid):
    """CPU time each live thread of a process has run, in ns (schedstat), by thread id."""
    times = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return times
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as stat:
                times[int(tid)] = int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # A thread that ended between listdir and open.
    return times


def cpu_delta(before, after):
    """Per-thread CPU ns between two task_cpu_ns readings (threads new since count whole)."""
    return {tid: ns - before.get(tid, 0) for tid, ns in after.items()}


def self_cpu_ns():
    """User plus system CPU time of this Python process (all its threads), in ns."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


def check_replies(lines, first_id, count, check_result, what):
    """Every id in first_id .. first_id+count-1 answered exactly once, each answer valid.

    check_result(result) returns None or what is wrong.  Returns the number
    of lines that were notifications.
    """
    seen = bytearray(count)
    notifications = 0
    for line in lines:
        try:
            reply = json.loads(line)
        except ValueError as exc:
            raise BenchError(f"{what}: a line that is not JSON: {line[:200]!r}") from exc
        if "id" not in reply:
            notifications += 1
            continue
        request_id = reply["id"]
        index = request_id - first_id if isinstance(request_id, int) else -1
        if not 0 <= index < count:
            raise BenchError(f"{what}: an answer to an id never sent: {line[:200]!r}")
        if seen[index]:
            raise BenchError(f"{what}: id {request_id} answered twice")
        seen[index] = 1
        if "error" in reply:
            raise BenchError(f"{what}: id {request_id} failed: {json.dumps(reply['error'])}")
        if check_result is not None:
            problem = check_result(reply.get("result"))
            if problem:
                raise BenchError(f"{what}: id {request_id}: {problem}: {line[:300]!r}")
    missing = count - sum(seen)
    if missing:
        first = first_id + seen.index(0)
        raise BenchError(f"{what}: {missing} ids never answered (first: {first})")
    return notifications


def check_ping(result):
    """What is wrong with a ping result, or None."""
    return None if result == {} else "ping result is not {}"


def cursor_text(result):
    """The text of a successful cursor_position result, or None."""
    if not isinstance(result, dict) or result.get("isError"):
        return None
    content = result.get("content") or [{}]
    text = content[0].get("text", "") if content[0].get("type") == "text" else ""
    return text if CURSOR_TEXT.match(text) else None


def check_cursor(result):
    """What is wrong with a cursor_position result, or None."""
    return None if cursor_text(result) is not None else "not a text [x, y] result"


def check_echo(result):
    """The echo baseline's lines are the requests themselves: nothing to check."""
    del result
    return None


def throughput_series(client, kind, args, check, pids):
    """Warm up, then args.runs pipelined runs of args.requests requests of one kind.

    pids maps a label to a process whose CPU time is read around each run:
    first the process at the other end of the pipes, then the X server.
    Returns a record with the req/s of each run, the CPU per request of
    those processes, of each thread of the first and of this harness, and
    the answers per read.
    """
    template = PIPELINED_REQUESTS[kind]

    def one_run(count, what):
        first = client.next_id + 1
        client.next_id += count
        payload = b"".join(template % i for i in range(first, first + count))
        before = {label: task_cpu_ns(pid) for label, pid in pids.items()}
        self_before = self_cpu_ns()
        elapsed, lines, reads = client.pipelined(payload, count, what)
        own = self_cpu_ns() - self_before
        cpu = {label: cpu_delta(before[label], task_cpu_ns(pid)) for label, pid in pids.items()}
        notifications = check_replies(lines, first, count, check, what)
        return elapsed, cpu, own, reads, notifications

    if args.warmup:
        one_run(args.warmup, f"{kind} (warm-up)")
    other = next(iter(pids))
    series = {"rates": [], "cpu_ns_per_req": {label: [] for label in pids},
              "threads_ns_per_req": [], "harness_cpu_ns_per_req": [],
              "answers_per_read": [], "notifications": 0}
    for run in range(args.runs):
        elapsed, cpu, own, reads, notifications = one_run(args.requests, f"{kind} run {run + 1}")
        series["rates"].append(args.requests / (elapsed / 1e9))
        for label in pids:
            series["cpu_ns_per_req"][label].append(sum(cpu[label].values()) / args.requests)
        series["threads_ns_per_req"].append(
            {tid: ns / args.requests for tid, ns in sorted(cpu[other].items())})
        series["harness_cpu_ns_per_req"].append(own / args.requests)
        series["answers_per_read"].append(args.requests / max(reads, 1))
        series["notifications"] += notifications
        threads = sorted(cpu[other].values(), reverse=True)
        busy = ""
        if len(threads) > 1:
            busy = " (threads: " + ", ".join(f"{ns / args.requests / 1e3:.1f}"
                                             for ns in threads[:4]) + ")"
        log(f"  {kind} run {run + 1}: {series['rates'][-1]:,.0f} req/s; CPU us/req: "
            f"{other} {sum(cpu[other].values()) / args.requests / 1e3:.2f}{busy}, "
            + ", ".join(f"{label} {sum(cpu[label].values()) / args.requests / 1e3:.2f}"
                        for label in list(pids)[1:])
            + f", harness {own / args.requests / 1e3:.2f}; "
            f"{series['answers_per_read'][-1]:.1f} answers per read")
    return series


def sequential_series(client, method, params, args, check):
    """args.runs runs of args.sequential one-at-a-time calls; return their calls/s."""
    rates = []
    for run in range(args.runs):
        total = 0
        timer = client.watchdog()
        try:
            for _ in range(args.sequential):
                elapsed, _, reply = client.call(method, params, f"sequential {method}",
                                                watch=False)
                problem = check(reply.get("result"))
                if problem:
                    raise BenchError(f"sequential {method}: {problem}: "
                                     f"{json.dumps(reply)[:300]}")
                total += elapsed
        finally:
            timer.cancel()
        rates.append(args.sequential / (total / 1e9))
        log(f"  one at a time run {run + 1}: {rates[-1]:,.0f} calls/s")
    return rates


def time_screenshots(client, count, image_sizes, deadline_id=None):
    """count sequential screenshots; return their times in ns.

    With deadline_id, go on until that request's reply has arrived (at least
    count shots), and also return how many finished before it did.
    """
    times = []
    before_reply = 0
    timer = client.watchdog()
    try:
        while len(times) < count or (deadline_id is not None and
                                     deadline_id not in client.stray):
            elapsed, _, reply = client.call("tools/call", SCREENSHOT_PARAMS, "screenshot",
                                            watch=False)
            image_sizes.add(image_size(screenshot_image(reply)))
            times.append(elapsed)
            if deadline_id is not None and deadline_id not in client.stray:
                before_reply += 1
            if deadline_id is not None and len(times) % 500 == 0:
                timer.cancel()  # A long hold: the watchdog covers one shot at a time.
                timer = client.watchdog()
    finally:
        timer.cancel()
    return times, before_reply


def bench_echo(children, args, xvfb_pid):
    """The harness's ceiling: the pipelined ping run against each ECHO_COMMANDS entry."""
    records = []
    for label, argv in ECHO_COMMANDS:
        log(f"harness ceiling: {args.runs} x {args.requests} ping lines through "
            f"`{shlex.join(argv)}`")
        proc = children.start(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        client = StdioClient(proc, args.timeout, argv[0])
        series = throughput_series(client, "ping", args, check_echo,
                                   {argv[0]: proc.pid, "Xvfb": xvfb_pid})
        peak = vm_hwm_kib(proc.pid)
        proc.stdin.close()
        proc.wait(timeout=10)
        records.append({
            "method": f"harness ceiling: `{shlex.join(argv)}` echoing the ping lines{label}",
            "kind": "echo",
            "unit": "lines/s",
            "other_end": argv[0],
            "peak_rss_kib": peak,
            **series,
        })
    return records


def bench_server(children, args, display, xvfb_pid):
    """Every server measurement, in one server process; return (records, extras)."""
    binary = os.path.abspath(args.binary)
    records = []
    with tempfile.TemporaryDirectory(prefix="bench-protocol-server-") as tmp:
        proc = children.start([binary], env=server_env(display, tmp), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
        client = StdioClient(proc, args.timeout, "the server")
        server_info = initialize(client)
        image_sizes = set()
        # One screenshot sets the coordinate session cursor_position needs.
        image_sizes.add(image_size(screenshot_image(
            client.call("tools/call", SCREENSHOT_PARAMS, "screenshot")[2])))
        _, _, first = client.call("tools/call", CURSOR_PARAMS, "cursor_position")
        if cursor_text(first.get("result")) is None:
            raise BenchError(f"cursor_position did not answer [x, y]: {json.dumps(first)[:300]}")

        for kind, check, params in (("ping", check_ping, None),
                                    ("cursor_position", check_cursor, CURSOR_PARAMS)):
            log(f"pipelined {kind}: {args.warmup} warm-up, then {args.runs} x {args.requests}")
            series = throughput_series(client, kind, args, check,
                                       {"server": proc.pid, "Xvfb": xvfb_pid})
            records.append({
                "method": f"{OURS} `{kind}` pipelined",
                "kind": kind,
                "unit": "req/s",
                "other_end": "server",
                "peak_rss_kib": vm_hwm_kib(proc.pid),
                **series,
            })
            if args.sequential:
                log(f"{kind} one at a time: {args.runs} x {args.sequential}")
                method = "ping" if params is None else "tools/call"
                rates = sequential_series(client, method, params or {}, args, check)
                records.append({
                    "method": f"{OURS} `{kind}` one request at a time",
                    "kind": kind,
                    "unit": "req/s",
                    "rates": rates,
                    "peak_rss_kib": vm_hwm_kib(proc.pid),
                })

        log(f"{args.shots} screenshots, idle")
        for _ in range(3):
            client.call("tools/call", SCREENSHOT_PARAMS, "screenshot")
        idle, _ = time_screenshots(client, args.shots, image_sizes)
        records.append({
            "method": f"{OURS} `screenshot` idle",
            "kind": "screenshot",
            "times_ns": idle,
            "peak_rss_kib": vm_hwm_kib(proc.pid),
        })

        log(f"{args.shots} screenshots during a {args.hold_seconds:g} s hold_key of {HOLD_KEY}")
        hold_args = {"text": HOLD_KEY, "duration": args.hold_seconds}
        hold_start = time.perf_counter_ns()
        hold_id = client.request("tools/call", {"name": "hold_key", "arguments": hold_args})
        # Let the actor press the key before the first capture is asked for.
        time.sleep(0.05)
        held_all, during = time_screenshots(client, args.shots, image_sizes, hold_id)
        # Only the shots that finished while the key was held count.
        held = held_all[:during]
        if during < args.shots:
            log(f"warning: only {during} of {args.shots} screenshots finished before the "
                "hold_key answered")
        timer = client.watchdog(args.hold_seconds + args.timeout)
        try:
            hold_ns, _, hold_reply = client.wait_reply(hold_id, "hold_key", hold_start)
        finally:
            timer.cancel()
        hold_text = tool_text(hold_reply)
        if hold_reply.get("result", {}).get("isError"):
            raise BenchError(f"hold_key answered isError: {hold_text}")
        hold_s = hold_ns / 1e9
        if abs(hold_s - args.hold_seconds) > 1.0:
            log(f"warning: hold_key answered after {hold_s:.2f} s, asked for "
                f"{args.hold_seconds:g} s")
        records.append({
            "method": f"{OURS} `screenshot` during `hold_key` {HOLD_KEY}",
            "kind": "screenshot-held",
            "times_ns": held,
            "shots_before_hold_reply": during,
            "peak_rss_kib": vm_hwm_kib(proc.pid),
        })

        log(f"{args.shots} screenshots, idle again after the hold")
        after, _ = time_screenshots(client, args.shots, image_sizes)
        records.append({
            "method": f"{OURS} `screenshot` idle, after the hold (drift check)",
            "kind": "screenshot-after",
            "times_ns": after,
            "peak_rss_kib": vm_hwm_kib(proc.pid),
        })

        peak = vm_hwm_kib(proc.pid)
        if client.stray:
            log(f"warning: unclaimed replies to ids {sorted(client.stray)[:10]}")
        exit_code = close_server(proc)
        if exit_code != 0:
            raise BenchError(f"server exited with status {exit_code} after stdin closed")
    extras = {
        "server_info": server_info,
        "image_sizes": sorted(image_sizes),
        "hold_reply_s": hold_s,
        "hold_text": hold_text,
        "final_peak_rss_kib": peak,
    }
    return records, extras


def bench_xdotool(args, display):
    """args.runs runs of XDOTOOL_CALLS_PER_RUN `xdotool getmouselocation` processes."""
    method = f"one process per call: `{shlex.join(XDOTOOL_ARGV)}`"
    if not shutil.which("xdotool"):
        log("xdotool is not installed; skipping its row")
        return {"method": method, "kind": "cursor_position", "unit": "calls/s",
                "skipped": "xdotool is not installed"}
    env = x_env(display)
    check = subprocess.run(XDOTOOL_ARGV, env=env, capture_output=True, text=True, check=False)
    if check.returncode != 0 or not check.stdout.startswith("x:"):
        raise BenchError(f"`{shlex.join(XDOTOOL_ARGV)}` printed {check.stdout!r} "
                         f"{check.stderr!r}")
    log(f"`{shlex.join(XDOTOOL_ARGV)}`: {args.runs} x {XDOTOOL_CALLS_PER_RUN}")
    rates = []
    try:
        for _ in range(args.runs):
            total = sum(spawn_and_wait(XDOTOOL_ARGV, env, args.timeout)
                        for _ in range(XDOTOOL_CALLS_PER_RUN))
            rates.append(XDOTOOL_CALLS_PER_RUN / (total / 1e9))
        with tempfile.TemporaryDirectory(prefix="bench-protocol-alt-") as tmp:
            rss_file = os.path.join(tmp, "maxrss")
            peak = max(peak_rss_kib(XDOTOOL_ARGV, env, rss_file, args.timeout)
                       for _ in range(ALT_RSS_RUNS))
    except BenchError as exc:
        # The alternative is context only: its failure is not the server's.
        log(f"warning: {exc}; leaving the xdotool row out")
        return {"method": method, "kind": "cursor_position", "unit": "calls/s",
                "skipped": f"failed after {len(rates)} runs ({exc})"}
    return {"method": method, "kind": "cursor_position", "unit": "calls/s", "rates": rates,
            "peak_rss_kib": peak}


def throughput_table(records):
    """The Markdown table of the rate rows."""
    lines = [
        "| method | median req/s | min req/s | max req/s | us per request | peak RSS MiB "
        "| ratio vs ours |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    ours = {r["kind"]: r for r in records
            if r["method"].startswith(OURS) and r["method"].endswith("pipelined")}
    for record in records:
        method = record["method"].replace("|", "\\|")
        if "skipped" in record:
            lines.append(f"| {method} | skipped: {record['skipped']} | | | | | |")
            continue
        base = ours.get("ping" if record["kind"] == "echo" else record["kind"])
        # Like the other bench tools, the ratio is this row's time per request
        # over ours: above 1x is slower than the pipelined server.
        ratio = f"{base['median_rate'] / record['median_rate']:.2f}x" if base else "n/a"
        lines.append(
            f"| {method} | {record['median_rate']:,.0f} | {record['min_rate']:,.0f} | "
            f"{record['max_rate']:,.0f} | {1e6 / record['median_rate']:.2f} | "
            f"{cell(record, 'peak_rss_mib', '.1f')} | {ratio} |")
    return lines


def cpu_table(records):
    """Where the time of the pipelined runs goes: CPU per request of each process."""
    lines = [
        "| pipelined run | wall us/req | other end CPU us/req | Xvfb CPU us/req "
        "| harness CPU us/req | answers per read |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for record in records:
        if "harness_cpu_us_per_req" not in record:
            continue
        other = f"{record['other_end_cpu_us_per_req']:.2f} ({record['other_end']})"
        lines.append(
            f"| {record['method']} | {1e6 / record['median_rate']:.2f} | {other} | "
            f"{record['Xvfb_cpu_us_per_req']:.2f} | {record['harness_cpu_us_per_req']:.2f} | "
            f"{record['median_answers_per_read']:.1f} |")
    return lines


def latency_table(records):
    """The Markdown table of the screenshot rows."""
    idle = next((r for r in records if r["kind"] == "screenshot"), None)
    lines = [
        "| method | p50 ms | p90 ms | mean ms | peak RSS MiB | ratio vs idle (p50) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for record in records:
        ratio = f"{record['p50_ms'] / idle['p50_ms']:.2f}x" if idle else "n/a"
        lines.append(
            f"| {record['method']} | {record['p50_ms']:.2f} | {record['p90_ms']:.2f} | "
            f"{record['mean_ms']:.2f} | {record['peak_rss_mib']:.1f} | {ratio} |")
    return lines
