"""The vision section of tools/bench/bench-protocol (--vision-only).

A server with CU_TOOLSETS=vision on a still scene: screenshot_find against
OpenCV's matchTemplate (in a helper process), and wait_for_change against
polling screenshot or import for a drawn rectangle; with the section's tables
and report.
"""

import base64
import json
import os
import random
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench import (SCREENSHOT_PARAMS, SCREEN_HEIGHT, SCREEN_WIDTH, BenchError, Children,
                   StdioClient, close_server, ensure_packages, initialize, log, percentile,
                   png_bytes_size, png_decode, png_encode, screenshot_image, server_env,
                   spawn_pipeline, vm_hwm_kib, x_env)
from common import ALT_RSS_RUNS, OURS, REPO, cell, machine_text, native_command, tool_result
from windows import WINDOW_POLL_S, WINDOW_WAIT_S, WINDOW_WARMUP, alt_peak_rss, rows_in_turns


# The vision section: a server with the vision toolset on, a still scene of
# known windows, templates cut from its screenshot, and a window of the
# script's own X client (tools/bench/lib/x_painter.py) to draw into for the waits.
VISION_REQUIRED_COMMANDS = {"xterm": "xterm", "xcalc": "x11-apps", "xlogo": "x11-apps",
                            "xwininfo": "x11-utils"}
VISION_OPTIONAL_COMMANDS = {"import": "imagemagick"}
# tools/bench/bench-match's screen without its xclock: a clock's redraw would be a
# change the waits do not expect.  The xterms show files of this repository,
# so the text is the same on every machine (run from the repository root).
VISION_SCENE = [
    ["xterm", "-geometry", "110x45+20+20", "-e", "sh", "-c",
     "cat docs/HACKING.md; exec sleep 1000000"],
    ["xterm", "-geometry", "80x24+900+500", "-e", "sh", "-c",
     "cat src/vision/match.h; exec sleep 1000000"],
    ["xcalc", "-geometry", "+1300+60"],
    ["xlogo", "-geometry", "150x150+1700+800"],
]
VISION_SCENE_CLASSES = {'"XTerm"': 2, '"XCalc"': 1, '"XLogo"': 1}
VISION_SCENE_TEXT = "two xterms showing files of this repository, xcalc and xlogo"
# How long the screenshot must not change before the scene counts as still.
VISION_STILL_S = 1.0
# (name, x, y, width, height) in the 1366x768 screenshot's pixels: over
# xcalc's keys, and over the first xterm's text.
VISION_TEMPLATES = [("64x64", 975, 228, 64, 64), ("300x200", 40, 60, 300, 200)]
# The painter's window (x, y, width, height on the root), its colour, and
# the rectangle drawn in it (window pixels) in each colour in turn.
VISION_PAINTER = (100, 700, 160, 120)
VISION_PAINTER_RGB = (48, 48, 48)
VISION_DRAW = (40, 40, 40, 40)
VISION_COLOURS = [(220, 40, 40), (40, 160, 220), (250, 200, 40), (60, 200, 90)]
# Debian's interpreter, for which python3-opencv installs cv2.
DEBIAN_PYTHON = "/usr/bin/python3"


