#!/usr/bin/python3
"""A GTK3 program for the windows toolset's tests (tests/x11/test_windows.cpp).

Usage: gtk_windows.py TAG [--refuse-close]. It shows a main window titled
"cu-gtk-main-TAG" (400x300) and a dialog "cu-gtk-dialog-TAG" transient for
it. When asked to close the main window (WM_DELETE_WINDOW) it prints
"delete-requested" and, with --refuse-close, stays open, as a program with
unsaved work would; otherwise it quits.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402


def main():
    tag = sys.argv[1]
    refuse = "--refuse-close" in sys.argv[2:]
    window = Gtk.Window(title="cu-gtk-main-" + tag)
    window.set_default_size(400, 300)
    window.add(Gtk.Label(label="main"))

    def on_delete(*_):
        print("delete-requested", flush=True)
        return refuse

    window.connect("delete-event", on_delete)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    dialog = Gtk.Window(title="cu-gtk-dialog-" + tag)
    dialog.set_transient_for(window)
    dialog.set_type_hint(1)  # Gdk.WindowTypeHint.DIALOG
    dialog.set_default_size(200, 100)
    dialog.add(Gtk.Label(label="dialog"))
    dialog.show_all()
    print("ready", flush=True)
    Gtk.main()


if __name__ == "__main__":
    main()
