#!/usr/bin/python3
"""A GTK3 program with a popup menu, for the grants' tests (tests/x11/test_grants.cpp).

Usage: gtk_popup.py NAME [--copy TEXT]. Its WM_CLASS instance is NAME (the program name);
it shows a 300x200 window titled NAME at 40,400. A press of button 3 in it
pops a menu (an override-redirect window of GTK's own) with the items
"First" and "Second"; it prints "menu-shown" once the menu is mapped and
"activated ITEM" when an item is chosen, so a test reads from the program
itself what reached it. With --copy it puts TEXT on the CLIPBOARD and
prints "copied" once it owns it.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def main():
    name = sys.argv[1]
    GLib.set_prgname(name)
    window = Gtk.Window(title=name)
    window.set_default_size(300, 200)
    window.move(40, 400)
    menu = Gtk.Menu()
    for label in ("First", "Second"):
        item = Gtk.MenuItem(label=label)
        item.connect("activate", lambda _, l=label: print("activated " + l, flush=True))
        menu.append(item)
    menu.show_all()
    menu.connect("map-event", lambda *_: print("menu-shown", flush=True))
    area = Gtk.EventBox()
    area.add(Gtk.Label(label="right-click for a menu"))

    def on_press(_, event):
        if event.button == 3:
            menu.popup_at_pointer(event)
            return True
        return False

    area.connect("button-press-event", on_press)
    window.add(area)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    if "--copy" in sys.argv:
        clipboard = Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD)
        clipboard.set_text(sys.argv[sys.argv.index("--copy") + 1], -1)
        clipboard.store()
        print("copied", flush=True)
    print("ready", flush=True)
    Gtk.main()


if __name__ == "__main__":
    main()
