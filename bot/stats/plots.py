"""The figures behind the verdicts: one forest plot of every measured claim, one distribution plot per Track A claim.

Why so few: a reviewer reads a handful of figures, not two per hypothesis. Hypotheses that are judged on
the same runs (a Track B guard on a Track A cell, a look-alike freshness hypothesis) add no information
as a chart of their own, so the forest plot draws each measured cell once and lists every hypothesis
that judges it; the per-run distributions are drawn for the claims the promotion is about (Track A), at
most ``MAX_IMAGES`` images in all, and the markdown says what was not plotted and why.

Conventions a reader can rely on:
- the forest plot's x axis is the *improvement* over baseline in percent, positive = better, for every
  metric (a latency that drops and a throughput that rises both plot to the right), so no chart mixes
  metrics whose good direction is opposite without saying so;
- every axis names its quantity and unit (%, ms, tokens/s, req/s);
- labels are shortened and wrapped to fit (what each row and label says is ``bot.stats.plot_content``'s,
  pure), and the tests render every figure and check with ``bot.stats.label_fit.text_outside`` that every
  text box lies inside it.

Determinism: figures are plain ``matplotlib.figure.Figure`` objects on the Agg canvas (no pyplot state),
saved without the ``Software`` stamp or a timestamp, so the same verdicts give the same bytes in the same
environment and re-running a stage commits nothing new. matplotlib is imported inside the functions so
that importing this module costs nothing.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bot.model import Hypothesis, Track, Verdict
from bot.stats import StatsError, dist
from bot.stats.label_fit import legend_columns
from bot.stats.plot_content import (
    FONT,
    ForestRow,
    ci_level,
    fit_chars,
    forest_rows,
    hypothesis_order,
    id_ranges,
    plain,
    row_label,
    shorten,
    status_text,
    unit,
    wrap,
)

FOREST = "claims-forest.png"
MAX_IMAGES = 8
_CDF_PANELS = 6
MAX_FOREST_ROWS = 40  # beyond this the rows are too thin to read; the rest are listed as not plotted
_DPI = 100

_STATUS_COLOR = {"confirmed": "#2e7d32", "refuted": "#c62828", "inconclusive": "#546e7a"}
_OTHER_COLOR = "#8d6e63"
_BASELINE, _EVOLVED = "#7f7f7f", "#1f77b4"
_BLIS, _MARGIN, _NOISE = "#6a1b9a", "#b22222", "#d9d9d9"


# --------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(h_pad=0.06, w_pad=0.06)
    return fig


def forest_figure(rows: Sequence[ForestRow], alpha: float = 0.05):
    """Improvement per measured cell with its interval, the noise floor, BLIS's prediction and the margins."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    width = 9.5
    n = len(rows)
    fig = _figure(width, 1.9 + 0.27 * n)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1].astype(float)
    gain = np.array([r.gain for r in rows])
    low = np.array([r.low for r in rows])
    high = np.array([r.high for r in rows])
    noise = np.array([r.noise for r in rows])
    colors = [_STATUS_COLOR.get(status_text(r), _OTHER_COLOR) for r in rows]
    ax.barh(y, 2 * noise, left=-noise, height=0.7, color=_NOISE, zorder=0)
    ax.axvline(0, color="black", lw=0.8, zorder=1)
    ax.hlines(y, low, high, colors=colors, lw=1.8, zorder=2)
    ax.scatter(gain, y, c=colors, s=24, zorder=3)
    handles = [
        Line2D([], [], color="black", marker="o", lw=1.8, label=f"measured, {ci_level(alpha)} CI (colour: verdict)"),
        Patch(color=_NOISE, label="noise floor ±T_eff"),
    ]
    blis = [(r.blis, yi) for r, yi in zip(rows, y, strict=True) if r.blis is not None]
    if blis:
        xs, ys = zip(*blis, strict=True)
        ax.scatter(xs, ys, marker="D", facecolors="none", edgecolors=_BLIS, s=30, zorder=4)
        handles.append(Line2D([], [], ls="", marker="D", mfc="none", color=_BLIS, label="BLIS prediction"))
    margins = [(m, yi) for r, yi in zip(rows, y, strict=True) for m in sorted(r.margins)]
    if margins:
        xs, ys = zip(*margins, strict=True)
        ax.scatter(xs, ys, marker="|", s=180, color=_MARGIN, linewidths=1.6, zorder=4)
        handles.append(Line2D([], [], ls="", marker="|", ms=11, mew=1.6, color=_MARGIN, label="margin (worst allowed)"))
    points = np.concatenate([low, high, noise, -noise, [0.0], [b for b, _ in blis], [m for m, _ in margins]])
    lo, hi = float(points.min()), float(points.max())
    pad = max(1.0, 0.06 * (hi - lo))
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-0.6, n - 0.4)
    label_chars = fit_chars(3.4)
    ax.set_yticks(y, [row_label(r, label_chars) for r in rows], fontsize=FONT)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color="#eeeeee", zorder=-1)
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(y, [shorten(status_text(r), fit_chars(1.7)) for r in rows], fontsize=FONT)
    right.tick_params(axis="y", length=0)
    for label, color in zip(right.get_yticklabels(), colors, strict=True):
        label.set_color(color)
    ax.set_xlabel(
        wrap(
            "improvement over baseline (%) = −change for latencies, +change for throughputs; positive = better",
            fit_chars(7),
            2,
        ),
        fontsize=FONT + 1,
    )
    # y=1.0 is where matplotlib would search its way to (no tick nor offset text above the axes): given, no draw does
    ax.set_title(
        wrap(f"Evolved vs baseline per claim and cell: improvement with {ci_level(alpha)} CI", fit_chars(8, 10), 2),
        fontsize=10,
        y=1.0,
    )
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=FONT, frameon=False)
    return fig


