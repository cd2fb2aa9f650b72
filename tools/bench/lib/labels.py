"""Screens of known labels, for tools/bench/bench-recall and tests/apps/find-text.

It owns: putting one program on a private Xvfb with openbox and reporting
the labels it shows with their true boxes in root (device) pixels: Chromium
on tests/apps/data/labels.html (the page gives its labels' text boxes), a
GTK 3 window of tests/apps/data/gtk_labels.py (the toolkit gives its
labels' ink boxes), and xterm with known lines in its fixed 6x13 font (the
cell grid gives the boxes of the phrases an agent would look for). Each scene waits on an event (a title, a line
on the program's stdout), never on a sleep, except that xterm's drawing of
its lines has no event: the caller reads the screen until it shows them.

Standard library only; X through xprop and xwininfo, the pointer through the
server's own mouse_move.
"""

import json
import os
import subprocess

import bench
import desk as dk

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DATA = os.path.join(REPO, "tests", "apps", "data")
LABELS_PAGE = "file://" + os.path.join(DATA, "labels.html")

# xterm's lines: commands, output, a prompt, as a terminal shows them.
XTERM_LINES = [
    "user@host:~$ ls -la /usr/lib",
    "total 1284",
    "drwxr-xr-x  2 root root  4096 Mar  3 10:12 apt",
    "Permission denied",
    "Connection refused by remote host",
    "make: Nothing to be done for all",
    "warning: unused variable count",
]
# What an agent would look for in them: (line, phrase).
XTERM_LABELS = [
    (0, "ls -la"), (0, "/usr/lib"), (1, "total 1284"), (2, "root"), (2, "4096"), (2, "Mar"),
    (2, "apt"), (3, "Permission denied"), (4, "Connection refused"), (4, "remote host"),
    (5, "Nothing to be done"), (6, "unused variable"), (6, "count"),
]
# XTerm's fixed font and its default internal border.
CELL_W, CELL_H, BORDER = 6, 13, 2


def words_boxes(text, x, y, cell_w, cell_h):
    """The box of text drawn from (x, y) in a grid of cells."""
    return [text, x, y, cell_w * len(text), cell_h]


class Scene:
    """One program on a desktop; labels: [[text, x, y, w, h]] in root pixels."""

    def __init__(self, desk, proc, labels, window):
        self.desk = desk
        self.proc = proc
        self.labels = labels
        self.window = window

    def close(self):
        if self.proc.poll() is None:
            # Its own session (Children.start): its helpers go with it.
            try:
                os.killpg(self.proc.pid, 15)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()


def chromium(d, point=(500, 360)):
    """Chromium on labels.html; the page's boxes placed on the screen.

    point: where the pointer goes first, in the server's image pixels; the
    server's answer says where that is on the screen.
    """
    profile = os.path.join(d.tmp, "chromium-labels")
    proc = d.start(dk.chromium_argv(profile, LABELS_PAGE))
    window = d.wait_window(lambda t: t.startswith("labels ["), 60, "Chromium's labels page")
    spy = dk.TitleSpy(d.display, window)
    # A look first: the pointer's image coordinates refer to it.
    d.tool("screenshot")
    try:
        # A motion may come before Chromium takes pointer events; the next
        # point, a few pixels on, is a new motion.
        for attempt in range(10):
            spy.drain()
            point = (point[0] + 7, point[1] + 5)
            text, _, _ = d.tool("mouse_move", {"coordinate": list(point)})
            device = [int(v) for v in text.split("(", 1)[1].split(")", 1)[0].split(",")]
            try:
                title = spy.wait(lambda t: t.startswith("labels @ "), 3 + attempt,
                                 "the page's pointer report")
                break
            except dk.TaskFailed:
                if attempt == 9:
                    raise
    finally:
        spy.close()
    # Chromium adds " - Chromium" to the page's title.
    head, boxes = title.rsplit("]]", 1)[0].split(" [", 1)
    cx, cy = (int(v) for v in head.split(" @ ", 1)[1].split(","))
    ox, oy = device[0] - cx, device[1] - cy
    labels = [[t, ox + x, oy + y, w, h] for t, x, y, w, h in json.loads("[" + boxes + "]]")]
    return Scene(d, proc, labels, window)


def gtk(d):
    """The GTK window of gtk_labels.py; its labels as the toolkit placed them."""
    proc = d.children.start(["/usr/bin/python3", os.path.join(DATA, "gtk_labels.py")],
                            env=d.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    line = proc.stdout.readline()
    if not line:
        raise dk.TaskFailed("gtk_labels.py exited before showing its window")
    window = d.wait_window(lambda t: t == "gtk labels", 30, "the GTK labels window")
    return Scene(d, proc, json.loads(line), window)


def xterm(d, reverse=False):
    """An xterm (fixed font) showing XTERM_LINES; their boxes from its cell grid."""
    title = "xterm labels rv" if reverse else "xterm labels"
    script = "printf '%s\\n' " + " ".join("'" + line + "'" for line in XTERM_LINES) + \
        "; exec sleep 1000000"
    argv = ["xterm", "-T", title, "-geometry", "60x9+80+80", "-fn", "fixed"]
    if reverse:
        argv.append("-rv")
    proc = d.start(argv + ["-e", "sh", "-c", script])
    window = d.wait_window(lambda t: t == title, 30, "the xterm")
    x, y = dk.window_origin(d.display, window)
    labels = [words_boxes(text, x + BORDER + CELL_W * XTERM_LINES[row].find(text),
                          y + BORDER + row * CELL_H, CELL_W, CELL_H)
              for row, text in XTERM_LABELS]
    return Scene(d, proc, labels, window)


def overlaps(a, b):
    """Whether two [x, y, w, h] boxes share a pixel."""
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and \
        b[1] < a[1] + a[3]


__all__ = ["Scene", "chromium", "gtk", "xterm", "overlaps", "bench"]
