"""What the benchmarks and measurements in tools/bench/ share.

They import this module from tools/bench/lib (tests/apps/run-apps too,
through desk.py).  It owns:

  * the run's frame: BenchError (a failure reported as a message, not a
    traceback), Children (the long-running children, stopped on exit), log
    (progress on stderr, prefixed with PROGRAM, which each script sets),
    main (signals, the exit status), require_binary and write_json (the
    --json file);
  * the machine: ensure_packages (apt-get install of missing commands as
    root), start_xvfb and x_env (the private 1920x1080x24 Xvfb), and
    machine_info with its parts cpu_model, xvfb_version and xdotool_version;
  * the server: INITIALIZE_PARAMS, SCREENSHOT_PARAMS, StdioClient (the
    one MCP client: a request at a time, requests without waiting, and
    pipelined runs written by a thread while the replies are read),
    start_server, initialize, close_server and screenshot_image;
  * PNG: png_size and image_size (a base64 image's size), png_bytes_size,
    png_decode (8-bit RGB/RGBA, a band of rows) and png_encode (RGB rows);
  * the measurements: vm_hwm_kib (a live process's peak RSS), spawn_and_wait
    and peak_rss_kib (one short-lived process, timed or under GNU time),
    spawn_pipeline (commands piped into each other, timed, with the last
    one's output),
    percentile and summarize (the latency figures of a result record).

Standard library only.
"""

import base64
import itertools
import json
import os
import re
import select
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

# The name log puts before each line; each script sets its own.
PROGRAM = "bench"
SCREEN_WIDTH, SCREEN_HEIGHT = 1920, 1080
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
INITIALIZE_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}
SCREENSHOT_PARAMS = {"name": "screenshot", "arguments": {}}
# The most a client reads from a pipe at once.
READ_CHUNK = 1 << 20


class BenchError(Exception):
    """A failure that ends the benchmark with a message instead of a traceback."""