def _display(unit_name: str, values: np.ndarray) -> tuple[str, float]:
    """Unit label and divisor: milliseconds of ten seconds and more read better as seconds."""
    if unit_name == "ms" and values.size and float(np.nanmedian(np.abs(values))) >= 10_000:
        return "s", 1000.0
    return unit_name, 1.0


def used_runs(b: np.ndarray, e: np.ndarray, runs_judged: int | None = None) -> tuple[np.ndarray, ...]:
    """Which runs (in repetition order) the verdict used, and which of those its outlier rule excluded.

    ``runs_judged`` is the cell's recorded look (``Effect.runs_judged``): a group-sequential verdict decided at an
    early look used only the first that many runs of each arm, and its outlier rule saw only those; None is every
    run. Returns (used_b, used_e, excluded_b, excluded_e) masks.
    """
    from bot.stats.rule import cell_stats

    k = max(b.size, e.size) if runs_judged is None else runs_judged
    used_b, used_e = np.arange(b.size) < k, np.arange(e.size) < k
    if not (b.size and e.size and np.all(b > 0) and np.all(e > 0)):
        return used_b, used_e, np.zeros(b.size, bool), np.zeros(e.size, bool)
    st = cell_stats(b[used_b], e[used_e])  # the verdict's own outlier rule on the runs that look judged
    out_b, out_e = np.zeros(b.size, bool), np.zeros(e.size, bool)
    out_b[used_b], out_e[used_e] = st.flag_b[0], st.flag_e[0]
    return used_b, used_e, out_b, out_e


