"""What the evidence figures show, computed without matplotlib: the forest plot's rows and every label's text.

Why a module of its own: ``bot.stats.plots`` draws; deciding *what* to draw (one row per measured cell on the
improvement scale, positive = better; the hypotheses judging it; their verdicts as one short text) and fitting
labels to the room they get (cut with an ellipsis, wrapped, ``$`` kept literal) are pure, and the tests check
them without rendering a figure. The figures read these through the public names below.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.model import Direction, Hypothesis, Verdict

FONT = 8  # the figures' label size, in points
_CHAR_W = 0.6  # average glyph width of DejaVu Sans, in font sizes (for shortening before layout)

# --------------------------------------------------------------------------
# What is plotted (pure)
# --------------------------------------------------------------------------


@dataclass
class ForestRow:
    """One measured cell, on the improvement scale (%, positive = better), and every hypothesis judging it."""

    metric: str
    workload: str
    rate: float
    gain: float
    low: float
    high: float
    noise: float
    ids: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    blis: float | None = None
    margins: set[float] = field(default_factory=set)


def better(metric: str) -> str:
    """'lower' or 'higher': the metric's good direction (an unknown metric is read as a latency)."""
    from bot.model.metrics import METRICS

    return METRICS[metric].better if metric in METRICS else "lower"


def unit(metric: str) -> str:
    """The metric's unit as people write it (req/s, not queries/s)."""
    from bot.model.metrics import METRICS

    u = METRICS[metric].unit if metric in METRICS else "unit not known"
    return {"queries/s": "req/s"}.get(u, u)


def forest_rows(hypotheses: Sequence[Hypothesis], verdicts: Sequence[Verdict]) -> list[ForestRow]:
    """Every distinct measured cell in hypothesis order; a cell several hypotheses judge on the same runs is one row.

    The improvement is ``-change`` for a metric where lower is better and ``+change`` where higher is
    better, the interval flipped with it; the noise floor is symmetric. A no-worse claim's margin is the
    bad-side bound ``-margin``; an equivalence claim's is ``±margin``.
    """
    by_id = {v.hypothesis_id: v for v in verdicts}
    rows: dict[tuple, ForestRow] = {}
    for h in sorted(hypotheses, key=hypothesis_order):
        v = by_id.get(h.id)
        if v is None:
            continue
        for e in v.effects:
            sign = -1.0 if better(e.metric) == "lower" else 1.0
            lo, hi = sorted((sign * e.ci_low * 100, sign * e.ci_high * 100))
            noise = abs(e.t_eff) * 100 if math.isfinite(e.t_eff) else 0.0  # no floor with too few runs
            key = (e.metric, e.workload, round(e.rate, 9), round(e.rel_change, 12), round(e.ci_low, 12))
            row = rows.setdefault(
                key,
                ForestRow(e.metric, e.workload, e.rate, sign * e.rel_change * 100, lo, hi, noise),
            )
            row.ids.append(h.id)
            row.statuses.append((e.status or v.status).value)
            p = h.prediction
            if p is None or p.metric != e.metric:
                continue
            if p.direction in (Direction.DECREASE, Direction.INCREASE) and p.blis_magnitude is not None:
                row.blis = row.blis if row.blis is not None else sign * p.blis_magnitude * 100
            elif p.direction is Direction.NO_WORSE:
                row.margins.add(-p.margin * 100)
            elif p.direction is Direction.EQUIVALENT:
                row.margins.update((-p.margin * 100, p.margin * 100))
    return list(rows.values())


def hypothesis_order(h: Hypothesis) -> tuple[str, int, str]:
    """Track, then the id's number (A2 before A10), then the id: the order rows and figures follow."""
    digits = "".join(ch for ch in h.id[1:] if ch.isdigit())
    return (h.track.value, int(digits) if digits else 0, h.id)


def id_ranges(ids: Sequence[str]) -> str:
    """'A1, B1, B7–B12': consecutive ids of a track collapse to a range."""
    parsed = sorted({(i[0], int(i[1:])) for i in ids if i[1:].isdigit()})
    parts: list[str] = []
    k = 0
    while k < len(parsed):
        j = k
        while j + 1 < len(parsed) and parsed[j + 1] == (parsed[k][0], parsed[j][1] + 1):
            j += 1
        first, last = parsed[k], parsed[j]
        parts.append(f"{first[0]}{first[1]}" + (f"–{last[0]}{last[1]}" if j > k else ""))
        k = j + 1
    parts += sorted(i for i in set(ids) if not i[1:].isdigit())
    return ", ".join(parts)


def status_text(row: ForestRow) -> str:
    """'confirmed' when every hypothesis on the row agrees, else 'confirmed: A1; inconclusive: B7–B9'."""
    if len(set(row.statuses)) == 1:
        return row.statuses[0]
    by_status: dict[str, list[str]] = {}
    for i, s in zip(row.ids, row.statuses, strict=True):
        by_status.setdefault(s, []).append(i)
    return "; ".join(f"{s}: {id_ranges(ids)}" for s, ids in by_status.items())


# --------------------------------------------------------------------------
# Labels fitted to their room
# --------------------------------------------------------------------------


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(1, width - 1)].rstrip() + "…"


def plain(text: str) -> str:
    """Text matplotlib draws as written: a pair of ``$`` in a title or workload name would be drawn as
    mathtext ("p95 < $5 per $" in italics, the dollars gone)."""
    return text.replace("$", r"\$")


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis (one line), safe to draw."""
    return plain(_cut(text, width))


def wrap(text: str, width: int, lines: int) -> str:
    """``text`` wrapped at ``width`` characters into at most ``lines`` lines, the last cut, safe to draw."""
    wrapped = textwrap.wrap(" ".join(str(text).split()), width=max(8, width)) or [""]
    if len(wrapped) > lines:
        wrapped = [*wrapped[: lines - 1], _cut(" ".join(wrapped[lines - 1 :]), width)]
    return plain("\n".join(wrapped))


def fit_chars(inches: float, size: float = FONT) -> int:
    """How many characters of ``size`` points fit in ``inches``."""
    return max(6, int(inches * 72 / (size * _CHAR_W)))


def row_label(row: ForestRow, width: int) -> str:
    """A forest row's tick label in ``width`` characters: its hypotheses, metric, workload and rate."""
    head = f"{shorten(id_ranges(row.ids), max(6, width // 3))} · {shorten(row.metric, max(6, width // 4))} · "
    tail = f" @ {row.rate:g} req/s"
    return head + shorten(row.workload, max(6, width - len(head) - len(tail))) + tail


def ci_level(alpha: float) -> str:
    """The level of an interval with ``alpha`` in each tail, as people write it: ``0.05`` -> ``90%``."""
    return f"{(1 - 2 * alpha) * 100:.0f}%"
