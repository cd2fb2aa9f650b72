#!/usr/bin/python3
"""Headless Chromium driven through the DevTools protocol on a pipe
(--remote-debugging-pipe: commands on the child's fd 3, replies and events
on its fd 4, each message JSON ended by a NUL byte), with the standard
library only. The viewer's tests open a page, wait on the page's own promise
(window.cuPainted) rather than on time, and take a screenshot of exactly
what it drew.

  cdp.py URL OUT.png [WIDTH HEIGHT]   a screenshot of URL once it is painted
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, width=1400, height=1000):
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="cu-viewer-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # The child reads commands on fd 3 and writes on fd 4.
        self.proc = subprocess.Popen(
            [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--force-device-scale-factor=1", "--remote-debugging-pipe",
             f"--window-size={width},{height}", f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(to_child_r, 3), os.dup2(from_child_w, 4)))
        os.close(to_child_r)
        os.close(from_child_w)
        self.next_id = 0
        self.buf = b""
        self.events = []

    def close(self):
        try:
            self.send("Browser.close")
        except (OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None):
        """The result of one command; events read meanwhile are kept."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, session):
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method and e.get("sessionId") == session:
                    return self.events.pop(i)
            m = self._read()
            if "method" in m:
                self.events.append(m)

    def open(self, url):
        """A new tab showing url, once loaded: (page, the URLs it requested)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False}, s)
        self.send("Network.enable", {}, s)
        self.send("Runtime.enable", {}, s)
        self.send("Page.enable", {}, s)
        self.events = [e for e in self.events if e.get("sessionId") != s]
        self.send("Page.navigate", {"url": url}, s)
        self.wait_event("Page.loadEventFired", s)
        return Page(self, target, s)


class Page:
    def __init__(self, browser, target, session):
        self.b, self.target, self.s = browser, target, session

    def eval(self, expression):
        """The value of a JavaScript expression, a promise awaited."""
        r = self.b.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                             "returnByValue": True}, self.s)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path):
        data = self.b.send("Page.captureScreenshot", {"format": "png"}, self.s)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def requests(self):
        """Every URL the page asked for, its own document included."""
        return [e["params"]["request"]["url"] for e in self.b.events
                if e.get("sessionId") == self.s and e["method"] == "Network.requestWillBeSent"]

    def wait(self, promise, seconds=30):
        """The value a page's promise settles with, or "no answer in N s":
        a deadline for a page that broke, not a wait for it to work."""
        return self.eval(f"Promise.race([{promise}, new Promise(r => setTimeout("
                         f"() => r('no answer in {seconds} s'), {seconds * 1000}))])")

    def errors(self):
        """The page's uncaught exceptions so far."""
        out = []
        for e in self.b.events:
            if e.get("sessionId") == self.s and e["method"] == "Runtime.exceptionThrown":
                d = e["params"]["exceptionDetails"]
                out.append(d.get("exception", {}).get("description") or d.get("text"))
        return out

    def close(self):
        self.b.send("Target.closeTarget", {"targetId": self.target})


def main(argv):
    if len(argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        return 2
    size = (int(argv[3]), int(argv[4])) if len(argv) == 5 else (1400, 1000)
    b = Browser(*size)
    try:
        page = b.open(argv[1])
        page.wait("window.cuPainted")
        page.screenshot(argv[2])
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
