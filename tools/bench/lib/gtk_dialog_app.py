#!/usr/bin/python3
"""A GTK3 window whose one big button opens a message dialog.

What tools/bench/measure-settle clicks to time a real dialog opening. The window
is 400x200 at the top-left of the screen (the button fills it); Escape or the
dialog's OK button closes the dialog again. Prints "ready" on stdout once the
window is shown.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def open_dialog(button):
    dialog = Gtk.MessageDialog(transient_for=button.get_toplevel(), modal=True,
                               message_type=Gtk.MessageType.INFO,
                               buttons=Gtk.ButtonsType.OK, text="Settle measurement")
    dialog.format_secondary_text("A dialog with some text, as applications open them.")
    dialog.connect("response", lambda d, _r: d.destroy())
    dialog.show_all()


def main():
    window = Gtk.Window(title="cu-settle-gtk")
    window.set_default_size(400, 200)
    window.move(0, 0)
    button = Gtk.Button(label="Open a dialog")
    button.connect("clicked", open_dialog)
    window.add(button)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()

    def announce():
        print("ready", flush=True)
        return False

    GLib.idle_add(announce)
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
