"""The windows section of tools/bench/bench-protocol (--windows-only).

A server with CU_TOOLSETS=windows and 20 windows open: list_windows against
wmctrl and xdotool, a window's screenshot against import and xwd, then the
list rows again under openbox; with the section's tables and report.
"""

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import (SCREEN_HEIGHT, SCREEN_WIDTH, BenchError, Children, StdioClient, close_server,
                   image_size, initialize, log, png_bytes_size, screenshot_image, server_env,
                   spawn_pipeline, vm_hwm_kib, x_env)
from common import (ALT_RSS_RUNS, OURS, GnuTimeRunner, cell, machine_text, native_command,
                    tool_result, tool_text)


# The windows section: a server with the windows toolset on, WINDOW_COUNT
# windows (one xterm, the others xclocks), and what an agent would run
# instead.  xterm and xclock are required for it; the alternatives and
# openbox are optional, and a missing one leaves its rows out with a note.
WINDOWS_REQUIRED_COMMANDS = {"xterm": "xterm", "xclock": "x11-apps"}
WINDOWS_OPTIONAL_COMMANDS = {
    "wmctrl": "wmctrl",
    "import": "imagemagick",
    "convert": "imagemagick",
    "xwd": "x11-apps",
    "openbox": "openbox",
}
WINDOW_COUNT = 20
# The xterm whose window is captured: its content area, in root pixels, out
# of the clocks' way.
WINDOW_TERM = {"title": "bench-windows-term", "x": 1240, "y": 560, "width": 640, "height": 480}
WINDOW_CLOCK_TITLE = "bench-windows-clock-%02d"
WINDOW_CLOCK_SIZE = 200
WINDOW_CLOCK_COLUMNS = 5
# How long the windows (and the window manager) may take to show, polled.
WINDOW_WAIT_S = 20
WINDOW_POLL_S = 0.05
# Untimed rounds before the timed ones.
WINDOW_WARMUP = 3
LIST_WINDOWS_PARAMS = {"name": "list_windows", "arguments": {}}
WMCTRL_ARGV = ["wmctrl", "-l", "-G", "-p"]
XDOTOOL_SEARCH_ARGV = ["xdotool", "search", "--name", "."]


def list_windows(client, what="list_windows", watch=True):
    """(ns, structuredContent) of one list_windows call."""
    elapsed, _, reply = client.call("tools/call", LIST_WINDOWS_PARAMS, what, watch=watch)
    content = tool_result(reply, what).get("structuredContent")
    if not isinstance(content, dict) or not isinstance(content.get("windows"), list):
        raise BenchError(f"{what}: no structuredContent windows: {json.dumps(reply)[:300]}")
    return elapsed, content


