"""Does every text of a figure fit? The check behind "nothing cut off" for the evidence plots.

A title or axis label that runs off the figure ("red dashes = m") is invisible in a PNG review, so the
tests render each figure on the Agg canvas and measure every drawn text artist (titles, axis and tick
labels, legend entries) with ``get_window_extent`` against the figure's box, and every pair of tick
labels of one axis against each other (rows too thin to read).
"""

from __future__ import annotations


def text_outside(fig) -> list[str]:
    """Every drawn text of ``fig`` (titles, axis and tick labels, legend) whose box is not inside the figure,
    and every pair of tick labels on one axis that overlap, one line each (empty = everything fits)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    problems: list[str] = []
    ticks: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            every = axis.get_major_ticks() + axis.get_minor_ticks()
            ticks.update(id(getattr(t, s)) for t in every for s in ("label1", "label2"))
            if not ax.get_visible():
                continue
            lo, hi = sorted(axis.get_view_interval())
            tol = 1e-9 * max(1.0, abs(hi - lo))
            shown = [t for t in axis.get_major_ticks() if lo - tol <= t.get_loc() <= hi + tol]
            for side in ("label1", "label2"):
                labels = [getattr(t, side) for t in shown]
                labels = [t for t in labels if t.get_visible() and t.get_text()]
                extents = [t.get_window_extent(renderer) for t in labels]
                for t, ext in zip(labels, extents, strict=True):
                    if not _inside(ext, box):
                        problems.append(f"tick label {t.get_text()!r} at {_fmt(ext)} outside {_fmt(box)}")
                for k in range(len(extents) - 1):
                    for j in range(k + 1, len(extents)):
                        if extents[k].overlaps(extents[j]) and _area(extents[k], extents[j]) > 1.0:
                            problems.append(
                                f"tick labels {labels[k].get_text()!r} and {labels[j].get_text()!r} overlap"
                            )
    for t in fig.findobj(Text):
        if id(t) in ticks or not t.get_visible() or not t.get_text().strip():
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        ext = t.get_window_extent(renderer)
        if not _inside(ext, box):
            problems.append(f"text {t.get_text()!r} at {_fmt(ext)} outside {_fmt(box)}")
    return problems


def _inside(ext, box, tol: float = 0.5) -> bool:
    return ext.x0 >= box.x0 - tol and ext.y0 >= box.y0 - tol and ext.x1 <= box.x1 + tol and ext.y1 <= box.y1 + tol


def _area(a, b) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, w) * max(0.0, h)


def _fmt(b) -> str:
    return f"[{b.x0:.0f},{b.y0:.0f}..{b.x1:.0f},{b.y1:.0f}]"


__all__ = ["text_outside"]


#: A legend entry's marker, its gap and the space between entries, in characters of the legend's font.
LEGEND_ENTRY_CHARS = 7


def legend_columns(labels: list[str], room: int) -> int:
    """Entries per row of a legend ``room`` characters wide: all on one row when they fit, else as few rows as fit
    (a centred legend row wider than its figure is cut off at both sides)."""
    for cols in range(len(labels), 1, -1):
        rows = [labels[i : i + cols] for i in range(0, len(labels), cols)]
        widths = [max(len(r[c]) for r in rows if c < len(r)) + LEGEND_ENTRY_CHARS for c in range(cols)]  # widest
        if sum(widths) <= room:
            return cols
    return 1