class Children:
    """Long-running children (Xvfb, X clients, the server, echo processes), stopped on exit."""

    def __init__(self):
        self.procs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop_all()

    def start(self, argv, **kwargs):
        """Start argv in its own session and remember it for stop_all."""
        proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
        self.procs.append(proc)
        return proc

    def stop_all(self):
        """Terminate every child still running, newest first; kill stragglers."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()


def log(message):
    """Progress goes to stderr so stdout holds only the report."""
    print(f"{PROGRAM}: {message}", file=sys.stderr, flush=True)


def main(parse_args, run, argv):
    """Entry point: turn SIGTERM/SIGHUP into a clean exit so children are stopped.

    Returns the exit status: 1 when run raised a BenchError, 130 on ^C.
    """
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda num, _frame: sys.exit(128 + num))
    args = parse_args(argv)
    try:
        run(args)
    except BenchError as exc:
        log(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    return 0


def write_json(path, data):
    """Write the raw numbers of a run (--json) as indented JSON."""
    with open(path, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2)
        out.write("\n")


def require_binary(path, skip_option=False):
    """Fail early, before any set-up, when the server binary is not there.

    skip_option: the script has --skip-server, which the message then suggests.
    """
    if not os.access(path, os.X_OK):
        hint = "build it, pass --binary, or use --skip-server" if skip_option else \
            "build it or pass --binary"
        raise BenchError(f"server binary not found: {path} ({hint})")


def ensure_packages(required, optional=None, also=(), quiet_stderr=False):
    """Install missing commands with apt-get as root, else explain and exit.

    required and optional map a command to the Debian package that provides
    it; also lists packages wanted whatever commands there are (the caller
    checked their files).  Optional packages are installed as root too, but
    their absence is not an error.  quiet_stderr discards apt-get's stderr
    as well as its stdout.
    """
    missing = sorted({pkg for cmd, pkg in required.items() if not shutil.which(cmd)})
    missing += also
    optional = sorted({pkg for cmd, pkg in (optional or {}).items() if not shutil.which(cmd)})
    can_install = os.geteuid() == 0 and shutil.which("apt-get")
    if missing and not can_install:
        install = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
        raise BenchError(f"missing packages: {' '.join(missing)}; install them with: "
                         f"sudo {shlex.join(install)}")
    wanted = missing + (optional if can_install else [])
    if not wanted:
        return
    install = ["apt-get", "install", "-y", "--no-install-recommends", *wanted]
    log(f"installing {' '.join(wanted)}")
    quiet = {"stdout": subprocess.DEVNULL,
             "env": dict(os.environ, DEBIAN_FRONTEND="noninteractive")}
    if quiet_stderr:
        quiet["stderr"] = subprocess.DEVNULL
    if subprocess.run(install, check=False, **quiet).returncode != 0:
        subprocess.run(["apt-get", "update"], check=False, **quiet)
        result = subprocess.run(install, check=False, **quiet)
        if result.returncode != 0 and missing:
            raise BenchError(f"could not install {' '.join(wanted)}")


def start_xvfb(children, width=SCREEN_WIDTH, height=SCREEN_HEIGHT):
    """Start Xvfb on a display number it picks itself; return the DISPLAY string.

    Always with -noreset: without it Xvfb resets whenever its last client
    leaves (the server, an xdotool process, a window that closes), and an X
    client connecting during a reset fails with "Can't open display" (seen
    once as an xterm that bench-input could not open).
    """
    read_fd, write_fd = os.pipe()
    try:
        children.start(["Xvfb", "-displayfd", str(write_fd), "-screen", "0",
                        f"{width}x{height}x24", "-nolisten", "tcp",
                        "-noreset"],
                       pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        os.close(write_fd)
        write_fd = None
        number = b""
        deadline = time.monotonic() + 15
        while not number.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([read_fd], [], [], remaining)[0]:
                raise BenchError("Xvfb did not report a display number within 15 s")
            chunk = os.read(read_fd, 16)
            if not chunk:
                raise BenchError("Xvfb exited before reporting a display number")
            number += chunk
        return f":{int(number)}"
    finally:
        os.close(read_fd)
        if write_fd is not None:
            os.close(write_fd)


def x_env(display):
    """The environment for an X client of our Xvfb."""
    return dict(os.environ, DISPLAY=display)


def cpu_model():
    """The CPU's model name from /proc/cpuinfo."""
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def xvfb_version(display):
    """The X server's vendor and release, as xdpyinfo reports them: "Xvfb (...)"."""
    fields = {}
    result = subprocess.run(["xdpyinfo"], env=x_env(display), capture_output=True,
                            text=True, check=False)
    for line in result.stdout.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    xserver = fields.get("vendor string", "unknown X server")
    release = fields.get("vendor release number", "")
    if release.isdigit() and "X.Org" in xserver:
        # X.Org packs 1.21.1.7 as 12101007.
        number = int(release)
        release = (f"{number // 10000000}.{number // 100000 % 100}."
                   f"{number // 1000 % 100}.{number % 1000}")
    return f"Xvfb ({xserver} {release})"


def xdotool_version(display):
    """What `xdotool version` prints, or why there is no such line."""
    if not shutil.which("xdotool"):
        return "xdotool not installed"
    return subprocess.run(["xdotool", "version"], env=x_env(display), capture_output=True,
                          text=True, check=False).stdout.strip() or "unknown xdotool"


def machine_info(display, **extra):
    """nproc, CPU model, kernel and X server version of this run, then extra."""
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu_model(),
        "kernel": os.uname().release,
        "xvfb": xvfb_version(display),
        "screen": f"{SCREEN_WIDTH}x{SCREEN_HEIGHT}x24",
        **extra,
    }


def png_size(b64_prefix):
    """(width, height) from the IHDR of a base64-encoded PNG (first 32 characters suffice)."""
    header = base64.b64decode(b64_prefix[:32])
    if header[:8] != PNG_SIGNATURE or header[12:16] != b"IHDR":
        raise BenchError(f"not a PNG: {b64_prefix[:32]!r}")
    return struct.unpack(">II", header[16:24])


def image_size(b64):
    """(width, height) of a base64-encoded PNG or JPEG (from its SOF0 segment)."""
    if b64.startswith("iVBOR"):
        return png_size(b64)
    data = base64.b64decode(b64)
    i = 2
    while i + 9 < len(data) and data[i] == 0xFF:
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    raise BenchError("image is neither a PNG nor a JPEG with a frame header")


