#!/usr/bin/python3
"""Times the viewer on a long trace (docs/trace-viewer.md, "How it works"):
300 left_click steps and 600 frames at 1366x768, a key frame every 50 frames
and a 200x150 crop in each other one. Opens it in headless Chromium at steps
1, 299 and 150 and prints, for each, the time to the first paint, five steps
back with the left arrow and a click on step 41 in the timeline, each until
the page says it painted.

  time_viewer.py [OUT.html]   (the trace is kept there; default a temporary file)
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import make_sample as ms  # noqa: E402

W, H = 1366, 768


def long_trace():
    out = [open(ms.VIEWER, encoding="utf-8").read(),
           ms.record({"kind": "start", "version": 1, "part": 1, "server": "time_viewer.py",
                      "display": ":1", "screen": [1920, 1080], "scale": [W, H],
                      "started": "2026-11-26T21:00:00Z", "redact_text": False})]
    cv = ms.Canvas(W, H, (90, 100, 110))
    for y in range(0, H, 16):
        cv.rect(0, y, W, 1, (200, 200, 200))
    n = 0
    for seq in range(1, 301):
        for _ in range(2):
            n += 1
            x, y = (n * 37) % (W - 200), (n * 23) % (H - 150)
            cv.rect(x, y, 200, 150, ((n * 40) % 256, 120, 200))
            box = [0, 0, W, H] if n % 50 == 1 else [x, y, 200, 150]
            out.append(ms.record({"kind": "frame", "n": n, "t": n * 10.0, "key": n % 50 == 1,
                                  "crops": [{"box": box, "png": cv.crop_png(box)}]}))
        out.append(ms.record({"kind": "call", "seq": seq, "id": str(seq), "tool": "left_click",
                              "args": {"coordinate": [x, y]}, "t0": n * 10.0 - 5, "t1": n * 10.0,
                              "ok": True, "text": "ok", "before": n - 2, "after": n,
                              "input": ms.click(n * 10.0 - 4, x + 100, y + 70)}))
    out.append(ms.record({"kind": "end", "t": n * 10.0 + 100, "why": "stdin closed"}))
    return "".join(out)


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(tempfile.mkdtemp(), "long.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(long_trace())
    print(f"{path}: {os.path.getsize(path)} bytes")
    b = cdp.Browser()
    try:
        for step in (1, 299, 150):
            t = time.monotonic()
            p = b.open(f"file://{path}#step={step}")
            p.wait("window.cuPainted")
            opened = (time.monotonic() - t) * 1000
            back = [p.eval("(async () => { const t = performance.now(); document.dispatchEvent("
                           "new KeyboardEvent('keydown', {key: 'ArrowLeft'})); await window.cuLastPaint;"
                           " return performance.now() - t; })()") for _ in range(5)]
            jump = p.eval("(async () => { const t = performance.now(); document.querySelectorAll("
                          "'#steps li')[40].click(); await window.cuLastPaint; return performance.now() - t; })()")
            print(f"open at step {step}: {opened:.0f} ms to painted; a step back: "
                  f"{' '.join(str(round(v)) for v in back)} ms; a click on step 41: {jump:.0f} ms")
            p.close()
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