# The OpenCV helper: Debian's python3-opencv may be installed for another
# interpreter than the one running this script, so OpenCV runs in a child
# process of its own.  One request a line (JSON; "size" bytes of PNG follow
# it), one JSON answer a line.  It times its own work, so the pipe between
# us is not counted: "find" decodes a screenshot PNG, turns it grey and
# matches a template (what an agent with OpenCV does with the screenshot it
# has); "match" matches again in the last grey screen (matchTemplate alone).
OPENCV_HELPER = r'''
import json, sys, time
try:
    import cv2, numpy
except ImportError as exc:
    print(json.dumps({"error": str(exc)}), flush=True)
    sys.exit(0)
print(json.dumps({"version": cv2.__version__, "threads": cv2.getNumThreads()}), flush=True)
templates, screen = {}, None

def grey_of(blob):
    image = cv2.imdecode(numpy.frombuffer(blob, numpy.uint8), cv2.IMREAD_COLOR)
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)

def best(name):
    result = cv2.matchTemplate(screen, templates[name], cv2.TM_CCOEFF_NORMED)
    _, score, _, (x, y) = cv2.minMaxLoc(result)
    return x, y, score

while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    request = json.loads(line)
    blob = sys.stdin.buffer.read(request["size"])
    start = time.perf_counter_ns()
    if request["op"] == "template":
        templates[request["name"]] = grey_of(blob)
        x = y = score = 0
    elif request["op"] == "find":
        screen = grey_of(blob)
        x, y, score = best(request["name"])
    else:
        x, y, score = best(request["name"])
    ns = time.perf_counter_ns() - start
    print(json.dumps({"ns": ns, "x": int(x), "y": int(y), "score": float(score)}), flush=True)
'''


def opencv_python():
    """An interpreter that imports cv2 (this one, else Debian's /usr/bin/python3), or None.

    As root, python3-opencv is installed for /usr/bin/python3 when neither has it.
    """
    candidates = [sys.executable, DEBIAN_PYTHON]

    def find():
        for python in candidates:
            if python and os.access(python, os.X_OK) and subprocess.run(
                    [python, "-c", "import cv2"], capture_output=True, check=False,
                    timeout=60).returncode == 0:
                return python
        return None

    python = find()
    if python is None and os.geteuid() == 0 and os.access(DEBIAN_PYTHON, os.X_OK):
        try:
            ensure_packages({}, also=["python3-opencv"], quiet_stderr=True)
        except BenchError as exc:
            log(f"warning: {exc}")
        python = find()
    return python


