#!/usr/bin/python3
"""A GTK3 window of known widgets for the a11y toolset's tests (tests/x11/test_a11y.cpp).

What AT-SPI shows of it (python3-pyatspi under tools/lib/a11y-session.sh,
Debian 12: GTK 3.24.38, at-spi2-core 2.46), depth first from the
application (role "name" {actions}):

  application "gtk_a11y.py"          named after the script, pid = ours
    frame "cu-a11y-test"             the window; no actions
      filler ""                      the Gtk.Box
        push button "Apply"          {click}
        push button "Remove Apply"   {click}
        push button "Add Extra"      {click}
        text "Name field"            {activate}; EditableText, Text
        spin button "Count"          {activate}; Value (0..100), EditableText
        check box "Enabled"          {click}
        toggle button "Details"      {activate} (the expander; state
                                     "expandable", "expanded" once open)
          label "Hidden details"     frame G_MININT,G_MININT 1x1 until shown
        slider "Level"               no actions; Value (0..100), horizontal

Component.getExtents(DESKTOP_COORDS) of each widget equals its geom line
below exactly (checked with the window at 0,0 and at 60,40, no window
manager). Actions and EditableText.setTextContents / Value.currentValue
each print their event line. An object of a destroyed widget
answers every call with an error ("... does not exist").

Usage: gtk_a11y.py [X Y]. The window "cu-a11y-test" is 500x400 at X,Y
(default 0,0; without a window manager X puts it exactly there). With
CU_A11Y_APP_NAME=NAME in its environment the program is called NAME (its
AT-SPI application name and its WM_CLASS instance, "NAME" and "Name") and
its window "cu-NAME": x11-grants_a11y runs two of it, one granted and one
not. Every event is one line on stdout, flushed:

  ready                      the window is mapped and drawn (then the geoms)
  clicked Apply              the Apply button was clicked
  removed Apply              "Remove Apply" destroyed the Apply button
  added Extra                "Add Extra" added a button "Extra"
  clicked Extra
  entry TEXT                 the entry's text changed (on every change)
  focus Name field           the entry got the keyboard focus
  spin VALUE                 the spin button's value changed (an integer)
  toggled Enabled 0|1
  expanded Details 0|1
  scale VALUE                the scale "Level" moved (an integer, 0 to 100)
  geom NAME X Y W H          one per known widget still there, after "ready"
                             and after each line "geometry" read on stdin
  geom-end                   after the last geom line

A line "move X Y" on stdin moves the window to X,Y (x11-marks_act's stale
marks) and prints nothing; a "geometry" after it says where it went.
A line "twins" adds two buttons both labelled "Twin" below the others and
prints "added Twins"; a click on one prints "clicked Twin 1" or "clicked
Twin 2". A line "redraw" has GTK draw the whole window again (the same
pixels, but X DAMAGE reports them) and prints "redrawn" once that drawing
has reached the X server (a round trip after the frame drew).

A geom line is the widget's allocation in root (screen) coordinates as X
says it: the origin of the toplevel's GdkWindow from a TranslateCoordinates
round trip (Gdk.Window.get_origin), plus the widget's offset in the
toplevel (Gtk.Widget.translate_coordinates), with the allocation's size.
The answer to "geometry" is written from an idle callback of low priority,
after every pending idle and redraw: should GTK defer an accessible action
to an idle, a click asked for before "geometry" has still printed its line
before the geom lines come (what the tests' "nothing happened" checks rely
on).
Closing stdin ends the program.
"""
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import GLib  # noqa: E402

# The name is set before Gtk is imported: importing it initialises GTK,
# which takes the program's name (the AT-SPI name and the WM_CLASS
# instance) from argv[0] and GDK's WM_CLASS class from that name, once.
APP_NAME = os.environ.get("CU_A11Y_APP_NAME")
if APP_NAME:
    sys.argv[0] = APP_NAME
    GLib.set_prgname(APP_NAME)

from gi.repository import Gtk  # noqa: E402


def say(line):
    print(line, flush=True)


def name_of(widget):
    return widget.get_accessible().get_name()


