"""Latency plots the benchmarks share: empirical CDFs drawn as SVG.

tools/bench/bench-protocol and tools/bench/bench-a11y import this module from their own
tools/lib folder.  It owns the look of every plot (colours readable with
colour blindness, a log time axis spanning whole decades, dashed lines at
p50 and p90) and writes the file: write_plot takes panels, each a title, its
series (label, milliseconds) and an optional marker, one under the other.

Standard library only.
"""

import math
from xml.sax.saxutils import escape

from bench import percentile

# The plot's colours (Okabe-Ito, readable with colour blindness) and layout.
PLOT_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
PLOT_WIDTH = 820
PLOT_HEIGHT = 300  # Of one panel's plot area; each legend line adds to it.
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP = 70, 30, 50


def log_ticks(low, high):
    """(value, major) of the 1-2-5 ticks of a log axis from low to high."""
    ticks = []
    decade = 10.0 ** math.floor(math.log10(low))
    while decade <= high * 1.0001:
        for step in (1, 2, 5):
            value = decade * step
            if low * 0.9999 <= value <= high * 1.0001:
                ticks.append((value, step == 1))
        decade *= 10
    return ticks


def tick_label(value):
    """A tick's number without trailing zeros: 0.5, 2, 1000."""
    return f"{value:g}" if value >= 0.01 else f"{value:.0e}"


def svg_cdf_panel(top, title, series, marker=None):
    """SVG elements of one panel at y offset top; return (elements, panel height).

    series: (label, values in ms) in legend order; each becomes an empirical
    CDF, a step line, on a log time axis spanning whole decades.  marker:
    optional (ms, label) drawn as a dashed vertical line (a goal).
    """
    values = [v for _, vs in series for v in vs if v > 0]
    if marker:
        values.append(marker[0])
    low = 10.0 ** math.floor(math.log10(min(values)))
    high = 10.0 ** math.ceil(math.log10(max(values)))
    if high <= low:
        high = low * 10
    x0, x1 = PLOT_LEFT, PLOT_WIDTH - PLOT_RIGHT
    y0, y1 = top + PLOT_TOP + PLOT_HEIGHT, top + PLOT_TOP

    def x(ms):
        fraction = (math.log10(max(ms, low)) - math.log10(low)) / \
            (math.log10(high) - math.log10(low))
        return x0 + fraction * (x1 - x0)

    def y(fraction):
        return y0 - fraction * (y0 - y1)

    out = [f'<text x="{x0}" y="{top + 30}" font-size="15" font-weight="bold">'
           f'{escape(title)}</text>']
    for value, major in log_ticks(low, high):
        px = x(value)
        colour = "#bbb" if major else "#e4e4e4"
        out.append(f'<line x1="{px:.1f}" y1="{y1}" x2="{px:.1f}" y2="{y0}" '
                   f'stroke="{colour}"/>')
        out.append(f'<text x="{px:.1f}" y="{y0 + 16}" text-anchor="middle" '
                   f'fill="{"#000" if major else "#666"}">{tick_label(value)}</text>')
    for fraction in (0, 0.25, 0.5, 0.75, 0.9, 1):
        py = y(fraction)
        dash = ' stroke-dasharray="4 3"' if fraction in (0.5, 0.9) else ""
        out.append(f'<line x1="{x0}" y1="{py:.1f}" x2="{x1}" y2="{py:.1f}" '
                   f'stroke="#ccc"{dash}/>')
        out.append(f'<text x="{x0 - 6}" y="{py + 4:.1f}" text-anchor="end">{fraction:g}</text>')
    out.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="none" '
               'stroke="#333"/>')
    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y0 + 36}" text-anchor="middle">'
               'milliseconds (log scale)</text>')
    out.append(f'<text transform="translate({x0 - 48},{(y0 + y1) / 2:.1f}) rotate(-90)" '
               'text-anchor="middle">fraction at or below (empirical CDF)</text>')
    if marker:
        px = x(marker[0])
        out.append(f'<line x1="{px:.1f}" y1="{y1}" x2="{px:.1f}" y2="{y0}" stroke="#000" '
                   'stroke-width="1.5" stroke-dasharray="6 4"/>')
        out.append(f'<text x="{px + 5:.1f}" y="{y0 - 8}">{escape(marker[1])}</text>')
    legend_top = y0 + 58
    for index, (label, ms) in enumerate(series):
        colour = PLOT_COLOURS[index % len(PLOT_COLOURS)]
        ordered = sorted(ms)
        count = len(ordered)
        points = [f"{x(ordered[0]):.1f},{y(0):.1f}"]
        for rank, value in enumerate(ordered):
            points.append(f"{x(value):.1f},{y(rank / count):.1f}")
            points.append(f"{x(value):.1f},{y((rank + 1) / count):.1f}")
        out.append(f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" '
                   'stroke-width="2"/>')
        ly = legend_top + index * 18
        out.append(f'<line x1="{x0}" y1="{ly - 4}" x2="{x0 + 24}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{x0 + 32}" y="{ly}">{escape(label)} (p50 '
                   f'{percentile(ms, 0.5):.2f} ms, n={count})</text>')
    return out, PLOT_TOP + PLOT_HEIGHT + 58 + 18 * len(series) + 10


def write_plot(path, panels):
    """Write panels, each (title, series, marker), as one SVG file, one under the other."""
    body = []
    top = 0
    for title, series, marker in panels:
        elements, height = svg_cdf_panel(top, title, series, marker)
        body += elements
        top += height
    with open(path, "w", encoding="utf-8") as out:
        out.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{PLOT_WIDTH}" '
                  f'height="{top}" viewBox="0 0 {PLOT_WIDTH} {top}" '
                  'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">\n'
                  f'<rect width="{PLOT_WIDTH}" height="{top}" fill="#fff"/>\n')
        out.write("\n".join(body))
        out.write("\n</svg>\n")
