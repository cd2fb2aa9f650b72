"""A desktop with real programs, for tests/apps/run-apps and tools/bench/bench-apps.

It owns: a private 1920x1080 Xvfb with openbox, the programs an agent drives
(Debian's chromium, mousepad, gtk3-widget-factory), the server on pipes, and
what the tasks read outside the server: window titles through xprop, followed
with `xprop -spy` so a wait ends on the property change itself, never on a
sleep.

Standard library only; the X side uses x11-utils' xprop.
"""

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402  (Xvfb, children, the stdio client)

BenchError = bench.BenchError


class TaskFailed(Exception):
    """What a task saw that it did not expect; the run counts as failed."""


def xprop(display, *args):
    """xprop's output, or '' when the window went away."""
    out = subprocess.run(["xprop", "-display", display, *args], capture_output=True,
                         text=True, timeout=10)
    return out.stdout if out.returncode == 0 else ""


def parse_window_ids(text):
    """The window ids of an xprop WINDOW list property line."""
    if "#" not in text:
        return []
    return [int(w.strip().rstrip(","), 16) for w in text.split("#", 1)[1].split(",")
            if w.strip().startswith("0x")]


def wm_name(display, window):
    """The window's _NET_WM_NAME (UTF-8), else WM_NAME, or None."""
    for prop in ("_NET_WM_NAME", "WM_NAME"):
        line = xprop(display, "-id", hex(window), prop)
        if "=" in line:
            value = line.split("=", 1)[1].strip()
            try:
                return json.loads(value)
            except ValueError:
                return value.strip('"')
    return None


def client_windows(display):
    """The window manager's client list."""
    return parse_window_ids(xprop(display, "-root", "_NET_CLIENT_LIST"))


def window_origin(display, window):
    """The window's top-left corner on the root, from xwininfo."""
    out = subprocess.run(["xwininfo", "-display", display, "-id", hex(window)],
                         capture_output=True, text=True, timeout=10).stdout
    x = y = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Absolute upper-left X:"):
            x = int(line.split(":")[1])
        elif line.startswith("Absolute upper-left Y:"):
            y = int(line.split(":")[1])
    if x is None or y is None:
        raise TaskFailed(f"xwininfo knows no window {window:#x}")
    return x, y


def clipboard_text(display, pred, timeout):
    """The CLIPBOARD's text once pred holds (xclip asks its owner), or the last text read.

    X tells nobody but the owners when the selection changes hands (short of
    XFixes, which no command-line tool here reads), so this asks again, with
    backoff, until the deadline.
    """
    deadline = time.monotonic() + timeout
    delay = 0.02
    text = None
    while True:
        out = subprocess.run(["xclip", "-display", display, "-o", "-selection", "clipboard"],
                             capture_output=True, timeout=10)
        if out.returncode == 0:
            text = out.stdout.decode("utf-8", "replace")
            if pred(text):
                return text
        if time.monotonic() > deadline:
            return text
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


class TitleSpy:
    """Follows one window's title with `xprop -spy`: each change is a line."""

    def __init__(self, display, window):
        self.window = window
        self.proc = subprocess.Popen(
            ["xprop", "-display", display, "-id", hex(window), "-spy", "_NET_WM_NAME"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.buf = b""
        self.title = None
        self.seen = []

    def _lines(self, timeout):
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], max(0, timeout))[0]:
            return False
        chunk = os.read(fd, 65536)
        if not chunk:
            raise TaskFailed(f"window {self.window:#x} went away")
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            text = line.decode("utf-8", "replace")
            if "=" in text:
                value = text.split("=", 1)[1].strip()
                try:
                    self.title = json.loads(value)
                except ValueError:
                    self.title = value.strip('"')
                self.seen.append(self.title)
        return True

    def wait(self, pred, timeout=10, what="the title"):
        """Until pred(title) holds; the titles seen are in the failure."""
        deadline = time.monotonic() + timeout
        while True:
            if self.title is not None and pred(self.title):
                return self.title
            left = deadline - time.monotonic()
            if left <= 0:
                raise TaskFailed(f"{what}: titles seen {self.seen[-6:]!r}")
            self._lines(left)

    def drain(self):
        """Reads every change already reported; returns the title now."""
        while self._lines(0):
            pass
        return self.title

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def page_origin(move_to, spy):
    """Where tests/apps/data/page.html's page sits on the screen, in device pixels.

    move_to(point) is a mouse_move through a server, returning its answer's
    text ("moved to (dx, dy)"); the page adds where the pointer landed to its
    title ("ready - @ 12,34"). A motion can be lost (Chromium, loaded, may
    not take pointer events yet) or reported late, so the pointer moves on
    to new points until two reports in a row moved as the pointer did: then
    each report is the motion it follows, and the page's origin is the
    difference.
    """
    def parse(text):
        return [int(v) for v in text.split("(", 1)[1].split(")", 1)[0].split(",")[:2]]

    last = None
    for attempt in range(12):
        spy.drain()
        seen = len(spy.seen)
        device = parse(move_to([500 + 9 * attempt, 400 + 5 * attempt]))
        try:
            spy.wait(lambda t: len(spy.seen) > seen and " @ " in t, 3 + attempt,
                     "the page's pointer report")
        except TaskFailed:
            last = None
            continue
        client = [int(v) for v in spy.title.split(" @ ", 1)[1].split()[0].split(",")[:2]]
        if last is not None and [device[0] - last[0][0], device[1] - last[0][1]] == \
                [client[0] - last[1][0], client[1] - last[1][1]]:
            return device[0] - client[0], device[1] - client[1]
        last = (device, client)
    raise TaskFailed(f"the page's pointer report: titles seen {spy.seen[-6:]!r}")


