"""Evidence people can check at gate 3: tables, plots and a one-screen summary of the verdicts.

A verdict is only as trustworthy as the numbers a reviewer can see behind it,
so every hypothesis gets a table of its cells (means, change, interval,
p-values, noise floor, repetitions), a forest plot of the change per cell with
its interval and the noise floor, and, when the run-level or per-request data
are at hand, baseline-vs-evolved plots and CDFs. The summary is a plain
markdown table plus a mermaid ``xychart-beta`` chart, both of which GitHub
renders inline.

Mermaid draws bars up from the bottom of the y axis, not from zero
(mermaid-js/mermaid#6517, #5618), which would show a 15% *decrease* as a tall
bar; the chart therefore plots the change as a line over a zero line.

Determinism: markdown is built from sorted inputs with fixed number formats;
PNGs are rendered by matplotlib's Agg backend with the ``Software`` metadata
removed and no timestamp, so the same verdicts give the same bytes in the same
environment (font or matplotlib upgrades may change pixels, never the meaning).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bot.escape import md
from bot.model import Direction, Hypothesis, Track, Verdict, VerdictStatus, status_counts
from bot.stats import StatsError

_STATUS_MARK = {
    VerdictStatus.CONFIRMED: "confirmed",
    VerdictStatus.REFUTED: "**refuted**",
    VerdictStatus.INCONCLUSIVE: "inconclusive",
    VerdictStatus.NOT_TESTABLE: "not testable as translated",
}


def _pct(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x * 100:+.{digits}f}%"


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def _cell_text(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _level(alpha: float) -> str:
    return f"{(1 - 2 * alpha) * 100:.0f}%"


# --------------------------------------------------------------------------
# Tables and markdown
# --------------------------------------------------------------------------


def evidence_table(v: Verdict, *, alpha: float = 0.05) -> pd.DataFrame:
    """One row per measured cell of a verdict, formatted for people (strings, fixed precision)."""
    rows = []
    for e in v.effects:
        rows.append(
            {
                "workload": e.workload,
                "rate (req/s)": f"{e.rate:g}",
                "metric": e.metric,
                "baseline mean": f"{e.baseline_mean:.4g}",
                "evolved mean": f"{e.evolved_mean:.4g}",
                "change": _pct(e.rel_change),
                f"{_level(alpha)} CI": f"[{_pct(e.ci_low)}, {_pct(e.ci_high)}]",
                "p": _p(e.p_value),
                "p (adj.)": _p(e.p_adjusted),
                "T_eff": f"{e.t_eff * 100:.1f}%",
                "baseline CV": f"{e.cv_baseline * 100:.1f}%",
                "reps (b/e)": f"{e.n_baseline}/{e.n_evolved}"
                + (f" ({len(e.excluded_runs)} outlier run(s) excluded)" if e.excluded_runs else ""),
                "test": e.test or "not tested",
            }
        )
    return pd.DataFrame(rows)


def _prediction_text(h: Hypothesis) -> str:
    p = h.prediction
    if p is None:
        return "no benchmark prediction (decided by the stage 4 tests or by review)"
    if p.direction is Direction.EQUIVALENT:
        what = f"stays within ±{p.margin:.0%} of baseline (TOST)"
    elif p.direction is Direction.NO_WORSE:
        what = f"gets no worse than {p.margin:.0%} (one-sided non-inferiority)"
    else:
        what = f"{p.direction.value}s"
    text = f"`{p.metric}` {what}"
    if p.blis_magnitude is not None:
        text += f"; BLIS predicted {_pct(p.blis_magnitude)}"
    return text


def evidence_markdown(h: Hypothesis, v: Verdict, *, plot_dir: str | None = None, alpha: float = 0.05) -> str:
    """The evidence block for one hypothesis: statement, verdict, flags, cell table, diagnostic.

    ``plot_dir`` (relative to where the markdown is written) adds links to the
    PNGs ``plot_effects`` produced for this hypothesis.
    """
    if h.id != v.hypothesis_id:
        raise StatsError(
            f"evidence for {h.id}: got the verdict of {v.hypothesis_id}; pair each hypothesis with its own verdict"
        )
    lines = [
        f"### {h.id} — {md(h.title)}",
        "",
        f"**Verdict: {v.status.value.upper()}** · Track {h.track.value} · {h.family.value} · {h.type.value} · {h.vvuq.value}",
        "",
        f"> {md(h.statement)}",
        "",
        f"- Prediction: {_prediction_text(h)}",
        f"- Workloads: {md(', '.join(h.workloads))}; rates: {', '.join(f'{r:g}' for r in h.rates) or 'all measured'}",
        f"- Source: `{md(h.source)}`",
        "",
        md(v.summary),
        "",
    ]
    if v.flags:
        lines += ["**Flags**", ""] + [f"- {md(f)}" for f in v.flags] + [""]
    table = evidence_table(v, alpha=alpha)
    if len(table):
        lines += [table.to_markdown(index=False), ""]
    else:
        lines += ["No measured cells.", ""]
    if plot_dir and v.effects:
        base = plot_dir.rstrip("/")
        lines += [f"![{h.id}: change per cell]({base}/{h.id}-effects.png)", ""]
    lines += [f"_{md(h.diagnostic)}_", ""]
    return "\n".join(lines)


def _mean_change(v: Verdict) -> float | None:
    if not v.effects:
        return None
    return float(np.mean([e.rel_change for e in v.effects]))


def summary_table(verdicts: Sequence[Verdict], hypotheses: Sequence[Hypothesis] | None = None) -> pd.DataFrame:
    """One row per verdict: status, measured cells, mean and range of the change, flags."""
    by_id = {h.id: h for h in hypotheses or []}
    rows = []
    for v in verdicts:
        h = by_id.get(v.hypothesis_id)
        changes = [e.rel_change for e in v.effects]
        rows.append(
            {
                "hypothesis": v.hypothesis_id,
                "track": v.hypothesis_id[0],
                "prediction": (
                    f"{h.prediction.metric} {h.prediction.direction.value}"
                    if h and h.prediction
                    else (v.effects[0].metric if v.effects else "—")
                ),
                "verdict": _STATUS_MARK[v.status],
                "cells": len(v.effects),
                "mean change": _pct(_mean_change(v)),
                "range": f"{_pct(min(changes))} to {_pct(max(changes))}" if len(changes) > 1 else "—",
                "flags": len(v.flags),
            }
        )
    return pd.DataFrame(rows)


def mermaid_chart(verdicts: Sequence[Verdict]) -> str:
    """A mermaid xychart-beta of the mean relative change (%) per hypothesis with measured cells."""
    pts = [(v.hypothesis_id, _mean_change(v)) for v in verdicts]
    pts = [(i, c * 100) for i, c in pts if c is not None]
    if not pts:
        return ""
    values = [round(c, 1) for _, c in pts]
    lo = math.floor(min(*values, 0) / 5) * 5 - 5
    hi = math.ceil(max(*values, 0) / 5) * 5 + 5
    labels = ", ".join(f'"{i}"' for i, _ in pts)
    return "\n".join(
        [
            "```mermaid",
            "xychart-beta",
            '    title "Evolved vs baseline: mean relative change per hypothesis (%)"',
            f"    x-axis [{labels}]",
            f'    y-axis "change (%)" {lo} --> {hi}',
            f"    line [{', '.join(f'{x:g}' for x in values)}]",
            f"    line [{', '.join('0' for _ in values)}]",
            "```",
        ]
    )


def summary_markdown(verdicts: Sequence[Verdict], hypotheses: Sequence[Hypothesis] | None = None) -> str:
    """Counts, the plain table and the mermaid chart, for a PR comment or verdicts.md."""
    if not verdicts:
        return "No hypotheses were evaluated."
    head = f"**{status_counts(v.status for v in verdicts)}** of {len(verdicts)} hypotheses."
    parts = [head, "", summary_table(verdicts, hypotheses).to_markdown(index=False), ""]
    chart = mermaid_chart(verdicts)
    if chart:
        parts += [chart, "", "_The line is the mean change over each hypothesis's cells; the flat line is zero._", ""]
    return "\n".join(parts)


# --------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------


def verdicts_to_json(verdicts: Iterable[Verdict]) -> str:
    """Verdicts as a JSON array (input order, fixed key order, trailing newline)."""
    return json.dumps([v.model_dump(mode="json") for v in verdicts], indent=2) + "\n"


def verdicts_from_json(text: str) -> list[Verdict]:
    """The inverse of ``verdicts_to_json``; StatsError names what is wrong."""
    from pydantic import ValidationError

    from bot.model import describe_validation_error

    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StatsError(
            f"verdicts JSON: not valid JSON at line {exc.lineno}; regenerate it with `promote evaluate`"
        ) from None
    if not isinstance(raw, list):
        raise StatsError("verdicts JSON: expected an array of verdicts")
    out = []
    for i, item in enumerate(raw):
        try:
            out.append(Verdict.model_validate(item))
        except ValidationError as exc:
            raise StatsError(f"verdicts JSON item {i}: {describe_validation_error(exc)}") from None
    return out


# --------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "promotion-bot", "path.simplify": True})
    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    # zlib level 1: flat-coloured plots compress as well as at the default 6, in a sixth less render time.
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None}, pil_kwargs={"compress_level": 1})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def plot_effects(
    hypotheses: Sequence[Hypothesis],
    verdicts: Sequence[Verdict],
    reports: Any = None,
    per_request: pd.DataFrame | None = None,
    *,
    alpha: float = 0.05,
) -> dict[str, bytes]:
    """PNGs per hypothesis with measured cells, keyed by file name.

    - ``<id>-effects.png``: relative change per cell with its Welch interval,
      the noise floor ±T_eff and zero (the equivalence margin for TOST claims);
    - ``<id>-arms.png`` (when ``reports`` is given): baseline vs evolved per cell,
      every repetition as a dot, the mean with its t-interval;
    - ``<id>-cdf.png`` (when ``per_request`` is given): empirical CDFs of the
      per-request values of the hypothesis's metric family, baseline vs evolved,
      per cell. ``per_request`` columns: treatment, workload, rate, metric, value,
      where metric is a short name (``ttft_mean``) or its family (``ttft``).
    """
    by_id = {v.hypothesis_id: v for v in verdicts}
    out: dict[str, bytes] = {}
    for h in sorted(hypotheses, key=lambda x: x.id):
        v = by_id.get(h.id)
        if v is None or not v.effects:
            continue
        out[f"{h.id}-effects.png"] = _plot_forest(h, v, alpha)
        if reports is not None:
            png = _plot_arms(h, v, reports, alpha)
            if png:
                out[f"{h.id}-arms.png"] = png
        if per_request is not None and len(per_request):
            png = _plot_cdf(h, v, per_request)
            if png:
                out[f"{h.id}-cdf.png"] = png
    return out


def _plot_forest(h: Hypothesis, v: Verdict, alpha: float) -> bytes:
    plt = _pyplot()
    effects = v.effects
    n = len(effects)
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.45 * n))
    y = np.arange(n)[::-1]
    est = np.array([e.rel_change for e in effects]) * 100
    lo = np.array([e.ci_low for e in effects]) * 100
    hi = np.array([e.ci_high for e in effects]) * 100
    ax.errorbar(est, y, xerr=[est - lo, hi - est], fmt="o", color="#1f4e79", ecolor="#1f4e79", capsize=3)
    for yi, e in zip(y, effects, strict=False):
        ax.plot([-e.t_eff * 100, e.t_eff * 100], [yi, yi], color="#999999", lw=6, alpha=0.35, solid_capstyle="butt")
    ax.axvline(0, color="black", lw=0.8)
    if h.prediction is not None and h.prediction.direction in (Direction.EQUIVALENT, Direction.NO_WORSE):
        m = h.prediction.margin * 100
        if h.prediction.direction is Direction.EQUIVALENT:
            xs: tuple[float, ...] = (-m, m)
        else:  # only the bad side is a boundary for a no-regression claim
            xs = (m,) if _better(effects[0].metric) == "lower" else (-m,)
        for x in xs:
            ax.axvline(x, color="#b22222", lw=0.8, ls="--")
    ax.set_yticks(y, [f"{e.workload} @ {e.rate:g}" for e in effects])
    metric = effects[0].metric
    margin = (
        "; red dashes = margin"
        if h.prediction and h.prediction.direction in (Direction.EQUIVALENT, Direction.NO_WORSE)
        else ""
    )
    ax.set_xlabel(f"{metric}: evolved vs baseline (%); grey band = noise floor ±T_eff{margin}")
    ax.set_title(f"{h.id} ({v.status.value}): change with {_level(alpha)} Welch CI", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def _better(metric: str) -> str:
    from bot.bench.metrics import METRICS

    return METRICS[metric].better if metric in METRICS else "lower"


def _arms_values(reports: Any, workload: str, rate: float, metric: str) -> tuple[np.ndarray, np.ndarray]:
    t = reports.table
    sel = t[(t["workload"] == workload) & (np.isclose(t["rate"].astype(float), rate)) & (t["metric"] == metric)]
    b = sel[sel["treatment"] == "baseline"]["value"].to_numpy(float)
    e = sel[sel["treatment"] == "evolved"]["value"].to_numpy(float)
    return b, e


def _t_interval(x: np.ndarray, alpha: float) -> tuple[float, float]:
    from scipy import stats

    if x.size < 2:
        return float(x.mean()), float(x.mean())
    half = stats.t.ppf(1 - alpha, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def _plot_arms(h: Hypothesis, v: Verdict, reports: Any, alpha: float) -> bytes | None:
    from bot.stats.rule import cell_stats

    plt = _pyplot()
    effects = v.effects
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(effects) + 1.5), 3.6))
    any_data = False
    outlier_label = "outlier run (excluded)"
    for i, e in enumerate(effects):
        b, ev = _arms_values(reports, e.workload, e.rate, e.metric)
        flags = (np.zeros(b.size, bool), np.zeros(ev.size, bool))
        if b.size and ev.size and np.all(b > 0) and np.all(ev > 0):
            st = cell_stats(b, ev)  # the verdict's own outlier rule, so the plot shows what it excluded
            flags = (st.flag_b[0], st.flag_e[0])
        for off, arr, flag, color, label in (
            (-0.15, b, flags[0], "#7f7f7f", "baseline"),
            (0.15, ev, flags[1], "#1f77b4", "evolved"),
        ):
            if not arr.size:
                continue
            any_data = True
            kept = arr[~flag]
            ax.scatter(np.full(kept.size, i + off), kept, s=14, color=color, alpha=0.6, label=label if i == 0 else None)
            if flag.any():
                ax.scatter(
                    np.full(int(flag.sum()), i + off), arr[flag], s=30, marker="x", color="#b22222", label=outlier_label
                )
                outlier_label = None
            lo, hi = _t_interval(kept, alpha)
            ax.errorbar(
                [i + off],
                [kept.mean()],
                yerr=[[kept.mean() - lo], [hi - kept.mean()]],
                fmt="_",
                color=color,
                capsize=5,
                markersize=14,
            )
    if not any_data:
        plt.close(fig)
        return None
    from bot.bench.metrics import METRICS

    unit = METRICS[effects[0].metric].unit if effects[0].metric in METRICS else ""
    ax.set_xticks(range(len(effects)), [f"{e.workload}\n@ {e.rate:g}" for e in effects])
    ax.set_ylabel(f"{effects[0].metric} ({unit})")
    ax.set_title(f"{h.id}: repetitions, mean and {_level(alpha)} t-interval per arm", fontsize=10)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _plot_cdf(h: Hypothesis, v: Verdict, per_request: pd.DataFrame) -> bytes | None:
    need = {"treatment", "workload", "rate", "metric", "value"}
    if not need <= set(per_request.columns):
        raise StatsError(
            f"per-request data: missing columns {sorted(need - set(per_request.columns))}; expected {sorted(need)}"
        )
    plt = _pyplot()
    metric = v.effects[0].metric
    family = metric.split("_")[0]
    df = per_request[per_request["metric"].isin([metric, family])]
    cells = [
        e for e in v.effects if len(df[(df["workload"] == e.workload) & np.isclose(df["rate"].astype(float), e.rate)])
    ]
    if not cells:
        return None
    fig, axes = plt.subplots(1, len(cells), figsize=(3.6 * len(cells), 3.2), squeeze=False)
    for ax, e in zip(axes[0], cells, strict=False):
        sel = df[(df["workload"] == e.workload) & np.isclose(df["rate"].astype(float), e.rate)]
        for treatment, color in (("baseline", "#7f7f7f"), ("evolved", "#1f77b4")):
            x = np.sort(sel[sel["treatment"] == treatment]["value"].to_numpy(float))
            if x.size:
                ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color=color, label=treatment)
        ax.set_title(f"{e.workload} @ {e.rate:g}", fontsize=9)
        ax.set_xlabel(family)
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("fraction of requests")
    axes[0][0].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{h.id}: per-request CDF of {family}", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def evidence_files(
    hypotheses: Sequence[Hypothesis],
    verdicts: Sequence[Verdict],
    *,
    reports: Any = None,
    per_request: pd.DataFrame | None = None,
    rejected: Sequence[tuple[str, str]] = (),
    alpha: float = 0.05,
) -> dict[str, str | bytes]:
    """Everything ``promote evaluate`` writes, as out-dir-relative path -> content.

    verdicts.json, verdicts.md (summary, rejected reports, one evidence block per
    hypothesis), and plots/<id>-*.png.
    """
    by_id = {v.hypothesis_id: v for v in verdicts}
    ordered = sorted((h for h in hypotheses if h.id in by_id), key=_order)
    plots = plot_effects(ordered, verdicts, reports, per_request, alpha=alpha)
    md = ["# Verdicts", "", summary_markdown([by_id[h.id] for h in ordered], ordered), ""]
    if rejected:
        md += ["## Reports that failed validation (not used)", "", "| Report | Reason |", "|---|---|"]
        md += [f"| `{_cell_text(p)}` | {_cell_text(r)} |" for p, r in rejected] + [""]
    for track in Track:
        hs = [h for h in ordered if h.track == track]
        if not hs:
            continue
        md += [f"## Track {track.value}", ""]
        for h in hs:
            has_plot = f"{h.id}-effects.png" in plots
            md.append(evidence_markdown(h, by_id[h.id], plot_dir="plots" if has_plot else None, alpha=alpha))
    files: dict[str, str | bytes] = {
        "verdicts.json": verdicts_to_json([by_id[h.id] for h in ordered]),
        "verdicts.md": "\n".join(md).rstrip() + "\n",
    }
    files.update({f"plots/{name}": png for name, png in sorted(plots.items())})
    return files


def _order(h: Hypothesis) -> tuple[str, int, str]:
    digits = "".join(ch for ch in h.id[1:] if ch.isdigit())
    return (h.track.value, int(digits) if digits else 0, h.id)


__all__ = [
    "evidence_files",
    "evidence_markdown",
    "evidence_table",
    "mermaid_chart",
    "plot_effects",
    "summary_markdown",
    "summary_table",
    "verdicts_from_json",
    "verdicts_to_json",
]