def _t_interval(x: np.ndarray, alpha: float) -> tuple[float, float]:
    if x.size < 2:
        return float(x.mean()), float(x.mean())
    half = dist.t_ppf(1 - alpha, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def _title(h: Hypothesis, v: Verdict, what: str, width: float) -> str:
    """Two lines of the hypothesis's id, verdict and title, then one of what the figure shows."""
    chars = fit_chars(width - 0.3, 10)
    return f"{wrap(f'{h.id} ({v.status.value}): {h.title}', chars, 2)}\n{shorten(what, chars)}"


def runs_figure(h: Hypothesis, v: Verdict, index: Any, alpha: float = 0.05):
    """Per-run values of both arms per cell (``index``: a ``bot.stats.cells.ReportIndex``), the runs the
    verdict excluded as outliers or did not use (decided at an earlier look) marked, mean and t-interval
    of the runs it used."""
    from matplotlib.lines import Line2D

    effects = v.effects
    data = [index.arms(e.workload, e.rate, e.metric) for e in effects]
    if not any(b.size or e.size for b, e in data):
        return None
    metric = effects[0].metric
    name, div = _display(unit(metric), np.concatenate([x for pair in data for x in pair]))
    cell_w = 1.25
    width = min(12.0, max(5.5, 1.4 + cell_w * len(effects)))
    fig = _figure(width, 4.2)
    ax = fig.add_subplot()
    marks: set[str] = set()
    p = h.prediction
    blis = p.blis_magnitude if p is not None and p.metric == metric and p.blis_magnitude is not None else None
    blis_y: list[tuple[float, float]] = []
    for i, (e, (b, ev)) in enumerate(zip(effects, data, strict=True)):
        used_b, used_e, out_b, out_e = used_runs(b, ev, e.runs_judged)
        for off, arr, used, out, color in ((-0.18, b, used_b, out_b, _BASELINE), (0.18, ev, used_e, out_e, _EVOLVED)):
            if not arr.size:
                continue
            xs = i + off + np.linspace(-0.05, 0.05, arr.size)
            kept = used & ~out
            ax.scatter(xs[kept], arr[kept] / div, s=14, color=color, alpha=0.65, linewidths=0)
            if out.any():
                marks.add("outlier")
                ax.scatter(xs[out], arr[out] / div, s=30, marker="x", color=_MARGIN)
            if (~used).any():
                marks.add("unused")
                ax.scatter(xs[~used], arr[~used] / div, s=14, facecolors="none", edgecolors=color, linewidths=0.8)
            if kept.any():
                values = arr[kept] / div
                lo, hi = _t_interval(values, alpha)
                mean = float(values.mean())
                if color == _BASELINE and blis is not None:
                    blis_y.append((i + 0.18, mean * (1 + blis)))
                ax.errorbar([i + off], [mean], yerr=[[mean - lo], [hi - mean]], fmt="_", color=color, capsize=5, ms=16)
    if blis_y:
        xs, ys = zip(*blis_y, strict=True)
        ax.scatter(xs, ys, marker="D", facecolors="none", edgecolors=_BLIS, s=34, zorder=4)
    labels = [f"{shorten(e.workload, fit_chars(cell_w - 0.1))}\n@ {e.rate:g} req/s" for e in effects]
    ax.set_xticks(range(len(effects)), labels, fontsize=FONT)
    ax.set_xlim(-0.6, len(effects) - 0.4)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.set_xlabel("workload @ request rate", fontsize=FONT + 1)
    ax.set_ylabel(wrap(f"{metric} per run ({name})", fit_chars(3.8, FONT + 1), 2), fontsize=FONT + 1)
    ax.grid(axis="y", color="#eeeeee")
    what = f"per-run values; bar: mean and {ci_level(alpha)} t-interval of the runs judged"
    ax.set_title(_title(h, v, what, width), fontsize=10)
    handles = [
        Line2D([], [], ls="", marker="o", color=_BASELINE, label="baseline"),
        Line2D([], [], ls="", marker="o", color=_EVOLVED, label="evolved"),
    ]
    if blis_y:
        handles.append(
            Line2D([], [], ls="", marker="D", mfc="none", color=_BLIS, label=f"BLIS prediction ({blis * 100:+.0f}%)")
        )
    if "outlier" in marks:
        handles.append(Line2D([], [], ls="", marker="x", color=_MARGIN, label="outlier run (excluded)"))
    if "unused" in marks:
        handles.append(Line2D([], [], ls="", marker="o", mfc="none", color="black", label="run after the decision"))
    cols = legend_columns([str(x.get_label()) for x in handles], fit_chars(width - 0.2))
    fig.legend(handles=handles, loc="outside lower center", ncols=cols, fontsize=FONT, frameon=False)
    return fig


def cdf_figure(h: Hypothesis, v: Verdict, per_request: pd.DataFrame):
    """Empirical CDFs of the per-request values of the claim's metric family, baseline vs evolved, per cell."""
    need = {"treatment", "workload", "rate", "metric", "value"}
    if not need <= set(per_request.columns):
        raise StatsError(
            f"per-request data: missing columns {sorted(need - set(per_request.columns))}; expected {sorted(need)}"
        )
    metric = v.effects[0].metric
    family = metric.split("_")[0]
    df = per_request[per_request["metric"].isin([metric, family])]
    rate = df["rate"].astype(float).to_numpy()
    cells = [(e, df[(df["workload"] == e.workload).to_numpy() & np.isclose(rate, e.rate)]) for e in v.effects]
    cells = [(e, sel) for e, sel in cells if len(sel)]
    if not cells:
        return None
    shown = cells[:_CDF_PANELS]
    name, div = _display(unit(metric), df["value"].to_numpy(float))
    cols = min(3, len(shown))
    panel_w = 3.0
    width = max(5.5, panel_w * cols + 0.6)
    fig = _figure(width, 1.6 + 2.4 * math.ceil(len(shown) / cols))
    grid = fig.subplots(math.ceil(len(shown) / cols), cols, squeeze=False, sharey=True)
    axes = [ax for line in grid for ax in line]
    for ax in axes[len(shown) :]:
        ax.set_visible(False)
    for ax, (e, sel) in zip(axes, shown, strict=False):
        for treatment, color in (("baseline", _BASELINE), ("evolved", _EVOLVED)):
            x = np.sort(sel[sel["treatment"] == treatment]["value"].to_numpy(float)) / div
            if x.size:
                ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color=color)
        ax.set_title(f"{shorten(e.workload, fit_chars(panel_w - 1.1, 9))} @ {e.rate:g} req/s", fontsize=9)
        ax.set_xlabel(plain(f"{family} ({name})"), fontsize=FONT + 1)
        ax.tick_params(labelsize=FONT)
        ax.set_ylim(0, 1)
    for line in grid:
        line[0].set_ylabel("fraction of requests", fontsize=FONT + 1)
    what = f"per-request CDF of {family}" + (
        f"; the first {len(shown)} of {len(cells)} cells" if len(cells) > len(shown) else ""
    )
    fig.suptitle(_title(h, v, what, width), fontsize=10)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, label=t) for t, c in (("baseline", _BASELINE), ("evolved", _EVOLVED))]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=FONT, frameon=False)
    return fig