def png_bytes_size(data):
    """(width, height) of PNG bytes, or a BenchError."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise BenchError(f"not a PNG: {data[:16]!r}")
    return struct.unpack(">II", data[16:24])


def png_chunks(data):
    """(type, body) of each chunk of PNG bytes, after checking the signature."""
    if data[:8] != PNG_SIGNATURE:
        raise BenchError(f"not a PNG: {data[:16]!r}")
    offset = 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        yield kind, data[offset + 8:offset + 8 + length]
        offset += 12 + length


def png_unfilter(kind, line, prior, bpp):
    """One PNG row's bytes from its filtered bytes and the row above (RFC 2083, 6.2-6.6)."""
    stride = len(line)
    if kind == 0:
        return bytes(line)
    if kind == 1:  # Sub: each channel is a running sum, modulo 256.
        out = bytearray(stride)
        for channel in range(bpp):
            out[channel::bpp] = bytes(map(_LOW_BYTE, itertools.accumulate(line[channel::bpp])))
        return bytes(out)
    if kind == 2:  # Up: bytewise sums without carries, on whole rows as integers.
        low = int.from_bytes(b"\x7f" * stride, "little")
        a, b = int.from_bytes(line, "little"), int.from_bytes(prior, "little")
        return (((a & low) + (b & low)) ^ ((a ^ b) & ~low)).to_bytes(stride, "little")
    out = bytearray(line)
    for i in range(stride):
        left = out[i - bpp] if i >= bpp else 0
        up = prior[i]
        if kind == 3:
            out[i] = (out[i] + (left + up) // 2) & 255
            continue
        corner = prior[i - bpp] if i >= bpp else 0
        estimate = left + up - corner
        pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
        pick = left if pa <= pb and pa <= pc else up if pb <= pc else corner
        out[i] = (out[i] + pick) & 255
    return bytes(out)


_LOW_BYTE = (255).__and__


def png_decode(data, first=0, last=None):
    """(width, height, rows first..last as RGB bytes) of an 8-bit RGB or RGBA PNG.

    Non-interlaced only, which is what the server and ImageMagick write.
    Decoding starts at the nearest row at or above `first` whose filter does
    not read the row above (None or Sub), so a server PNG (Sub rows) gives
    one row without the whole image.  Alpha is dropped.
    """
    header, idat = None, []
    for kind, body in png_chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"IDAT":
            idat.append(body)
    if header is None:
        raise BenchError("a PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise BenchError(f"a PNG this decoder does not read: depth {depth}, colour type "
                         f"{colour}, interlace {interlace}")
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    last = height - 1 if last is None else last
    start = first
    while start > 0 and raw[start * (stride + 1)] not in (0, 1):
        start -= 1
    rows, prior = [], bytes(stride)
    for y in range(start, last + 1):
        offset = y * (stride + 1)
        prior = png_unfilter(raw[offset], raw[offset + 1:offset + 1 + stride], prior, bpp)
        if y >= first:
            if bpp == 4:
                rgb = bytearray(width * 3)
                for channel in range(3):
                    rgb[channel::3] = prior[channel::4]
                rows.append(bytes(rgb))
            else:
                rows.append(prior)
    return width, height, rows


def png_encode(width, height, rows):
    """PNG bytes of 8-bit RGB rows (no filter, zlib level 6)."""
    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))
    raw = b"".join(b"\x00" + row for row in rows)
    return (PNG_SIGNATURE
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def screenshot_image(reply):
    """The base64 image data of a screenshot reply, after checking its shape."""
    result = reply.get("result", {})
    content = result.get("content") or [{}]
    if result.get("isError") or content[0].get("type") != "image":
        raise BenchError(f"screenshot did not return an image: {json.dumps(reply)[:300]}")
    return content[0]["data"]


def vm_hwm_kib(pid):
    """Peak resident set size (VmHWM) of a live process, in KiB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise BenchError(f"no VmHWM in /proc/{pid}/status")


class StdioClient:
    """Newline-delimited JSON-RPC over a child's stdin/stdout pipes.

    Reads go straight to the file descriptor into our own buffer, so the
    sequential calls and the pipelined runs share one view of the stream.
    Replies to ids nobody is waiting for (the hold_key's, while screenshots
    are timed) are kept in `stray` by id.  name is what messages call the
    child.
    """

    def __init__(self, proc, timeout, name="server"):
        self.proc = proc
        self.timeout = timeout
        self.name = name
        self.in_fd = proc.stdin.fileno()
        self.out_fd = proc.stdout.fileno()
        self.buf = bytearray()
        self.next_id = 0
        self.stray = {}
        self.stray_times = {}
        self.timed_out = False

    @property
    def last_id(self):
        """The id of the latest request."""
        return self.next_id

    def new_id(self):
        """A fresh request id (ids are never reused within a session)."""
        self.next_id += 1
        return self.next_id

    def kill_on_timeout(self):
        """Watchdog action: the reply is overdue, so kill the child."""
        self.timed_out = True
        self.proc.kill()

    def watchdog(self, seconds=None):
        """A started timer that kills the child after seconds (default: the timeout)."""
        timer = threading.Timer(self.timeout if seconds is None else seconds,
                                self.kill_on_timeout)
        timer.daemon = True
        timer.start()
        return timer

    def send_bytes(self, data):
        """Write bytes straight to the pipe (no Python buffering)."""
        view = memoryview(data)
        while view:
            view = view[os.write(self.in_fd, view):]

    def send(self, message):
        """Write one message as a single line."""
        try:
            self.send_bytes(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        except BrokenPipeError as exc:
            raise BenchError(self.lost_reason(message.get("method", "a request"))) from exc

    def notify(self, method):
        """Send a notification (no reply expected)."""
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method, params):
        """Send a request without waiting; return its id."""
        request_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def lost_reason(self, what):
        """Why stdout closed before what was complete."""
        if self.timed_out:
            return f"{self.name}: no reply to {what} within {self.timeout:g} s; killed"
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return f"{self.name} closed stdout during {what} but kept running"
        return f"{self.name} exited with status {status} during {what} (its stderr is above)"

    def read_line(self, what):
        """The next whole line from the child (with its newline)."""
        while True:
            end = self.buf.find(b"\n")
            if end >= 0:
                line = bytes(self.buf[:end + 1])
                del self.buf[:end + 1]
                return line
            chunk = os.read(self.out_fd, READ_CHUNK)
            if not chunk:
                raise BenchError(self.lost_reason(what))
            self.buf += chunk

    def parse(self, line):
        """A reply line as JSON, or a BenchError."""
        try:
            return json.loads(line)
        except ValueError as exc:
            raise BenchError(f"{self.name} wrote a line that is not JSON: {line[:200]!r}") \
                from exc

    def wait_reply(self, request_id, what, start=None):
        """Read until the reply to request_id; return (ns since start, line bytes, reply).

        Replies to other ids are stored in `stray`; notifications are skipped.
        The clock stops as soon as the line is read; JSON parsing comes after.
        """
        if request_id in self.stray:
            end, line = self.stray_times.pop(request_id), b""
            reply = self.stray.pop(request_id)
        else:
            while True:
                line = self.read_line(what)
                end = time.perf_counter_ns()
                reply = self.parse(line)
                if reply.get("id") == request_id:
                    break
                if "id" in reply:
                    if reply["id"] in self.stray:
                        raise BenchError(f"{self.name} answered id {reply['id']} twice")
                    self.stray[reply["id"]] = reply
                    self.stray_times[reply["id"]] = end
        if "error" in reply:
            raise BenchError(f"{what} failed: {json.dumps(reply['error'])}")
        return (end - start if start else 0), len(line), reply

    def call(self, method, params, what=None, watch=True):
        """Send a request and wait for its reply; return (ns, line bytes, reply).

        With watch, a watchdog thread bounds the wait; series of short calls
        pass watch=False and run under one watchdog of their own instead, so
        no timer thread starts during the timed calls.
        """
        what = what or method
        timer = self.watchdog() if watch else None
        try:
            start = time.perf_counter_ns()
            request_id = self.request(method, params)
            return self.wait_reply(request_id, what, start)
        finally:
            if timer:
                timer.cancel()

    def pipelined(self, payload, count, what):
        """Write payload (count request lines) from a thread while reading the replies.

        Returns (ns from the first write to the last reply line, the reply
        lines, the number of reads that returned data).  Counting newlines is
        all the reading thread does while the clock runs; lines are split and
        parsed afterwards.  Should the stream carry notifications, reading
        goes on until count lines with an id have come.
        """
        outcome = {}

        def writer():
            outcome["first_write"] = time.perf_counter_ns()
            try:
                self.send_bytes(payload)
            except OSError as exc:
                outcome["write_error"] = exc
            outcome["written"] = time.perf_counter_ns()

        thread = threading.Thread(target=writer, name=f"writer-{what}", daemon=True)
        chunks = [bytes(self.buf)]
        self.buf.clear()
        newlines = chunks[0].count(b"\n")
        need = count
        reads = 0
        timer = self.watchdog()
        try:
            start = time.perf_counter_ns()
            thread.start()
            while True:
                while newlines < need:
                    chunk = os.read(self.out_fd, READ_CHUNK)
                    if not chunk:
                        thread.join(5)
                        raise BenchError(self.lost_reason(
                            f"{count} pipelined {what} ({newlines} lines read)"))
                    chunks.append(chunk)
                    newlines += chunk.count(b"\n")
                    reads += 1
                end = time.perf_counter_ns()
                data = b"".join(chunks)
                lines = data.split(b"\n")
                with_id = sum(1 for line in lines if b'"id"' in line)
                if with_id >= count:
                    break
                need = newlines + (count - with_id)
        finally:
            timer.cancel()
        thread.join(self.timeout)
        start = outcome.get("first_write", start)
        if "write_error" in outcome:
            raise BenchError(f"writing to {self.name} failed: {outcome['write_error']}")
        self.buf += lines[-1]
        return end - start, [line for line in lines[:-1] if line], reads


def server_env(display, tmp, save_dir=None):
    """The server's environment: our Xvfb, a lock and saves in tmp, no screenshot delay.

    And no pacing (CU_PACE_QUIET_MS=0): the benchmarks send input calls back
    to back, which pacing spaces by design (docs/input.md, "Pacing"), and
    they time the path itself; tools/bench/bench-apps measures pacing.
    """
    return dict(x_env(display), CU_LOCK_PATH=os.path.join(tmp, "lock"),
                CU_SAVE_DIR=save_dir or tmp, CU_SCREENSHOT_DELAY="0", CU_PACE_QUIET_MS="0")


def initialize(client):
    """The MCP handshake: initialize, then notifications/initialized; return serverInfo."""
    _, _, init = client.call("initialize", INITIALIZE_PARAMS)
    server_info = init.get("result", {}).get("serverInfo", {})
    client.notify("notifications/initialized")
    return server_info


def start_server(children, binary, env, timeout, stderr=None):
    """Start the server on pipes and initialize it; return (proc, StdioClient, serverInfo).

    stderr: as subprocess takes it (None: this script's).
    """
    proc = children.start([binary], env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, bufsize=1 << 20, stderr=stderr)
    client = StdioClient(proc, timeout)
    return proc, client, initialize(client)


def close_server(proc):
    """Close the server's stdin and wait for it to exit; return its exit status."""
    proc.stdin.close()
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired as exc:
        raise BenchError("server did not exit within 10 s of stdin closing") from exc


def spawn_and_wait(argv, env, timeout):
    """Run argv once with stdout discarded; return its wall time in ns.

    The process is spawned straight from here, as a Python server's
    subprocess call would; a pidfd bounds the wait without racing the reap.
    stderr goes to a temporary file, quoted in the error should argv fail.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    errors = tempfile.TemporaryFile()
    try:
        start = time.perf_counter_ns()
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 1),
            (os.POSIX_SPAWN_DUP2, errors.fileno(), 2),
        ])
    finally:
        os.close(devnull)
    with errors:
        pidfd = os.pidfd_open(pid)
        try:
            if not select.select([pidfd], [], [], timeout)[0]:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise BenchError(f"`{shlex.join(argv)}` took longer than {timeout:g} s; killed")
            _, status = os.waitpid(pid, 0)
            end = time.perf_counter_ns()
        finally:
            os.close(pidfd)
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            message = errors.read(500).decode(errors="replace").strip()
            raise BenchError(f"`{shlex.join(argv)}` failed with status "
                             f"{os.waitstatus_to_exitcode(status)}: {message or 'no message'}")
    return end - start


def spawn_pipeline(argvs, env, timeout, limit=256 << 20):
    """Run a pipeline of commands, as `a | b | c` would; return (ns, last stdout).

    The first command reads /dev/null, each one's stdout is the next one's
    stdin, and the last one's stdout is read here (at most limit bytes).  The
    clock runs from the first spawn until every process has exited, each
    spawned straight from here as spawn_and_wait does (no shell).  Any
    command failing, or the whole taking longer than timeout, is a
    BenchError quoting the stderr of all of them.
    """
    what = " | ".join(shlex.join(argv) for argv in argvs)
    devnull = os.open(os.devnull, os.O_RDONLY)
    errors = tempfile.TemporaryFile()
    pids = []
    # os.pipe's descriptors are not inherited; dup2 makes each child's 0 and 1.
    read_fd, write_fd = devnull, None
    out_fd = None
    try:
        start = time.perf_counter_ns()
        for index, argv in enumerate(argvs):
            next_read, write_fd = os.pipe()
            try:
                pids.append(os.posix_spawnp(argv[0], argv, env, file_actions=[
                    (os.POSIX_SPAWN_DUP2, read_fd, 0),
                    (os.POSIX_SPAWN_DUP2, write_fd, 1),
                    (os.POSIX_SPAWN_DUP2, errors.fileno(), 2),
                ]))
            except OSError as exc:
                os.close(next_read)
                raise BenchError(f"cannot run `{shlex.join(argv)}`: {exc}") from exc
            os.close(write_fd)
            write_fd = None
            if read_fd != devnull:
                os.close(read_fd)
            read_fd = next_read
            if index == len(argvs) - 1:
                out_fd, read_fd = next_read, devnull
        chunks = []
        size = 0
        deadline = start + int(timeout * 1e9)
        while True:
            remaining = (deadline - time.perf_counter_ns()) / 1e9
            if remaining <= 0 or not select.select([out_fd], [], [], remaining)[0]:
                raise BenchError(f"`{what}` took longer than {timeout:g} s; killed")
            chunk = os.read(out_fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise BenchError(f"`{what}` wrote more than {limit} bytes")
            chunks.append(chunk)
        statuses = []
        while pids:
            _, status = os.waitpid(pids[0], 0)
            pids.pop(0)
            statuses.append(os.waitstatus_to_exitcode(status))
        end = time.perf_counter_ns()
        if any(statuses):
            errors.seek(0)
            message = errors.read(500).decode(errors="replace").strip()
            raise BenchError(f"`{what}` failed with status {statuses}: {message or 'no message'}")
        return end - start, b"".join(chunks)
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        for fd in {devnull, read_fd, out_fd} - {None}:
            os.close(fd)
        if write_fd is not None:
            os.close(write_fd)
        errors.close()


def peak_rss_kib(argv, env, rss_file, timeout):
    """Run argv once under GNU time; return its ru_maxrss in KiB.

    os.wait4 from here would not do: a child spawned straight from this
    Python process keeps Python's own high-water mark in ru_maxrss.  GNU
    time is small enough that its child's figure is the child's own.
    """
    spawn_and_wait([shutil.which("time"), "-f", "%M", "-o", rss_file, *argv], env, timeout)
    with open(rss_file, encoding="ascii") as rss:
        return int(rss.read().split()[-1])


class WrittenTimes:
    """Reads a debug-logging server's stderr on a thread of its own: the time
    from reading each tools/call to writing the answer's last byte, by id.
    Other lines than debug ones go on to this script's stderr."""

    PATTERN = re.compile(r"tools/call \S+ \(id (\d+)\) written ([0-9.]+) ms after it was read")

    def __init__(self, stream):
        self.ms = {}
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for raw in stream:
            line = raw.decode(errors="replace")
            match = self.PATTERN.search(line)
            if match:
                with self.cond:
                    self.ms[int(match.group(1))] = float(match.group(2))
                    self.cond.notify_all()
            elif ": debug: " not in line:
                sys.stderr.write(line)

    def of(self, ids, timeout=10):
        """The times of these request ids, once all have been logged."""
        with self.cond:
            if not self.cond.wait_for(lambda: all(i in self.ms for i in ids), timeout):
                raise BenchError("the server did not log when some answers were written")
            return [self.ms[i] for i in ids]


def percentile(values, fraction):
    """Linear-interpolated percentile (fraction in [0, 1]) of a non-empty list."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(record):
    """Add p50/p90/mean ms, mean reply bytes (if recorded) and peak RSS MiB to a record."""
    times_ms = [t / 1e6 for t in record["times_ns"]]
    record["p50_ms"] = percentile(times_ms, 0.5)
    record["p90_ms"] = percentile(times_ms, 0.9)
    record["mean_ms"] = statistics.fmean(times_ms)
    if "reply_bytes" in record:
        record["mean_reply_bytes"] = statistics.fmean(record["reply_bytes"])
    record["peak_rss_mib"] = record["peak_rss_kib"] / 1024
    if record.get("server_ms"):
        record["server_p50_ms"] = percentile(record["server_ms"], 0.5)
    return record
