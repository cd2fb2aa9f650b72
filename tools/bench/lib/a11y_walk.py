#!/usr/bin/python3
"""a11y_walk.py APP [ROUNDS]: walks APP's accessibility tree ROUNDS times
(default 20) with Debian's python3-pyatspi, reading per element what
bench_a11y reads (role name, name, states, a Value's number or a text
field's text, action names, screen extents), and prints one line of JSON in
bench_a11y's shape.

a11y_walk.py --serve APP: a walker that walks on command, so that
tools/bench/bench-a11y can interleave its walks with the server's get_app_state
round by round while this process holds nothing but pyatspi (its peak RSS
is pyatspi's). Each line "walk" on stdin is answered on stdout by one line
of JSON, {"ms": ..., "elements": ...}; the process ends at end of input.

The yardstick of tools/bench/bench-a11y (docs/a11y.md). Run it with
/usr/bin/python3: pyatspi is a Debian package, not a pip one.
"""

import json
import resource
import sys
import time

import pyatspi

TEXT_ROLES = {
    pyatspi.ROLE_ENTRY, pyatspi.ROLE_TEXT, pyatspi.ROLE_SPIN_BUTTON,
    pyatspi.ROLE_COMBO_BOX, pyatspi.ROLE_EDITBAR, pyatspi.ROLE_PARAGRAPH,
}
MAX_NODES, MAX_DEPTH, MAX_TEXT = 2000, 64, 200


def find_app(name):
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None and app.name.lower() == name.lower():
            return app
    raise SystemExit("a11y_walk: no application %r" % name)


def walk(app):
    out = []

    def visit(node, depth):
        if len(out) >= MAX_NODES:
            return
        role = node.getRole()
        e = {"role": node.getRoleName(), "name": node.name[:MAX_TEXT],
             "states": [pyatspi.stateToString(s) for s in node.getState().getStates()]}
        try:
            e["value"] = str(node.queryValue().currentValue)
        except NotImplementedError:
            if role in TEXT_ROLES:
                try:
                    e["value"] = node.queryText().getText(0, MAX_TEXT + 1)[:MAX_TEXT]
                except NotImplementedError:
                    pass
        try:
            action = node.queryAction()
            e["actions"] = [action.getName(i) for i in range(action.nActions)]
        except NotImplementedError:
            pass
        try:
            ext = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            e["frame"] = (ext.x, ext.y, ext.width, ext.height)
        except NotImplementedError:
            pass
        out.append(e)
        if depth >= MAX_DEPTH:
            return
        for i in range(node.childCount):
            child = node.getChildAtIndex(i)
            if child is not None:
                visit(child, depth + 1)

    visit(app, 0)
    return out


def timed_walk(name):
    """One round: find the application, walk it; return (ms, elements)."""
    t0 = time.perf_counter()
    app = find_app(name)
    # pyatspi's objects cache what they were told; clear it, as bench_a11y
    # and get_app_state read the tree afresh each time.
    app.clearCache()
    elements = len(walk(app))
    return (time.perf_counter() - t0) * 1000, elements


def serve(name):
    for line in sys.stdin:
        if line.strip() != "walk":
            raise SystemExit("a11y_walk: unknown command %r" % line.strip())
        ms, elements = timed_walk(name)
        print(json.dumps({"ms": round(ms, 3), "elements": elements}), flush=True)


def main():
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
        return
    name = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    times = []
    elements = 0
    for _ in range(rounds):
        ms, elements = timed_walk(name)
        times.append(ms)
    rest = sorted(times[1:] or times)
    print(json.dumps({
        "walker": "python3-pyatspi", "elements": elements, "rounds": rounds,
        "first_ms": round(times[0], 2), "p50_ms": round(rest[len(rest) // 2], 2),
        "min_ms": round(rest[0], 2), "max_ms": round(rest[-1], 2),
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    main()
