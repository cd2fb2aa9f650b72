#!/usr/bin/python3
"""Writes a trace of a real session, for the viewer's picture in the docs
(docs/trace-viewer.png): the server drives Chromium on
tests/apps/data/page.html (fill the form, press its button, choose from the
select, scroll the list, one refused click) on a private Xvfb, and this
script writes what the flight recorder would (docs/trace.md) from the
outside: each call's arguments, answer and times as the client saw them,
the input the call sent as the server sends it, and after each call a
screenshot as its frame, the first whole and the others as the crop of what
changed.

  make_demo.py BINARY OUT.html [KILLED.html] [--server-trace DIR [--kill]]

KILLED.html: the same trace as a server killed in the middle of writing
step 10's record leaves it (no end record, that record cut in half).
--server-trace DIR: the server records its own trace there (CU_TRACE_DIR),
for tests/trace/test-viewer --trace, and OUT.html has no frames after the
first (their screenshots would be steps of the server's trace); --kill ends
the server with SIGKILL instead of closing its stdin.
Then: tests/trace/cdp.py "file://$PWD/OUT.html#step=N" docs/trace-viewer.png
"""
import base64
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "bench", "lib"))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import desk as dk  # noqa: E402
from make_sample import record, key_events, VIEWER  # noqa: E402

PAGE = "file://" + os.path.join(REPO, "tests", "apps", "data", "page.html")
SCREEN = (1600, 900)