class Desk:
    """Xvfb + openbox + the server; programs started on it are stopped with it."""

    def __init__(self, binary, toolsets="", env_extra=None, server_stderr=None, size=None):
        """size: the screen's (width, height), 1920x1080 by default; binary None: no server."""
        self.children = bench.Children()
        self.tmp = tempfile.mkdtemp(prefix="cu-apps-")
        self.display = bench.start_xvfb(self.children, *(size or ()))
        self.env = dict(bench.x_env(self.display), HOME=self.tmp,
                        XDG_CONFIG_HOME=os.path.join(self.tmp, "config"),
                        XDG_CACHE_HOME=os.path.join(self.tmp, "cache"),
                        XDG_DATA_HOME=os.path.join(self.tmp, "data"),
                        GSETTINGS_BACKEND="memory", NO_AT_BRIDGE="1",
                        GTK_A11Y="none")
        self.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.wm = self.children.start(["openbox", "--sm-disable"], env=self.env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_for(lambda: "_NET_SUPPORTING_WM_CHECK" in
                      xprop(self.display, "-root", "_NET_SUPPORTING_WM_CHECK")
                      and "window id" in xprop(self.display, "-root",
                                               "_NET_SUPPORTING_WM_CHECK"),
                      10, "openbox did not start")
        self.server = self.client = None
        if binary is None:
            return
        senv = bench.server_env(self.display, self.tmp)
        # The defaults an agent's host gets: the settle before a look, pacing.
        senv.pop("CU_SCREENSHOT_DELAY", None)
        senv.pop("CU_PACE_QUIET_MS", None)
        if toolsets:
            senv["CU_TOOLSETS"] = toolsets
        senv.update(env_extra or {})
        self.server, self.client, _ = bench.start_server(self.children, binary, senv, 60,
                                                         stderr=server_stderr)

    def wait_for(self, pred, timeout, message):
        """Polls an outside fact that has no event to follow (a WM's start-up)."""
        deadline = time.monotonic() + timeout
        delay = 0.01
        while not pred():
            if time.monotonic() > deadline:
                raise BenchError(message)
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def start(self, argv, **kwargs):
        return self.children.start(argv, env=kwargs.pop("env", self.env),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)

    def wait_window(self, pred, timeout=30, what="window"):
        """The first client window whose title satisfies pred."""
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            for w in client_windows(self.display):
                t = wm_name(self.display, w)
                if t is not None and pred(t):
                    return w
            if time.monotonic() > deadline:
                names = [wm_name(self.display, w) for w in client_windows(self.display)]
                raise TaskFailed(f"no {what} appeared; windows: {names!r}")
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def tool(self, name, arguments=None, ok=True):
        """Calls a tool; returns (text, structuredContent, result). ok: isError is a failure."""
        _, _, reply = self.client.call("tools/call", {"name": name,
                                                      "arguments": arguments or {}})
        result = reply["result"]
        text = "\n".join(b.get("text", "") for b in result.get("content", [])
                         if b.get("type") == "text")
        if ok and result.get("isError"):
            raise TaskFailed(f"{name} {json.dumps(arguments)[:200]} failed: {text}")
        return text, result.get("structuredContent"), result

    def look(self):
        """A screenshot, as an agent looks before it acts; returns the image size."""
        _, _, result = self.tool("screenshot")
        return result

    def close(self):
        try:
            if self.server is not None and self.server.poll() is None:
                bench.close_server(self.server)
        finally:
            self.children.stop_all()
            shutil.rmtree(self.tmp, ignore_errors=True)


CHROMIUM_FLAGS = ["--no-sandbox", "--no-first-run", "--no-default-browser-check",
                  "--disable-gpu", "--disable-dev-shm-usage", "--password-store=basic",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-features=Translate,MediaRouter",
                  "--window-position=0,0", "--window-size=1280,900"]


def chromium_argv(profile, url):
    return ["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url]