class OpenCvHelper:
    """The OPENCV_HELPER child: templates loaded by name, screens matched, times its own."""

    def __init__(self, clients, python, timeout):
        self.proc = clients.start([python, "-c", OPENCV_HELPER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.timeout = timeout
        hello = self.answer("start")
        if "error" in hello:
            raise BenchError(f"OpenCV under {python}: {hello['error']}")
        self.python, self.version, self.threads = python, hello["version"], hello["threads"]

    def answer(self, what):
        """The helper's next answer line, parsed."""
        if not select.select([self.proc.stdout], [], [], self.timeout)[0]:
            raise BenchError(f"the OpenCV helper did not answer {what} within "
                             f"{self.timeout:g} s")
        line = self.proc.stdout.readline()
        if not line:
            raise BenchError(f"the OpenCV helper exited during {what} "
                             f"(status {self.proc.wait()})")
        return json.loads(line)

    def ask(self, op, name, blob=b""):
        """Send one request; return its answer (ns, x, y, score)."""
        header = json.dumps({"op": op, "name": name, "size": len(blob)}).encode() + b"\n"
        try:
            self.proc.stdin.write(header + blob)
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise BenchError(f"the OpenCV helper exited before {op}") from exc
        return self.answer(op)

    def close(self):
        """End the helper (its stdin closed); return its peak RSS in KiB."""
        peak = vm_hwm_kib(self.proc.pid)
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        return peak


def wait_for_scene(client, clients, display):
    """Wait for VISION_SCENE's windows, then until the screen is still; return its PNG.

    The windows are found by class in `xwininfo -root -tree`; the screen is
    still once the server's screenshot has not changed for VISION_STILL_S.
    """
    env = x_env(display)
    deadline = time.monotonic() + WINDOW_WAIT_S

    def check(what):
        exited = [shlex.join(p.args[:3]) for p in clients.procs if p.poll() is not None]
        if exited:
            raise BenchError(f"vision scene: exited early: {', '.join(exited)}")
        if time.monotonic() > deadline:
            raise BenchError(f"vision scene: {what} within {WINDOW_WAIT_S} s")

    while True:
        tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True,
                              text=True, check=False).stdout
        if all(tree.count(name) >= count for name, count in VISION_SCENE_CLASSES.items()):
            break
        check("the windows did not all appear")
        time.sleep(WINDOW_POLL_S)
    last, since = None, None
    while True:
        _, _, reply = client.call("tools/call", SCREENSHOT_PARAMS, "screenshot of the scene")
        image = screenshot_image(reply)
        now = time.monotonic()
        if image != last:
            last, since = image, now
        elif now - since >= VISION_STILL_S:
            return base64.b64decode(image)
        check("the screen did not stop changing")
        time.sleep(WINDOW_POLL_S)


def find_answer(x, y, width, height, center, score):
    """A match as the tables show it: x, y, width, height, center x and y, score."""
    return [x, y, width, height, center[0], center[1], round(score, 4)]


def vision_find_rows(client, opencv, case, screen_rows):
    """The rows of one template: ours by region and as PNG, OpenCV the agent's way and alone.

    Every answer's best match must be where the template was cut, within
    one image pixel.
    """
    name, x, y, width, height = case
    template_png = png_encode(width, height, [row[x * 3:(x + width) * 3]
                                              for row in screen_rows[y:y + height]])

    def at_cut(best_x, best_y, what):
        if abs(best_x - x) > 1 or abs(best_y - y) > 1:
            raise BenchError(f"{what}: the best match is at ({best_x}, {best_y}), not at "
                             f"({x}, {y}) where the template was cut")

    def opencv_answer(found):
        # OpenCV's center, as a click would take it: the template's middle.
        center = (found["x"] + width // 2, found["y"] + height // 2)
        return find_answer(found["x"], found["y"], width, height, center, found["score"])

    def ours(arguments, what):
        params = {"name": "screenshot_find", "arguments": arguments}

        def measure():
            elapsed, _, reply = client.call("tools/call", params, what, watch=False)
            matches = (tool_result(reply, what).get("structuredContent") or {}).get("matches")
            if not matches:
                raise BenchError(f"{what}: no match: {json.dumps(reply)[:300]}")
            best = matches[0]
            at_cut(best["x"], best["y"], what)
            return elapsed, find_answer(best["x"], best["y"], best["width"], best["height"],
                                        best["center"], best["score"])
        return measure

    group = f"{name} template"
    region = [x, y, x + width, y + height]
    rows = [
        {"method": f"{OURS} `screenshot_find` `template_region` {region} ({group})",
         "kind": "vision-find", "ours": True,
         "measure": ours({"template_region": region}, f"screenshot_find of the {group}")},
        {"method": f"{OURS} `screenshot_find` `template` (base64 PNG, "
         f"{len(template_png):,} bytes) ({group})", "kind": "vision-find", "ours": True,
         "measure": ours({"template": base64.b64encode(template_png).decode()},
                         f"screenshot_find of the {group} as PNG")},
    ]
    agent = {"method": f"OpenCV, the agent's way: our `screenshot`, base64 and PNG decode, "
             f"`matchTemplate(TM_CCOEFF_NORMED)` + `minMaxLoc` ({group})",
             "kind": "vision-find", "opencv": True}
    alone = {"method": f"OpenCV `matchTemplate` + `minMaxLoc` alone, on the decoded grey "
             f"screenshot ({group})", "kind": "vision-find", "opencv": True}
    if opencv is None:
        agent["skipped"] = alone["skipped"] = "python3-opencv not installed"
        return rows + [agent, alone]
    opencv.ask("template", name, template_png)

    def agent_measure():
        elapsed, _, reply = client.call("tools/call", SCREENSHOT_PARAMS, "screenshot",
                                        watch=False)
        start = time.perf_counter_ns()
        png = base64.b64decode(screenshot_image(reply))
        elapsed += time.perf_counter_ns() - start
        found = opencv.ask("find", name, png)
        at_cut(found["x"], found["y"], f"OpenCV on the screenshot, {group}")
        return elapsed + found["ns"], opencv_answer(found)

    def alone_measure():
        found = opencv.ask("match", name)
        at_cut(found["x"], found["y"], f"OpenCV alone, {group}")
        return found["ns"], opencv_answer(found)

    agent["measure"], alone["measure"] = agent_measure, alone_measure
    return rows + [agent, alone]


def watching(client, request_id, token, what):
    """Read until the progress notification `watching` of token (drawing counts from then)."""
    while True:
        message = client.parse(client.read_line(what))
        params = message.get("params") or {}
        if message.get("method") == "notifications/progress" and \
                params.get("progressToken") == token:
            if params.get("message") == "watching":
                return
        elif message.get("id") == request_id:
            raise BenchError(f"{what} answered before it was watching: "
                             f"{json.dumps(message)[:300]}")
        elif "id" in message:
            client.stray[message["id"]] = message
            client.stray_times[message["id"]] = time.perf_counter_ns()


class Drawing:
    """The painter window's rectangle, filled with the next colour on each draw."""

    def __init__(self, painter, window):
        self.painter, self.window = painter, window
        self.count = 0
        left, top = VISION_PAINTER[:2]
        self.device = {"x": left + VISION_DRAW[0], "y": top + VISION_DRAW[1],
                       "width": VISION_DRAW[2], "height": VISION_DRAW[3]}

    def draw(self):
        """Fill the rectangle and sync; return (t0, t1, rgb): before the fill, after the sync."""
        rgb = VISION_COLOURS[self.count % len(VISION_COLOURS)]
        self.count += 1
        t0 = time.perf_counter_ns()
        self.painter.fill(self.window, *VISION_DRAW, rgb)
        return t0, time.perf_counter_ns(), rgb


def poll_for_change(poll, drawing, rng, limit_s, what):
    """One round of polling until the screen's bytes change; the drawing on a thread.

    poll() returns (ns when its answer was read, the image bytes).  After an
    untimed first poll (the image to compare with, its duration the period),
    polling runs back to back while a thread draws after a random delay of
    one to two periods, so the drawing falls at any point of a poll.  Returns
    (answer - t1, answer - t0, polls that ended after t0, the changed image,
    the colour drawn).
    """
    start = time.perf_counter_ns()
    end, baseline = poll()
    delay = (end - start) * (1 + rng.random()) / 1e9
    stamps = {}

    def drawer():
        time.sleep(delay)
        try:
            stamps["t0"], stamps["t1"], stamps["rgb"] = drawing.draw()
        except Exception as exc:  # Whatever it is, the polling thread reports it.
            stamps["error"] = exc

    thread = threading.Thread(target=drawer, name="drawer", daemon=True)
    ends = []
    deadline = time.monotonic() + limit_s
    thread.start()
    try:
        while True:
            end, image = poll()
            ends.append(end)
            if image != baseline:
                break
            if time.monotonic() > deadline:
                raise BenchError(f"{what}: no change seen within {limit_s:g} s")
    finally:
        thread.join()
    if "error" in stamps:
        raise BenchError(f"drawing failed: {stamps['error']}")
    t0, t1 = stamps["t0"], stamps["t1"]
    if end < t0:
        raise BenchError(f"{what}: the image changed before anything was drawn")
    return end - t1, end - t0, sum(1 for e in ends if e > t0), image, stamps["rgb"]


def vision_change_rows(client, drawing, args, env, extras):
    """The rows of a drawn rectangle's way to an answer: wait_for_change, polling
    our screenshot, polling `import`.  Each row's answer is a dict with
    from_t0_ns and captures (polls paid after the drawing began)."""
    rng = random.Random(1)
    group = "drawn rectangle"
    token_prefix = "bench-wait-"

    def wait_measure():
        what = "wait_for_change"
        request_id = client.new_id()
        token = f"{token_prefix}{request_id}"
        client.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                     "params": {"name": "wait_for_change", "arguments": {"timeout": 10},
                                "_meta": {"progressToken": token}}})
        watching(client, request_id, token, what)
        t0, t1, _ = drawing.draw()
        from_t1, _, reply = client.wait_reply(request_id, what, t1)
        device = (tool_result(reply, what).get("structuredContent") or {}).get("device")
        if device != drawing.device:
            raise BenchError(f"{what} answered device {device}, but {drawing.device} was "
                             "drawn")
        return from_t1, {"from_t0_ns": from_t1 + t1 - t0, "captures": 0}

    scale = None

    def shot():
        start = time.perf_counter_ns()
        request_id = client.request("tools/call", SCREENSHOT_PARAMS)
        elapsed, _, reply = client.wait_reply(request_id, "screenshot", start)
        return start + elapsed, screenshot_image(reply)

    def shot_measure():
        nonlocal scale
        from_t1, from_t0, polls, image, rgb = poll_for_change(
            shot, drawing, rng, args.timeout, "polling screenshot")
        # The changed image must show the colour in the middle of the rectangle.
        png = base64.b64decode(image)
        scale = scale or SCREEN_WIDTH / png_bytes_size(png)[0]
        box = drawing.device
        cx = int((box["x"] + box["width"] / 2) / scale)
        cy = int((box["y"] + box["height"] / 2) / scale)
        pixel = tuple(png_decode(png, cy, cy)[2][0][cx * 3:cx * 3 + 3])
        if any(abs(a - b) > 2 for a, b in zip(pixel, rgb)):
            raise BenchError(f"polling screenshot: the changed image has {pixel} at "
                             f"({cx}, {cy}), not the {rgb} drawn")
        return from_t1, {"from_t0_ns": from_t0, "captures": polls}

    rows = [
        {"method": f"{OURS} `wait_for_change` (whole screen), answered after `watching`",
         "kind": "vision-change", "ours": True, "measure": wait_measure},
        {"method": f"polling {OURS} `screenshot` back to back until the image changes",
         "kind": "vision-change", "measure": shot_measure},
    ]
    importer = native_command("import")
    argvs = [[importer or "import", "-window", "root", "png:-"]]

    def import_poll():
        out = spawn_pipeline(argvs, env, args.timeout)[1]
        return time.perf_counter_ns(), out

    def import_measure():
        from_t1, from_t0, polls, image, _ = poll_for_change(
            import_poll, drawing, rng, args.timeout, "polling import")
        size = png_bytes_size(image)
        if size != (SCREEN_WIDTH, SCREEN_HEIGHT):
            raise BenchError(f"`import` wrote a {size[0]}x{size[1]} PNG")
        return from_t1, {"from_t0_ns": from_t0, "captures": polls}

    alt = {"method": "reference server's way: polling `import -window root png:-` until its "
           "bytes change", "kind": "vision-change", "measure": import_measure,
           "run": lambda runner: runner(argvs)}
    if importer is None:
        alt["skipped"] = "ImageMagick's import is not installed"
    rows.append(alt)
    extras["change_group"] = group
    return rows, group