# --------------------------------------------------------------------------
# The set of figures of a promotion, and their markdown
# --------------------------------------------------------------------------


def forest_markdown(path: str, *, alpha: float = 0.05) -> str:
    """The forest plot at ``path`` (relative to the markdown showing it) as an image, with its reading key."""
    return (
        f"![Improvement over baseline per claim and cell, {ci_level(alpha)} CI]({path})\n\n"
        "_Every metric is drawn as the improvement over baseline in percent, positive = better: a latency change "
        "of −10% and a throughput change of +10% both plot at +10, so both directions read alike. A cell judged by several hypotheses on the same runs "
        "is one row listing them. Colour: the cell's verdict; grey band: the noise floor ±T_eff; diamond: BLIS's "
        "prediction; red tick: the worst change a no-worse or equivalence claim allows._"
    )


@dataclass(frozen=True)
class EvidencePlots:
    """The PNGs of a promotion (file name -> bytes) and what the markdown says about them."""

    images: dict[str, bytes]
    forest: str | None = None
    distribution: dict[str, str] = field(default_factory=dict)  # hypothesis id -> file name
    not_plotted: list[str] = field(default_factory=list)  # one sentence each: what, and why

    def summary_markdown(self, plot_dir: str = "plots", *, alpha: float = 0.05) -> str:
        """The forest plot with its reading key, and what was not plotted (empty when nothing was measured)."""
        if self.forest is None:
            return ""
        lines = [forest_markdown(f"{plot_dir.rstrip('/')}/{self.forest}", alpha=alpha)]
        if self.not_plotted:
            lines += ["", "Not plotted separately:", ""] + [f"- {line}" for line in self.not_plotted]
        return "\n".join(lines) + "\n"

    def image_markdown(self, hypothesis_id: str, plot_dir: str = "plots") -> str | None:
        """The distribution plot of one hypothesis as a markdown image, or None when it has none."""
        name = self.distribution.get(hypothesis_id)
        if name is None:
            return None
        what = "per-request CDF" if name.endswith("-cdf.png") else "per-run values of both arms"
        return f"![{hypothesis_id}: {what}]({plot_dir.rstrip('/')}/{name})"


@dataclass
class _Figures:
    figures: dict[str, Any]  # file name -> Figure, in order
    distribution: dict[str, str]
    not_plotted: list[str]
    forest: str | None


