#!/usr/bin/python3
"""A GTK3 window that records what reaches it, for tests/serve/readme-pipeline.

Usage: gtk_recorder.py. It shows a text view filling a 1920x1080 window at
0,0 and prints "ready" once its window has been drawn, so a test starts only
then; after that, one JSON object a line, each button press it receives
({"press": button, "x": x_root, "y": y_root, "ctrl": bool}) and the view's
whole text after every change ({"text": "..."}).
"""
import json
import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402


def main():
    def record(entry):
        print(json.dumps(entry, ensure_ascii=False), flush=True)

    window = Gtk.Window(title="recorder")
    window.set_default_size(1920, 1080)
    window.move(0, 0)
    view = Gtk.TextView()
    buffer = view.get_buffer()

    def on_press(_, event):
        record({"press": event.button, "x": int(event.x_root), "y": int(event.y_root),
                "ctrl": bool(event.state & Gdk.ModifierType.CONTROL_MASK)})
        return False

    view.connect("button-press-event", on_press)
    buffer.connect("changed", lambda b: record(
        {"text": b.get_text(b.get_start_iter(), b.get_end_iter(), True)}))
    window.add(view)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    view.grab_focus()
    # Ready once the frame clock has painted the window (it is on the screen).
    clock = window.get_frame_clock()
    painted = []

    def on_paint(_):
        if not painted:
            painted.append(clock.disconnect(handler))
            print("ready", flush=True)

    handler = clock.connect("after-paint", on_paint)
    window.queue_draw()
    Gtk.main()


if __name__ == "__main__":
    main()