def bench_vision(args, display):
    """The vision section, with its own server, scene and helpers; return (records, extras).

    First screenshot_find of each VISION_TEMPLATES case next to OpenCV on
    the same screenshot; then a rectangle drawn by our own X client, seen by
    wait_for_change next to polling screenshots and `import`.
    """
    # Loaded here: it opens libxcb through ctypes, which no other section needs.
    from x_painter import XPainter
    binary = os.path.abspath(args.binary)
    env = x_env(display)
    records = []
    extras = {"templates": [dict(zip(("name", "x", "y", "width", "height"), case))
                            for case in VISION_TEMPLATES]}
    python = opencv_python()
    with tempfile.TemporaryDirectory(prefix="bench-protocol-vision-") as tmp, \
            Children() as clients:
        server_environment = dict(server_env(display, tmp), CU_TOOLSETS="vision",
                                  CU_IMAGE_FORMAT="png")
        server = clients.start([binary], env=server_environment, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
        clients.procs.remove(server)  # Ended by close_server, which checks its status.
        client = StdioClient(server, args.timeout, "the vision server")
        painter = None
        try:
            extras["server_info"] = initialize(client)
            for argv in VISION_SCENE:
                clients.start(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
            painter = XPainter(display)
            window = painter.window(*VISION_PAINTER, rgb=VISION_PAINTER_RGB)
            log("vision: waiting for the scene to be drawn and still")
            png = wait_for_scene(client, clients, display)
            width, height, screen_rows = png_decode(png)
            extras["image"] = [width, height]
            opencv = None
            if python is None:
                log("python3-opencv is not installed; no OpenCV rows")
            else:
                opencv = OpenCvHelper(clients, python, args.timeout)
                extras["opencv"] = {"python": python, "version": opencv.version,
                                    "threads": opencv.threads}

            def finish(rows, group, calls):
                group_records = rows_in_turns(client, rows, calls, group)
                for row, record in zip(rows, group_records):
                    if "skipped" not in record and not row.get("opencv") and \
                            "run" not in row:
                        record["peak_rss_kib"] = vm_hwm_kib(server.pid)
                records.extend(group_records)
                return group_records

            opencv_records = []
            for case in VISION_TEMPLATES:
                rows = vision_find_rows(client, opencv, case, screen_rows)
                group_records = finish(rows, f"{case[0]} template", args.vision_calls)
                opencv_records += [record for row, record in zip(rows, group_records)
                                   if row.get("opencv")]
            if opencv is not None:
                peak = opencv.close()
                for record in opencv_records:
                    if "skipped" not in record:
                        record["peak_rss_kib"] = peak

            drawing = Drawing(painter, window)
            extras["drawn"] = drawing.device
            rows, group = vision_change_rows(client, drawing, args, env, extras)
            alt_peak_rss([row for row in rows if "run" in row], env, args.timeout)
            group_records = finish(rows, group, args.change_rounds)
            for row, record in zip(rows, group_records):
                if "peak_rss_kib" in row and "skipped" not in record:
                    record["peak_rss_kib"] = row["peak_rss_kib"]
                if "answers" in record:
                    record["from_t0_ns"] = [a["from_t0_ns"] for a in record["answers"]]
                    record["captures"] = [a["captures"] for a in record["answers"]]
            if shutil.which("import"):
                extras["imagemagick"] = subprocess.run(
                    ["import", "-version"], capture_output=True, text=True,
                    check=False).stdout.splitlines()[0].split(" http")[0]
            extras["final_peak_rss_kib"] = vm_hwm_kib(server.pid)
            exit_code = close_server(server)
        finally:
            if painter is not None:
                painter.close()
            if server.poll() is None:
                server.kill()
                server.wait()
        if exit_code != 0:
            raise BenchError(f"the vision server exited with status {exit_code}")
    return records, extras


def is_vision(record):
    """Whether a record is a row of the vision section."""
    return record["kind"].startswith("vision-")


def vision_answer_text(record):
    """The best matches a find row answered: each distinct one, with a count when they vary."""
    counts = {}
    for answer in record["answers"]:
        counts[tuple(answer)] = counts.get(tuple(answer), 0) + 1

    def text(answer):
        x, y, width, height, cx, cy, score = answer
        return f"({x}, {y}) {width}x{height}, center ({cx}, {cy}), {score:.4f}"
    if len(counts) == 1:
        return text(next(iter(counts)))
    return "; ".join(f"{text(answer)} x{count}" for answer, count in sorted(counts.items()))


def vision_table_cells(record, base, times, digits):
    """p50 and p90 of times (ns) and the ratio of p50 against base's, formatted."""
    ms = [t / 1e6 for t in times]
    p50, p90 = percentile(ms, 0.5), percentile(ms, 0.9)
    ratio = f"{p50 / base:.2f}x" if base else "n/a"
    return f"{p50:.{digits}f}", f"{p90:.{digits}f}", ratio


def skipped_cell(record):
    """A skipped row's reason, fit for one table cell."""
    text = record["skipped"]
    if not text.startswith("not available"):
        text = f"skipped: {text}"
    return " ".join(text.split()).replace("|", "\\|")


def vision_find_table(records):
    """The Markdown table of the screenshot_find rows and their OpenCV alternatives."""
    lines = [
        f"| vision: `screenshot_find` ({SCREEN_WIDTH}x{SCREEN_HEIGHT} screen, its "
        "screenshot 1366x768) | p50 ms | p90 ms | mean ms | best match (image pixels), "
        "score | peak RSS MiB | ratio vs ours (p50) |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    base = {}
    for record in records:
        if record["kind"] != "vision-find":
            continue
        method = record["method"].replace("|", "\\|")
        if "skipped" in record:
            lines.append(f"| {method} | {skipped_cell(record)} | | | | | |")
            continue
        if record["ours"]:
            base.setdefault(record["group"], record["p50_ms"])
        p50, p90, ratio = vision_table_cells(record, base.get(record["group"]),
                                             record["times_ns"], 2)
        lines.append(f"| {method} | {p50} | {p90} | {record['mean_ms']:.2f} | "
                     f"{vision_answer_text(record)} | {cell(record, 'peak_rss_mib', '.1f')} | "
                     f"{ratio} |")
    return lines


def vision_agreement(records):
    """A line per template: where our best matches and OpenCV's were, and whether they agree."""
    lines = []
    groups = []
    for record in records:
        if record["kind"] == "vision-find" and record["group"] not in groups:
            groups.append(record["group"])
    for group in groups:
        rows = [r for r in records if r["group"] == group and "answers" in r]
        ours = {tuple(a[4:6]) for r in rows if r["ours"] for a in r["answers"]}
        theirs = {tuple(a[4:6]) for r in rows if not r["ours"] for a in r["answers"]}
        calls = sum(len(r["answers"]) for r in rows if r["ours"])
        ours_text = ", ".join(map(str, sorted(ours)))
        if not theirs:
            lines.append(f"- {group}: our best match centered at {ours_text} in all {calls} "
                         "calls; no OpenCV rows to compare with.")
            continue
        if ours == theirs and len(ours) == 1:
            verdict = "the same"
        elif all(abs(a[0] - b[0]) <= 1 and abs(a[1] - b[1]) <= 1 for a in ours for b in theirs):
            verdict = "within one image pixel"
        else:
            verdict = "DIFFERENT"
        lines.append(f"- {group}: our best match centered at {ours_text} in all {calls} calls, "
                     f"OpenCV's at {', '.join(map(str, sorted(theirs)))} in all "
                     f"{sum(len(r['answers']) for r in rows if not r['ours'])}: {verdict}.")
    return lines


def vision_change_table(records):
    """The Markdown table of the drawn rectangle's way to an answer."""
    lines = [
        "| vision: a 40x40 rectangle drawn, to the answer that shows it | p50 ms from "
        "t1 (fill done) | p90 ms from t1 | p50 ms from t0 (fill sent) | p90 ms from t0 | "
        "captures per change (mean) | peak RSS MiB | ratio vs ours (p50 from t1) "
        "| ratio vs ours (p50 from t0) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = base_t0 = None
    for record in records:
        if record["kind"] != "vision-change":
            continue
        method = record["method"].replace("|", "\\|")
        if "skipped" in record:
            lines.append(f"| {method} | {skipped_cell(record)} | | | | | | | |")
            continue
        if record["ours"] and base is None:
            base = record["p50_ms"]
            base_t0 = percentile([t / 1e6 for t in record["from_t0_ns"]], 0.5)
        p50, p90, ratio = vision_table_cells(record, base, record["times_ns"], 3)
        p50_t0, p90_t0, ratio_t0 = vision_table_cells(record, base_t0, record["from_t0_ns"], 3)
        lines.append(f"| {method} | {p50} | {p90} | {p50_t0} | {p90_t0} | "
                     f"{statistics.fmean(record['captures']):.2f} | "
                     f"{cell(record, 'peak_rss_mib', '.1f')} | {ratio} | {ratio_t0} |")
    return lines


def vision_tables(records):
    """Both vision tables, the agreement lines between them."""
    return (vision_find_table(records) + [
        "",
        "Best matches, ours and OpenCV's, by center (ours is placed at device resolution and "
        "answered at the nearest image pixel, OpenCV's searches the image itself):",
        ""] + vision_agreement(records) + [""] + vision_change_table(records))


def vision_runs_text(args, extras):
    """How the vision rows were measured."""
    cases = ", ".join(f"{t['name']} at ({t['x']}, {t['y']})" for t in extras["templates"])
    opencv = extras.get("opencv")
    opencv_text = (f"OpenCV {opencv['version']} ({opencv['threads']} threads, its default) "
                   f"in a helper process run by {opencv['python']}, which times its own "
                   "work, so the pipe to it is not counted" if opencv else
                   "python3-opencv is not installed, so there are no OpenCV rows")
    box = extras.get("drawn", {})
    return (f"Vision section: its own server with CU_TOOLSETS=vision and CU_IMAGE_FORMAT=png "
            f"on the same Xvfb, the scene {VISION_SCENE_TEXT} plus a {VISION_PAINTER[2]}x"
            f"{VISION_PAINTER[3]} window of this script's X client (libxcb through ctypes), "
            f"waited for until the screenshot had not changed for {VISION_STILL_S:g} s. The "
            f"templates ({cases} in the screenshot's image pixels) are cut from that "
            "screenshot, decoded by this script, and encoded again as PNG for the "
            "`template` rows and OpenCV. Each row's best match must lie within one image "
            f"pixel of where its template was cut. {WINDOW_WARMUP} untimed rounds, then "
            f"{args.vision_calls} rounds per template in which each row runs once in turn: "
            "`screenshot_find` with `template_region` and with `template` (tools/call "
            "written to answer line read); the agent's way with OpenCV, our `screenshot` "
            "(written to read) plus base64 decoding plus, in the helper, `imdecode`, "
            "`cvtColor` to grey, `matchTemplate(TM_CCOEFF_NORMED)` and `minMaxLoc`; and "
            f"`matchTemplate` + `minMaxLoc` alone on the grey screenshot; {opencv_text}. "
            f"Then {WINDOW_WARMUP} untimed and {args.change_rounds} timed rounds in turns of "
            f"a {box.get('width')}x{box.get('height')} rectangle filled at ({box.get('x')}, "
            f"{box.get('y')}) on the root, in a new colour each time, t0 taken before the "
            "fill request and t1 after the round trip that follows it (the X server has "
            "drawn it): `wait_for_change` on the whole screen with a progress token, the "
            "rectangle drawn once its `watching` notification was read, its answer's "
            "`device` rectangle checked to be the one drawn; `screenshot` called back to "
            "back until the image differs from the one before (checked to show the colour "
            "drawn at the rectangle's middle); and `import -window root png:-` in the same "
            "loop (checked to be a whole-screen PNG). In the polling rows a thread draws "
            "after one to two poll periods, so the drawing falls anywhere in a poll; "
            "\"captures per change\" counts the polls that ended after t0. Peak RSS: the "
            "server's VmHWM after its rows (the screenshot polling row is the same server); "
            "the OpenCV helper's VmHWM (a Python with cv2 and numpy loaded); for `import`, "
            f"the largest ru_maxrss over {ALT_RSS_RUNS} more runs under GNU time.")


def vision_report(records, extras, machine, args):
    """The Markdown report of a --vision-only run."""
    lines = vision_tables(records) + [
        "",
        f"Command: `{shlex.join(sys.argv)}`",
        "",
        machine_text(machine, VISION_SCENE_TEXT) + vision_versions_text(extras),
        "",
        vision_runs_text(args, extras),
        "",
        f"Peak RSS of the vision server at the end: "
        f"{extras['final_peak_rss_kib'] / 1024:.1f} MiB.",
    ]
    return "\n".join(lines)


def vision_versions_text(extras):
    """OpenCV's and ImageMagick's versions, after the machine line."""
    parts = []
    if extras.get("opencv"):
        parts.append(f"OpenCV {extras['opencv']['version']}")
    if extras.get("imagemagick"):
        parts.append(extras["imagemagick"].replace("Version: ", ""))
    return f" {', '.join(parts)}." if parts else ""