def open_windows(clients, display):
    """Start the xterm and WINDOW_COUNT - 1 xclocks; return their titles, the xterm's first."""
    env = x_env(display)
    term = WINDOW_TERM
    titles = [term["title"]]
    clients.start(["xterm", "-title", term["title"], "-name", term["title"],
                   "-geometry", f"80x24+{term['x']}+{term['y']}"],
                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    step = WINDOW_CLOCK_SIZE + 10
    for index in range(1, WINDOW_COUNT):
        title = WINDOW_CLOCK_TITLE % index
        x = (index - 1) % WINDOW_CLOCK_COLUMNS * step
        y = (index - 1) // WINDOW_CLOCK_COLUMNS * step
        clients.start(["xclock", "-title", title, "-name", title, "-geometry",
                       f"{WINDOW_CLOCK_SIZE}x{WINDOW_CLOCK_SIZE}+{x}+{y}"],
                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        titles.append(title)
    return titles


def wait_for_windows(client, clients, titles, what, manager=False):
    """Poll list_windows until every title has a viewable window; return that structuredContent.

    With manager, also until a window manager is named and has managed each
    window: given it a desktop (_NET_WM_DESKTOP).  The manager names itself
    before it has put the windows in its client list, and until then wmctrl
    finds no list and list_windows falls back to the ICCCM tree.
    """
    deadline = time.monotonic() + WINDOW_WAIT_S
    while True:
        _, content = list_windows(client, f"list_windows while waiting for {what}")
        shown = {w.get("title") for w in content["windows"]
                 if w.get("viewable") and (not manager or w.get("desktop") is not None)}
        if set(titles) <= shown and (not manager or content.get("window_manager")):
            return content
        exited = [shlex.join(p.args[:3]) for p in clients.procs if p.poll() is not None]
        if exited:
            raise BenchError(f"{what}: exited early: {', '.join(exited)}")
        if time.monotonic() > deadline:
            missing = sorted(set(titles) - shown)
            raise BenchError(f"{what}: not within {WINDOW_WAIT_S} s; missing {missing[:5]}, "
                             f"window manager {content.get('window_manager')!r}")
        time.sleep(WINDOW_POLL_S)


def rows_in_turns(client, rows, calls, group):
    """Time each row's measure calls times, the rows taking turns.

    A row is a dict with method, kind and measure (a callable returning
    (ns, what the answer held)); `ours` rows go through client, the others
    spawn processes (or ask a helper).  After WINDOW_WARMUP untimed rounds,
    each round calls every row once, under one watchdog of the server for
    the round.  A failing alternative drops its row with a note; ours
    failing is an error.  Returns the records, in the rows' order.
    """
    active = [row for row in rows if "skipped" not in row]
    for row in rows:
        row["times_ns"], row["answers"] = [], []

    def one(row, timed):
        try:
            elapsed, answer = row["measure"]()
        except BenchError as exc:
            if row.get("ours"):
                raise
            log(f"warning: {exc}; leaving the {row['method']} row out")
            row["skipped"] = f"failed after {len(row['times_ns'])} timed calls ({exc})"
            active.remove(row)
            return
        if timed:
            row["times_ns"].append(elapsed)
            row["answers"].append(answer)

    log(f"{group}: {WINDOW_WARMUP} warm-up rounds, then {calls} rounds of "
        f"{len(active)} rows in turns")
    for index in range(WINDOW_WARMUP + calls):
        timer = client.watchdog()
        try:
            for row in list(active):
                one(row, timed=index >= WINDOW_WARMUP)
        finally:
            timer.cancel()
    records = []
    for row in rows:
        record = {key: row[key] for key in ("method", "kind") if key in row}
        record["group"] = group
        record["ours"] = bool(row.get("ours"))
        if "skipped" in row:
            record["skipped"] = row["skipped"]
        else:
            record["times_ns"] = row["times_ns"]
            record["answers"] = row["answers"]
            log(f"  {row['method']}: p50 {statistics.median(row['times_ns']) / 1e6:.2f} ms")
        records.append(record)
    return records


def alt_peak_rss(rows, env, timeout):
    """Each alternative row's peak RSS: ALT_RSS_RUNS more runs under GNU time."""
    with tempfile.TemporaryDirectory(prefix="bench-protocol-windows-rss-") as tmp:
        for row in rows:
            if row.get("ours") or "skipped" in row:
                continue
            runner = GnuTimeRunner(env, timeout, tmp)
            try:
                for _ in range(ALT_RSS_RUNS):
                    row["run"](runner)
            except BenchError as exc:
                log(f"warning: peak RSS of {row['method']}: {exc}")
                continue
            row["peak_rss_kib"] = runner.peak_kib


def list_rows(client, args, env, group, manager):
    """The list_windows row and its alternatives' rows of one group."""
    timed = lambda argvs: spawn_pipeline(argvs, env, args.timeout)[1]  # noqa: E731

    def ours():
        elapsed, content = list_windows(client, "list_windows", watch=False)
        count = len(content["windows"])
        if count != WINDOW_COUNT:
            raise BenchError(f"list_windows answered {count} windows, not {WINDOW_COUNT}")
        return elapsed, count

    def wmctrl(run):
        return len(run([WMCTRL_ARGV]).splitlines())

    def xdotool(run):
        ids = run([XDOTOOL_SEARCH_ARGV]).split()
        for window in ids:
            run([["xdotool", "getwindowname", window.decode()]])
            run([["xdotool", "getwindowgeometry", window.decode()]])
        return len(ids)

    def timing(listing):
        def measure():
            start = time.perf_counter_ns()
            count = listing(timed)
            return time.perf_counter_ns() - start, count
        return measure

    rows = [{"method": f"{OURS} `list_windows` ({group})", "kind": "windows-list",
             "ours": True, "measure": ours}]
    wmctrl_row = {"method": f"`{shlex.join(WMCTRL_ARGV)}` ({group})", "kind": "windows-list",
                  "measure": timing(wmctrl), "run": wmctrl}
    if not shutil.which("wmctrl"):
        wmctrl_row["skipped"] = "wmctrl is not installed"
    elif not manager:
        # wmctrl reads _NET_CLIENT_LIST, which only a window manager keeps.
        try:
            timed([WMCTRL_ARGV])
        except BenchError as exc:
            wmctrl_row["skipped"] = f"needs an EWMH window manager ({exc})"
    rows.append(wmctrl_row)
    xdotool_row = {"method": f"`{shlex.join(XDOTOOL_SEARCH_ARGV)}`, then per window "
                   f"`xdotool getwindowname ID` and `xdotool getwindowgeometry ID` ({group})",
                   "kind": "windows-list", "measure": timing(xdotool), "run": xdotool}
    if not shutil.which("xdotool"):
        xdotool_row["skipped"] = "xdotool is not installed"
    rows.append(xdotool_row)
    return rows


def window_shot_rows(client, args, env, window, area, extras):
    """The rows of one window's capture: ours (when the server has it), import, xwd | convert.

    extras gets the server's answer to the first capture (its
    structuredContent without the image).
    """
    params = {"name": "screenshot", "arguments": {"window": window}}
    timed = lambda argvs: spawn_pipeline(argvs, env, args.timeout)[1]  # noqa: E731
    size = f"{area['width']}x{area['height']}"

    def answer_of(reply):
        result = tool_result(reply, "screenshot of a window")
        content = result.get("structuredContent") or {}
        if content.get("window") != window:
            raise BenchError(f"a capture of window {window} answered structuredContent "
                             f"{json.dumps(content)[:300]}")
        image = screenshot_image(reply)
        kind = result["content"][0].get("mimeType", "image/?").split("/")[-1].upper()
        return "x".join(map(str, image_size(image))) + f" {kind}"

    def ours():
        elapsed, _, reply = client.call("tools/call", params, "screenshot of a window",
                                        watch=False)
        return elapsed, answer_of(reply)

    row = {"method": f"{OURS} `screenshot` `{{\"window\": ID}}` of a {size} xterm",
           "kind": "windows-shot", "ours": True, "measure": ours}
    # Without the argument, the call is an isError naming it or (a server
    # that ignores arguments it does not know, as this one did before main
    # 68ead07) a capture of the whole screen with no window in its
    # structuredContent: either way the row is "not available", not a failure.
    _, _, reply = client.call("tools/call", params, "screenshot of a window")
    result = reply.get("result", {})
    content = result.get("structuredContent") or {}
    if result.get("isError"):
        text = tool_text(reply)
        if "window" not in text.lower():
            raise BenchError(f"screenshot of a window answered isError: {text[:300]}")
        row["skipped"] = f"not available: the server answered isError: {text[:200]}"
    elif "window" not in content:
        device = content.get("device") or {}
        row["skipped"] = ("not available: the server ignored `window` and captured "
                          f"{device.get('width')}x{device.get('height')} (the whole screen "
                          f"is {SCREEN_WIDTH}x{SCREEN_HEIGHT})")
    else:
        answer_of(reply)
        extras["window_capture"] = content
        # Where the pixels came from: the window's own (Composite) or the screen.
        if content.get("source"):
            row["method"] += f" (source: {content['source']})"
    if "skipped" in row:
        log(f"window screenshot: {row['skipped']}")
    rows = [row]

    def png_of(argvs):
        def run(runner):
            return "x".join(map(str, png_bytes_size(runner(argvs)))) + " PNG"

        def measure():
            start = time.perf_counter_ns()
            answer = run(timed)
            return time.perf_counter_ns() - start, answer
        return run, measure

    convert = native_command("convert") or "convert"
    commands = [
        [["import", "-window", window, "png:-"]],
        [["xwd", "-silent", "-id", window], [convert, "xwd:-", "png:-"]],
    ]
    for argvs in commands:
        run, measure = png_of(argvs)
        alt = {"method": f"`{' | '.join(shlex.join(a) for a in argvs)}`".replace(window, "ID"),
               "kind": "windows-shot", "measure": measure, "run": run}
        missing = [argv[0] for argv in argvs if not shutil.which(argv[0])]
        if missing:
            alt["skipped"] = f"{', '.join(missing)} not installed"
        rows.append(alt)
    return rows


def bench_windows(args, display):
    """The windows section, with its own server and X clients; return (records, extras).

    Without a window manager: list_windows with WINDOW_COUNT windows open
    next to wmctrl (which needs a manager, so it is usually left out here)
    and xdotool; then a window's screenshot next to import and xwd | convert.
    Then with openbox managing the same windows, the list rows again.
    """
    binary = os.path.abspath(args.binary)
    env = x_env(display)
    records = []
    extras = {"window_count": WINDOW_COUNT, "term": dict(WINDOW_TERM)}
    with tempfile.TemporaryDirectory(prefix="bench-protocol-windows-") as tmp, \
            Children() as clients:
        server = clients.start([binary], env=dict(server_env(display, tmp), CU_TOOLSETS="windows"),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        clients.procs.remove(server)  # Ended by close_server, which checks its status.
        client = StdioClient(server, args.timeout, "the windows server")
        try:
            initialize(client)
            titles = open_windows(clients, display)
            log(f"windows: waiting for {WINDOW_COUNT} windows")
            content = wait_for_windows(client, clients, titles, f"{WINDOW_COUNT} windows")
            by_title = {w["title"]: w for w in content["windows"]}
            window = by_title[WINDOW_TERM["title"]]["id"]
            area = {k: WINDOW_TERM[k] for k in ("x", "y", "width", "height")}
            geometry = {"name": "set_window_geometry",
                        "arguments": {"window": window, "units": "device", **area}}
            _, _, reply = client.call("tools/call", geometry, "set_window_geometry")
            placed = tool_result(reply, "set_window_geometry").get("structuredContent", {})
            if placed.get("device") != area:
                raise BenchError(f"the xterm is at {placed.get('device')}, not {area}")
            extras.update(term_window=window, term_area=area)

            def finish(rows, group):
                alt_peak_rss(rows, env, args.timeout)
                group_records = rows_in_turns(client, rows, args.window_calls, group)
                for row, record in zip(rows, group_records):
                    if "skipped" in record:
                        continue
                    if row.get("ours"):
                        record["peak_rss_kib"] = vm_hwm_kib(server.pid)
                    elif "peak_rss_kib" in row:
                        record["peak_rss_kib"] = row["peak_rss_kib"]
                records.extend(group_records)

            no_wm = "no window manager"
            finish(list_rows(client, args, env, no_wm, manager=False), no_wm)
            finish(window_shot_rows(client, args, env, window, area, extras), no_wm)

            if shutil.which("openbox"):
                xdg = {"XDG_CONFIG_HOME": os.path.join(tmp, "config"),
                       "XDG_CACHE_HOME": os.path.join(tmp, "cache")}
                clients.start(["openbox", "--sm-disable"], env=dict(env, **xdg),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                content = wait_for_windows(client, clients, titles, "openbox", manager=True)
                extras["window_manager"] = content["window_manager"]
                group = f"under {content['window_manager']}"
                finish(list_rows(client, args, env, group, manager=True), group)
            else:
                log("openbox is not installed; no rows under a window manager")
                extras["window_manager"] = None
            extras["final_peak_rss_kib"] = vm_hwm_kib(server.pid)
            exit_code = close_server(server)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        if exit_code != 0:
            raise BenchError(f"the windows server exited with status {exit_code}")
    return records, extras


def is_windows(record):
    """Whether a record is a row of the windows section."""
    return record["kind"].startswith("windows-")


def windows_answer_text(record):
    """What a windows row's answers held: how many windows, or the image size."""
    answers = record["answers"]
    if record["kind"] == "windows-shot":
        return ", ".join(sorted(set(answers)))
    low, high = min(answers), max(answers)
    return f"{low} windows" if low == high else f"{low} to {high} windows"


def windows_table(records):
    """The Markdown table of the windows section's rows."""
    lines = [
        f"| windows section ({WINDOW_COUNT} windows open) | p50 ms | p90 ms | mean ms "
        "| each answer | peak RSS MiB | ratio vs ours (p50) |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    ours = {(r["group"], r["kind"]): r for r in records if r["ours"] and "p50_ms" in r}
    for record in records:
        method = record["method"].replace("|", "\\|")
        if "skipped" in record:
            text = record["skipped"]
            if not text.startswith("not available"):
                text = f"skipped: {text}"
            # A command's stderr may span lines; a table cell may not.
            text = " ".join(text.split()).replace("|", "\\|")
            lines.append(f"| {method} | {text} | | | | | |")
            continue
        base = ours.get((record["group"], record["kind"]))
        # As in the other tables: above 1x is slower than ours.
        ratio = f"{record['p50_ms'] / base['p50_ms']:.2f}x" if base else "n/a"
        lines.append(
            f"| {method} | {record['p50_ms']:.2f} | {record['p90_ms']:.2f} | "
            f"{record['mean_ms']:.2f} | {windows_answer_text(record)} | "
            f"{cell(record, 'peak_rss_mib', '.1f')} | {ratio} |")
    return lines


def windows_runs_text(args, extras):
    """How the windows rows were measured."""
    term = extras["term"]
    manager = extras.get("window_manager")
    wm_text = (f"then {manager} was started on the same display, and once it managed all "
               "the windows the list rows were taken again" if manager else
               "openbox is not installed, so there are no rows under a window manager")
    return (f"Windows section: its own server with CU_TOOLSETS=windows on the same Xvfb, "
            f"{WINDOW_COUNT} windows open (one xterm, {WINDOW_COUNT - 1} xclocks of "
            f"{WINDOW_CLOCK_SIZE}x{WINDOW_CLOCK_SIZE}, each with its own title), waited for by "
            f"polling `list_windows` ({WINDOW_WAIT_S} s at most); the xterm moved and resized to "
            f"{term['width']}x{term['height']}+{term['x']}+{term['y']} with "
            "`set_window_geometry`. Without a window manager first: "
            f"{WINDOW_WARMUP} untimed rounds, then {args.window_calls} rounds in which each row "
            "runs once in turn, so a change in the machine's speed hits every row alike: "
            "`list_windows` (each answer must hold all the windows), `wmctrl` (it reads the "
            "manager's client list, so it needs one) and `xdotool search` with two more "
            "xdotool processes per window found (the time of the whole listing); then the "
            "xterm's window captured: `screenshot` with `window` (\"not available\" while the "
            "server answers isError naming it, or ignores it and captures the whole screen), "
            "`import -window` and `xwd | convert` to PNG (each process spawned straight from "
            "this script, no shell; convert is the first ELF `convert` on PATH, so a wrapper "
            f"script in front of it is not timed); {wm_text}. Peak RSS: the server's VmHWM "
            f"after its rows; for the alternatives, the largest ru_maxrss of any of their "
            f"processes over {ALT_RSS_RUNS} more runs under GNU time.")


def windows_report(records, extras, machine, args):
    """The Markdown report of a --windows-only run."""
    lines = windows_table(records) + [
        "",
        f"Command: `{shlex.join(sys.argv)}`",
        "",
        machine_text(machine, f"{WINDOW_COUNT} windows open"),
        "",
        windows_runs_text(args, extras),
        "",
        f"Peak RSS of the windows server at the end: "
        f"{extras['final_peak_rss_kib'] / 1024:.1f} MiB.",
    ]
    return "\n".join(lines)