def changed_box(a, b):
    """The smallest [x, y, w, h] holding every pixel that differs, or None."""
    rows = [y for y in range(len(a)) if a[y] != b[y]]
    if not rows:
        return None
    x0, x1 = len(a[0]) // 3, 0
    for y in rows:
        ra, rb = a[y], b[y]
        i = 0
        while ra[i] == rb[i]:
            i += 1
        j = len(ra) - 1
        while ra[j] == rb[j]:
            j -= 1
        x0, x1 = min(x0, i // 3), max(x1, j // 3 + 1)
    return [x0, rows[0], x1 - x0, rows[-1] + 1 - rows[0]]


class Recorder:
    def __init__(self, d, outside_frames=True):
        self.d = d
        # False when the server records the trace itself: the screenshots
        # taken here for frames would be steps of its trace.
        self.outside_frames = outside_frames
        self.t_start = time.monotonic()
        self.out = [open(VIEWER, encoding="utf-8").read()]
        self.rows = None
        self.n = 0
        self.seq = 0
        # Screen pixels per image pixel (a screenshot's structured "scale").
        self.scale = 1.0
        self.pointer = None

    def now(self):
        return round((time.monotonic() - self.t_start) * 1000, 1)

    def frame(self):
        """A screenshot as the next frame (not a step of the trace)."""
        if self.rows is not None and not self.outside_frames:
            return self.n
        _, structured, result = self.d.tool("screenshot")
        png = base64.b64decode(result["content"][0]["data"])
        w, h, rows = bench.png_decode(png)
        if self.rows is None:
            self.scale = structured["scale"]
            self.size = (w, h)
            self.out.append(record({
                "kind": "start", "version": 1, "part": 1, "server": "computer-use-mcp (tests/trace/make_demo.py)",
                "display": self.d.display, "screen": list(SCREEN), "scale": [w, h],
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "redact_text": False}))
            box = [0, 0, w, h]
        else:
            box = changed_box(self.rows, rows)
            if box is None:
                return self.n
        x, y, bw, bh = box
        crop = bench.png_encode(bw, bh, [bytes(r[x * 3:(x + bw) * 3]) for r in rows[y:y + bh]])
        self.n += 1
        self.out.append(record({"kind": "frame", "n": self.n, "t": self.now(), "key": self.n == 1,
                                "crops": [{"box": box, "png": base64.b64encode(crop).decode()}]}))
        self.rows = rows
        return self.n

    def screen_point(self, p):
        """An image point in screen pixels, rounded as the server rounds it."""
        return [round(p[0] * SCREEN[0] / self.size[0]), round(p[1] * SCREEN[1] / self.size[1])]

    def inputs(self, tool, args, t):
        """The input a call sends, as the server reports it, in screen pixels."""
        ev = []

        def move(p):
            self.pointer = self.screen_point(p)
            ev.append({"t": t, "type": "move", "x": self.pointer[0], "y": self.pointer[1]})
        if "coordinate" in args and tool in ("left_click", "mouse_move", "scroll"):
            move(args["coordinate"])
        if tool == "left_click":
            ev += [{"t": t + 1, "type": "press", "button": 1}, {"t": t + 2, "type": "release", "button": 1}]
        elif tool == "scroll":
            button = {"up": 4, "down": 5, "left": 6, "right": 7}[args["scroll_direction"]]
            for i in range(args.get("scroll_amount", 1)):
                ev += [{"t": t + 1 + i, "type": "press", "button": button},
                       {"t": t + 1 + i, "type": "release", "button": button}]
        elif tool == "type":
            names = {" ": "space", ".": "period", ",": "comma", "!": "exclam"}
            ev += key_events(t, [names.get(ch, ch) for ch in args["text"]])
        elif tool == "key":
            ev += key_events(t, [args["text"].replace("ctrl", "Control_L")])
        return ev

    def call(self, tool, args, ok=True):
        before = self.n
        self.seq += 1
        t0 = self.now()
        text, structured, result = self.d.tool(tool, args, ok=ok)
        t1 = self.now()
        failed = bool(result.get("isError"))
        rec = {"kind": "call", "seq": self.seq, "id": str(self.seq + 1), "tool": tool, "args": args,
               "t0": t0, "t1": t1, "ok": not failed, "text": text,
               "input": [] if failed else self.inputs(tool, args, t0 + 1)}
        if structured is not None:
            rec["structured"] = structured
        images = [b for b in result.get("content", []) if b.get("type") == "image"]
        if images:
            rec["images"] = [{"mime": b.get("mimeType", "image/png"),
                              "bytes": len(base64.b64decode(b["data"]))} for b in images]
        rec["before"] = before
        rec["after"] = self.frame()
        self.out.append(record(rec))
        return text

    def killed(self, seq):
        """The trace as a SIGKILL leaves it while call seq is written."""
        i = next(i for i, r in enumerate(self.out) if f'"kind":"call","seq":{seq},' in r)
        return "".join(self.out[:i]) + self.out[i][:len(self.out[i]) // 2]

    def end(self):
        self.out.append(record({"kind": "end", "t": self.now(), "why": "stdin closed"}))
        return "".join(self.out)


def main(argv):
    kill = "--kill" in argv
    argv = [a for a in argv if a != "--kill"]
    env = {}
    if "--server-trace" in argv:
        i = argv.index("--server-trace")
        env["CU_TRACE_DIR"] = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    d = dk.Desk(argv[1], size=SCREEN, env_extra=env)
    try:
        # --test-type: without the bar warning about --no-sandbox.
        d.start(["chromium", *dk.CHROMIUM_FLAGS[:-1], "--window-size=1600,900", "--test-type",
                 f"--user-data-dir={d.tmp}/chromium", PAGE])
        window = d.wait_window(lambda t: t.startswith("ready"), 60, "Chromium window")
        spy = dk.TitleSpy(d.display, window)
        rec = Recorder(d, outside_frames=not env)
        rec.frame()
        if not env:
            rec.call("screenshot", {})
        origin = dk.page_origin(lambda p: rec.call("mouse_move", {"coordinate": p}), spy)

        def at(css):
            return [round((origin[0] + css[0]) / rec.scale), round((origin[1] + css[1]) / rec.scale)]
        rec.call("left_click", {"coordinate": at((200, 56))})
        rec.call("type", {"text": "Trace the flight"})
        rec.call("left_click", {"coordinate": at((470, 58))})
        spy.wait(lambda t: t.startswith("pressed"), 15, "the button's title")
        rec.call("scroll", {"coordinate": at((200, 320)), "scroll_direction": "down", "scroll_amount": 5})
        spy.wait(lambda t: t.startswith("top"), 15, "the list's scroll")
        rec.call("left_click", {"coordinate": [4000, 300]}, ok=False)
        rec.call("left_click", {"coordinate": at((650, 58))})
        rec.call("key", {"text": "Down"})
        rec.call("key", {"text": "Return"})
        spy.wait(lambda t: t.startswith("chose"), 15, "the select's choice")
        rec.call("screenshot", {})
        if len(argv) == 4:
            with open(argv[3], "w", encoding="utf-8") as f:
                f.write(rec.killed(10))
        with open(argv[2], "w", encoding="utf-8") as f:
            f.write(rec.end())
        spy.close()
        if kill:
            d.server.kill()
            d.server.wait()
    finally:
        d.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