class App:
    def __init__(self, x, y):
        self.window = Gtk.Window(title="cu-" + APP_NAME if APP_NAME else "cu-a11y-test")
        self.window.set_default_size(500, 400)
        self.window.set_resizable(False)
        self.window.move(x, y)
        self.window.connect("destroy", Gtk.main_quit)
        self.redraw_asked = False
        self.clock_hooked = False

        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        box.set_border_width(8)
        self.window.add(box)
        self.box = box

        self.apply = Gtk.Button(label="Apply")
        self.apply.connect("clicked", lambda _b: say("clicked Apply"))
        box.pack_start(self.apply, False, False, 0)

        self.remove = Gtk.Button(label="Remove Apply")
        self.remove.connect("clicked", self.on_remove)
        box.pack_start(self.remove, False, False, 0)

        self.add = Gtk.Button(label="Add Extra")
        self.add.connect("clicked", self.on_add)
        box.pack_start(self.add, False, False, 0)

        self.entry = Gtk.Entry()
        self.entry.set_text("hello")
        self.entry.get_accessible().set_name("Name field")
        self.entry.connect("changed", lambda e: say("entry " + e.get_text()))
        self.entry.connect("notify::has-focus", self.on_entry_focus)
        box.pack_start(self.entry, False, False, 0)

        self.spin = Gtk.SpinButton.new_with_range(0, 100, 1)
        self.spin.set_value(5)
        self.spin.get_accessible().set_name("Count")
        self.spin.connect("value-changed",
                          lambda s: say("spin %d" % round(s.get_value())))
        box.pack_start(self.spin, False, False, 0)

        self.check = Gtk.CheckButton(label="Enabled")
        self.check.connect("toggled",
                           lambda c: say("toggled Enabled %d" % int(c.get_active())))
        box.pack_start(self.check, False, False, 0)

        self.expander = Gtk.Expander(label="Details")
        self.expander.add(Gtk.Label(label="Hidden details"))
        self.expander.connect("notify::expanded",
                              lambda e, _p: say("expanded Details %d" % int(e.get_expanded())))
        box.pack_start(self.expander, False, False, 0)

        self.scale = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
        self.scale.set_value(50)
        self.scale.set_draw_value(False)
        self.scale.get_accessible().set_name("Level")
        self.scale.connect("value-changed",
                           lambda s: say("scale %d" % round(s.get_value())))
        box.pack_start(self.scale, False, False, 0)

        self.extra = None
        self.pending = b""
        self.window.show_all()
        self.window.connect("map-event", self.on_mapped)
        GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, self.on_stdin)

    def known(self):
        widgets = [self.apply, self.remove, self.add, self.entry, self.spin, self.check,
                   self.expander, self.scale, self.extra]
        return [w for w in widgets if w is not None and w.get_parent() is not None]

    def print_geometry(self):
        # get_origin asks X (TranslateCoordinates) where the toplevel's
        # GdkWindow is on the root; the widget's offset inside it is GTK's own
        # layout. The toplevel's GdkWindow covers exactly the window's area
        # (no client-side decorations: none are asked for, and without a
        # compositing manager GTK draws no shadows).
        _, ox, oy = self.window.get_window().get_origin()
        for w in self.known():
            x, y = w.translate_coordinates(self.window, 0, 0)
            a = w.get_allocation()
            say("geom %s %d %d %d %d" % (name_of(w), ox + x, oy + y, a.width, a.height))
        say("geom-end")

    def on_mapped(self, *_):
        # The first draw has happened by the time an idle after map-event runs
        # (drawing is at a higher priority than idle callbacks).
        def announce():
            say("ready")
            self.print_geometry()
            return False
        GLib.idle_add(announce)
        return False

    def on_stdin(self, source, condition):
        # The descriptor is read directly: a buffered readline would take two
        # lines sent together and leave the second in Python's buffer, where
        # no further wake-up of the watch would ever find it.
        data = os.read(sys.stdin.fileno(), 4096)
        if not data:
            Gtk.main_quit()
            return False
        self.pending += data
        while b"\n" in self.pending:
            raw, self.pending = self.pending.split(b"\n", 1)
            self.on_line(raw.decode())
        return True

    def on_line(self, line):
        if line.startswith("move "):
            # Without a window manager this is a ConfigureWindow of the
            # toplevel: X moves it at once (the geometry lines then say so).
            _, x, y = line.split()
            self.window.move(int(x), int(y))
        elif line.strip() == "twins":
            for i in (1, 2):
                twin = Gtk.Button(label="Twin")
                twin.connect("clicked", lambda _b, i=i: say("clicked Twin %d" % i))
                self.box.pack_start(twin, False, False, 0)
                twin.show()
            say("added Twins")
        elif line.strip() == "redraw":
            # The frame clock's after-paint (the draw signal's cairo context
            # needs python3-gi-cairo): the frame that drew the window again.
            if not self.clock_hooked:
                self.window.get_frame_clock().connect("after-paint", self.on_drawn)
                self.clock_hooked = True
            self.redraw_asked = True
            self.window.queue_draw()
        elif line.strip() == "geometry":
            def answer():
                self.print_geometry()
                return False
            GLib.idle_add(answer, priority=GLib.PRIORITY_LOW)

    def on_drawn(self, _clock):
        if not self.redraw_asked:
            return False
        self.redraw_asked = False

        def reached():
            # The frame's drawing is flushed once the frame ends; the sync
            # is a round trip after it, so X has drawn it when "redrawn"
            # is read.
            self.window.get_display().sync()
            say("redrawn")
            return False
        GLib.idle_add(reached, priority=GLib.PRIORITY_LOW)
        return False

    def on_entry_focus(self, entry, _pspec):
        if entry.has_focus():
            say("focus Name field")

    def on_remove(self, _button):
        if self.apply is not None:
            self.apply.destroy()
            self.apply = None
            say("removed Apply")

    def on_add(self, _button):
        if self.extra is None:
            self.extra = Gtk.Button(label="Extra")
            self.extra.connect("clicked", lambda _b: say("clicked Extra"))
            self.box.pack_start(self.extra, False, False, 0)
            self.extra.show()
            say("added Extra")


def main():
    x, y = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (0, 0)
    App(x, y)
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
