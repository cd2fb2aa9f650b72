#!/usr/bin/python3
"""A GTK3 window holding one text view, for tools/bench/measure-typing.

Usage: gtk_text_app.py OUT. The window is 600x400 at the top-left of the
screen. On SIGUSR1 it writes what the text view holds to OUT and prints
"saved" (after any key events already waiting: the save has a lower
priority); on SIGUSR2 it empties the view and prints "cleared". It prints
"ready" once shown.
"""
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def main():
    out = sys.argv[1]
    window = Gtk.Window(title="cu-typing-gtk")
    window.set_default_size(600, 400)
    window.move(0, 0)
    view = Gtk.TextView()
    window.add(view)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()

    def save():
        buffer = view.get_buffer()
        text = buffer.get_text(buffer.get_start_iter(), buffer.get_end_iter(), True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        print("saved", flush=True)
        return True

    def clear():
        view.get_buffer().set_text("")
        print("cleared", flush=True)
        return True

    GLib.unix_signal_add(GLib.PRIORITY_LOW, signal.SIGUSR1, save)
    GLib.unix_signal_add(GLib.PRIORITY_LOW, signal.SIGUSR2, clear)
    GLib.idle_add(lambda: print("ready", flush=True) and False)
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