def build_figures(
    hypotheses: Sequence[Hypothesis],
    verdicts: Sequence[Verdict],
    reports: Any = None,
    per_request: pd.DataFrame | None = None,
    *,
    alpha: float = 0.05,
    max_images: int = MAX_IMAGES,
) -> _Figures:
    """The figures ``plot_evidence`` renders, unrendered (the label-fit tests draw and measure them)."""
    by_id = {v.hypothesis_id: v for v in verdicts}
    ordered = sorted((h for h in hypotheses if by_id.get(h.id) and by_id[h.id].effects), key=hypothesis_order)
    out = _Figures({}, {}, [], None)
    rows = forest_rows(ordered, verdicts)
    if rows and max_images > 0:
        if len(rows) > MAX_FOREST_ROWS:
            left = rows[MAX_FOREST_ROWS:]
            out.not_plotted.append(
                f"{len(left)} of {len(rows)} measured cells are not in the forest plot (at most {MAX_FOREST_ROWS} "
                f"rows stay readable): {id_ranges([i for r in left for i in r.ids])}; their numbers are in the tables."
            )
            rows = rows[:MAX_FOREST_ROWS]
        out.figures[FOREST] = forest_figure(rows, alpha)
        out.forest = FOREST
    budget = max_images - len(out.figures)
    for h in sorted(hypotheses, key=hypothesis_order):
        v = by_id.get(h.id)
        if h.track is Track.A and v is not None and not v.effects:
            out.not_plotted.append(f"{h.id}: no measured cell ({v.status.value}).")
    seen: dict[frozenset, str] = {}
    index = _index(reports)
    for h in ordered:
        if h.track is not Track.A:
            continue
        v = by_id[h.id]
        cells = frozenset((e.metric, e.workload, round(e.rate, 9)) for e in v.effects)
        if cells in seen:
            out.not_plotted.append(f"{h.id}: judged on the same runs as {seen[cells]}, whose plot shows them.")
            continue
        if budget <= 0:
            out.not_plotted.append(
                f"{h.id}: no distribution plot (at most {max_images} images per promotion); its cells are in the "
                "forest plot and its table."
            )
            continue
        fig, name = None, f"{h.id}-runs.png"
        if per_request is not None and len(per_request):
            fig, name = cdf_figure(h, v, per_request), f"{h.id}-cdf.png"
        if fig is None and index is not None:
            fig, name = runs_figure(h, v, index, alpha), f"{h.id}-runs.png"
        if fig is None:
            if reports is not None or per_request is not None:
                out.not_plotted.append(f"{h.id}: no run-level values for its cells in the reports.")
            continue
        out.figures[name] = fig
        out.distribution[h.id] = name
        seen[cells] = h.id
        budget -= 1
    if any(h.track is not Track.A for h in ordered) and out.forest:
        out.not_plotted.append(
            "Track B and C hypotheses: in the forest plot only (the distribution plots are kept for the claims "
            "the promotion is about)."
        )
    return out


def _index(reports: Any):
    from bot.stats.cells import ReportIndex

    return None if reports is None else ReportIndex.build(reports)


def png(fig) -> bytes:
    """The figure as PNG bytes without a Software stamp or timestamp (the same figure gives the same bytes).

    ``savefig`` draws a figure with a layout engine twice (a first draw renders nothing, to lay it out); this
    draws once, laying out in the draw that renders, and encodes as ``print_png`` does: ``savefig``'s bytes.
    zlib level 1: flat-coloured plots compress as well as at the default 6, in a sixth less render time."""
    from matplotlib.image import imsave

    fig.canvas.draw()
    buf = io.BytesIO()
    options = {"format": "png", "origin": "upper", "metadata": {"Software": None}, "pil_kwargs": {"compress_level": 1}}
    imsave(buf, fig.canvas.buffer_rgba(), dpi=fig.dpi, **options)
    return buf.getvalue()


def plot_evidence(
    hypotheses: Sequence[Hypothesis],
    verdicts: Sequence[Verdict],
    reports: Any = None,
    per_request: pd.DataFrame | None = None,
    *,
    alpha: float = 0.05,
    max_images: int = MAX_IMAGES,
) -> EvidencePlots:
    """At most ``max_images`` PNGs for a promotion: the forest plot of every measured cell, then one
    distribution plot per Track A claim (per-request CDFs when ``per_request`` has the claim's cells, else
    the per-run values in ``reports``). ``per_request`` columns: treatment, workload, rate, metric, value,
    where metric is a short name (``ttft_mean``) or its family (``ttft``)."""
    built = build_figures(hypotheses, verdicts, reports, per_request, alpha=alpha, max_images=max_images)
    images = {name: png(fig) for name, fig in built.figures.items()}
    return EvidencePlots(images, built.forest, built.distribution, built.not_plotted)


__all__ = [
    "FOREST",
    "MAX_IMAGES",
    "EvidencePlots",
    "build_figures",
    "forest_markdown",
    "plot_evidence",
    "png",
    "used_runs",
]
