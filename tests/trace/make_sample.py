#!/usr/bin/python3
"""Writes sample traces in the flight recorder's format (docs/trace.md) for
the viewer's test (tests/trace/test-viewer) and its picture in the docs.

Each file is src/trace/viewer.html followed by one
<script type="application/json" class="cu"> record per line, as the server
writes them. The frames are PNGs made here: a key frame of a plain colour
with a window-like rectangle, then crops that move it. The calls press at
known screen pixels (a click, a drag, a double click, a right click), type,
scroll, fail once, and one settles after its answer (a "settled" record).

  make_sample.py OUT.html            a finished trace (it has an end record)
  make_sample.py --killed OUT.html   the same cut off as a SIGKILL leaves it:
                                     no end record, the last record cut short
  make_sample.py --redacted OUT.html as CU_TRACE_REDACT_TEXT writes it: typed
                                     text and its keysyms left out
  make_sample.py --steps             the press of each step, as JSON, for tests

The screen is 1280x720 and frames are stored at 960x540 (a scale of 0.75),
so a press at screen (201, 151) is drawn on frame pixel (150, 113).
"""
import base64
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "bench", "lib"))
import bench  # noqa: E402  (PNG encoding and decoding)
VIEWER = os.path.join(REPO, "src", "trace", "viewer.html")

SCREEN = (1280, 720)
SCALE = (960, 540)


class Canvas:
    """An RGB picture in frame pixels, drawn with rectangles."""

    def __init__(self, w, h, colour):
        self.w, self.h = w, h
        self.rows = [bytearray(bytes(colour) * w) for _ in range(h)]

    def rect(self, x, y, w, h, colour):
        x0, y0, x1, y1 = max(0, x), max(0, y), min(self.w, x + w), min(self.h, y + h)
        for r in range(y0, y1):
            self.rows[r][x0 * 3:x1 * 3] = bytes(colour) * (x1 - x0)

    def crop_png(self, box):
        x, y, w, h = box
        return base64.b64encode(bench.png_encode(w, h, [bytes(r[x * 3:(x + w) * 3])
                                                        for r in self.rows[y:y + h]])).decode()


BACKGROUND = (58, 110, 143)
WINDOW = (245, 245, 240)
TITLE = (40, 52, 64)


def record(obj):
    text = json.dumps(obj, separators=(",", ":")).replace("</", "<\\/")
    return '<script type="application/json" class="cu">' + text + "</script>\n"


def key_events(t, keysyms):
    """Down and up events for each keysym, modifiers held around a chord
    written as "Control_L+l"."""
    out = []
    for k in keysyms:
        parts = k.split("+")
        for p in parts:
            out.append({"t": t, "type": "key", "keysym": p, "down": True})
            t += 1
        for p in reversed(parts):
            out.append({"t": t, "type": "key", "keysym": p, "down": False})
            t += 1
    return out


def click(t, x, y, button=1, count=1):
    ev = [{"t": t, "type": "move", "x": x, "y": y}]
    for i in range(count):
        ev += [{"t": t + 1 + 2 * i, "type": "press", "button": button},
               {"t": t + 2 + 2 * i, "type": "release", "button": button}]
    return ev


# The steps: (tool, args, ok, text, input, the press positions in screen
# pixels the viewer must mark, one per press: a double click's two at one
# place). A drag's mark is where its button went down.
def steps():
    return [
        ("screenshot", {}, True, "A screenshot of 1280x720", [], []),
        ("left_click", {"coordinate": [201, 151]}, True, "Clicked at (201, 151)",
         click(0, 201, 151), [(201, 151)]),
        ("type", {"text": "hello world"}, True, "Typed 11 characters",
         key_events(0, list("hello") + ["space"] + list("world")), []),
        ("left_click_drag", {"start_coordinate": [300, 400], "coordinate": [900, 500]}, True,
         "Dragged from (300, 400) to (900, 500)",
         [{"t": 0, "type": "move", "x": 300, "y": 400}, {"t": 1, "type": "press", "button": 1},
          {"t": 2, "type": "move", "x": 600, "y": 450}, {"t": 3, "type": "move", "x": 900, "y": 500},
          {"t": 4, "type": "release", "button": 1}], [(300, 400)]),
        ("key", {"text": "ctrl+l"}, True, "Pressed ctrl+l", key_events(0, ["Control_L+l"]), []),
        ("left_click", {"coordinate": [5000, 10]}, False,
         'Invalid argument "coordinate": (5000, 10) is outside the screen (1280x720)', [], []),
        ("double_click", {"coordinate": [1001, 601]}, True, "Double-clicked at (1001, 601)",
         click(0, 1001, 601, count=2), [(1001, 601), (1001, 601)]),
        ("right_click", {"coordinate": [640, 360]}, True, "Right-clicked at (640, 360)",
         click(0, 640, 360, button=3), [(640, 360)]),
        ("scroll", {"coordinate": [400, 200], "scroll_direction": "down", "scroll_amount": 3}, True,
         "Scrolled down 3 at (400, 200)",
         [{"t": 0, "type": "move", "x": 400, "y": 200}] +
         [{"t": 1 + i, "type": t, "button": 5} for i in range(3) for t in ("press", "release")], []),
        # Typed HTML: "<!--" then "<script" in a record keeps the HTML parser
        # from ending its element at "</script>" (the viewer splits it again).
        ("type", {"text": "<!--<script>世"}, True, "Typed <!--<script>世",
         key_events(0, ["less", "exclam", "minus", "minus", "less"] + list("script") + ["greater", "U4E16"]),
         []),
    ]


