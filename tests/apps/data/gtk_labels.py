#!/usr/bin/python3
"""A GTK 3 window of known labels, for the text-recall benchmark and tests.

Shows a menu bar, buttons (plain and the suggested and destructive styles),
a check box, a combo box, an entry and a notebook's tabs, all in the
default theme (Adwaita). Once the window has drawn, it prints one line of
JSON on stdout: [[text, x, y, width, height], ...], each label's text box
(its Pango layout's ink extents) in root pixels, and sets its title to
"gtk labels". Runs with the system python3 (python3-gi).
"""
import json
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

LABELS = []


def label(widget):
    LABELS.append(widget)
    return widget


def button(text, style=None):
    b = Gtk.Button()
    b.add(label(Gtk.Label(label=text)))
    if style:
        b.get_style_context().add_class(style)
    return b


def build():
    win = Gtk.Window(title="gtk labels starting")
    win.set_default_size(760, 420)
    win.move(60, 60)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
    win.add(box)
    bar = Gtk.MenuBar()
    for name in ("File", "Edit", "View", "Help"):
        item = Gtk.MenuItem()
        item.add(label(Gtk.Label(label=name)))
        bar.append(item)
    box.pack_start(bar, False, False, 0)
    row = Gtk.Box(spacing=12)
    row.set_margin_start(16)
    for text, style in (("Save", None), ("Close", None), ("Open File", None),
                        ("Apply", "suggested-action"), ("Remove", "destructive-action")):
        row.pack_start(button(text, style), False, False, 0)
    box.pack_start(row, False, False, 0)
    row2 = Gtk.Box(spacing=12)
    row2.set_margin_start(16)
    check = Gtk.CheckButton()
    check.add(label(Gtk.Label(label="Show hidden files")))
    row2.pack_start(check, False, False, 0)
    combo = Gtk.ComboBoxText()
    combo.append_text("Landscape")
    combo.append_text("Portrait")
    combo.set_active(0)
    row2.pack_start(combo, False, False, 0)
    box.pack_start(row2, False, False, 0)
    notebook = Gtk.Notebook()
    notebook.set_margin_start(16)
    notebook.set_margin_end(16)
    for name in ("General", "Appearance", "Advanced"):
        page = Gtk.Box()
        page.pack_start(label(Gtk.Label(label=f"Settings for {name.lower()}")), False, False, 8)
        notebook.append_page(page, label(Gtk.Label(label=name)))
    box.pack_start(notebook, True, True, 0)
    status = label(Gtk.Label(label="Ready to print 3 pages"))
    status.set_halign(Gtk.Align.START)
    status.set_margin_start(16)
    status.set_margin_bottom(8)
    box.pack_start(status, False, False, 0)
    win.connect("destroy", Gtk.main_quit)
    return win


def report(win):
    """The labels' ink boxes in root pixels, once the window has drawn."""
    ox, oy = win.get_window().get_origin()[1:]
    out = []
    for lab in LABELS:
        if not lab.get_mapped():
            continue
        lx, ly = lab.get_layout_offsets()
        alloc = lab.get_allocation()
        # The layout offsets are in the coordinates of the label's parent
        # GdkWindow, as its allocation is; translate_coordinates takes
        # allocation-relative ones.
        tx, ty = lab.translate_coordinates(win, lx - alloc.x, ly - alloc.y)
        ink = lab.get_layout().get_pixel_extents()[0]
        out.append([lab.get_text(), ox + tx + ink.x, oy + ty + ink.y, ink.width, ink.height])
    print(json.dumps(out), flush=True)
    win.set_title("gtk labels")
    return False


def main():
    win = build()
    win.show_all()
    drawn = []

    # After the frame clock's first paint (a "draw" handler would need
    # python3-gi-cairo to take its cairo context).
    def on_paint(*_):
        if not drawn:
            drawn.append(True)
            GLib.idle_add(report, win)

    win.get_frame_clock().connect("after-paint", on_paint)
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