def redact(tool, args, inp):
    """A call as the server writes it with CU_TRACE_REDACT_TEXT set."""
    if tool not in ("type", "key") or "text" not in args:
        return args, inp
    args = dict(args, text=f"[redacted {len(args['text'])} chars]")
    if tool == "type":
        inp = [dict(e, keysym="[redacted]") for e in inp]
    return args, inp


def sample(killed, redacted=False):
    out = [open(VIEWER, encoding="utf-8").read()]
    out.append(record({"kind": "start", "version": 1, "part": 1, "server": "computer-use-mcp 0.9 (sample)",
                       "display": ":10", "screen": list(SCREEN), "scale": list(SCALE),
                       "started": "2026-11-26T21:00:00Z", "redact_text": redacted}))
    cv = Canvas(SCALE[0], SCALE[1], BACKGROUND)
    cv.rect(60, 40, 420, 260, WINDOW)
    cv.rect(60, 40, 420, 24, TITLE)
    n, t = 1, 100.0
    out.append(record({"kind": "frame", "n": n, "t": t, "key": True,
                       "crops": [{"box": [0, 0, SCALE[0], SCALE[1]], "png": cv.crop_png((0, 0, SCALE[0], SCALE[1]))}]}))
    before = n
    all_steps = steps()
    for seq, (tool, args, ok, text, inp, _) in enumerate(all_steps, start=1):
        t0 = t + 400.0
        t1 = t0 + 35.0 + 10 * seq
        if redacted:
            args, inp = redact(tool, args, inp)
        ev = [dict(e, t=t0 + 5 + e["t"]) for e in inp]
        after = before
        if ok:
            # The screen changes: a block moves across the window, a crop
            # each step, and frame 6 is a key frame again.
            n += 1
            x = 80 + 40 * seq
            cv.rect(x - 40, 120, 40, 40, WINDOW)
            cv.rect(x, 120, 40, 40, (200, 60, 40))
            if n == 6:
                out.append(record({"kind": "frame", "n": n, "t": t1 - 5, "key": True,
                                   "crops": [{"box": [0, 0, SCALE[0], SCALE[1]],
                                              "png": cv.crop_png((0, 0, SCALE[0], SCALE[1]))}]}))
            else:
                box = [x - 40, 120, 80, 40]
                out.append(record({"kind": "frame", "n": n, "t": t1 - 5, "key": False,
                                   "crops": [{"box": box, "png": cv.crop_png(box)}]}))
            after = n
        call = {"kind": "call", "seq": seq, "id": str(seq + 1), "tool": tool, "args": args,
                "t0": t0, "t1": t1, "ok": ok, "text": text, "before": before,
                "after": None if tool == "key" else after, "input": ev}
        if tool == "screenshot":
            call["images"] = [{"mime": "image/png", "bytes": 182311}]
            call["structured"] = {"width": SCREEN[0], "height": SCREEN[1]}
        out.append(record(call))
        if tool == "key":
            # Taken before the next step's input, not settled (docs/trace.md).
            out.append(record({"kind": "settled", "seq": seq, "frame": after, "settled": False}))
        before = after
        t = t1
    if killed:
        # The writer fell behind once (docs/trace.md, "How it runs").
        out.insert(len(out) - 1, record({"kind": "dropped", "t": t, "records": 2}))
        # A SIGKILL in the middle of a write(2) of a frame: the record stops
        # short, with no closing tag, and no end record follows.
        cut = record({"kind": "frame", "n": n + 1, "t": t + 50, "key": False,
                      "crops": [{"box": [0, 0, 100, 100], "png": cv.crop_png((0, 0, 100, 100))}]})
        out.append(cut[:len(cut) // 2])
    else:
        out.append(record({"kind": "end", "t": t + 500, "why": "stdin closed"}))
    return "".join(out)


def expected():
    """Each step's seq with its presses in frame pixels."""
    res = []
    for seq, s in enumerate(steps(), start=1):
        marks = [[x * SCALE[0] // SCREEN[0], y * SCALE[1] // SCREEN[1]] for x, y in s[5]]
        res.append({"seq": seq, "tool": s[0], "ok": s[2], "marks": marks})
    return res


def main(argv):
    if argv[1:] == ["--steps"]:
        print(json.dumps(expected()))
        return 0
    paths = [a for a in argv[1:] if not a.startswith("--")]
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(paths[0], "w", encoding="utf-8") as f:
        f.write(sample("--killed" in argv, "--redacted" in argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
