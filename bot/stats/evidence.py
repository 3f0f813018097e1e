"""Evidence people can check at gate 3: tables, plots and a one-screen summary of the verdicts.

A verdict is only as trustworthy as the numbers a reviewer can see behind it,
so every hypothesis gets a table of its cells (means, change, interval,
p-values, noise floor, repetitions). The figures (one forest plot of every
measured cell, one distribution plot per Track A claim) are drawn by
``bot.stats.plots``; the summary is a plain markdown table. There is no chart
of one number per hypothesis: averaging a hypothesis's cells and joining
unrelated hypotheses with a line (as the mermaid chart this replaced did)
mixes metrics whose good direction is opposite.

Determinism: markdown is built from sorted inputs with fixed number formats.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bot.escape import md
from bot.model import Direction, Hypothesis, Track, Verdict, VerdictStatus, status_counts
from bot.stats import StatsError, explain
from bot.stats.shedding import NOT_USED_FLAG, on_mix
from bot.stats.unjudged import NOT_EXERCISED, unjudged_reason

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
    return "—" if x is None else explain.p_text(x)


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
                "baseline mean": explain.mean_text(e.baseline_mean),
                "evolved mean": explain.mean_text(e.evolved_mean),
                "change": _pct(e.rel_change),
                f"{_level(alpha)} CI": f"[{_pct(e.ci_low)}, {_pct(e.ci_high)}]",
                "p": _p(e.p_value),
                "p (adj.)": explain.p_adjusted_text(e.p_adjusted, e.held_by),
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


def _rates_text(h: Hypothesis, v: Verdict) -> str:
    """The rates a hypothesis names, else what was measured: "all measured" only when some cell was. A hypothesis
    set aside as not measurable on these cells takes no cell (``bot.bench.set_aside``), so the rates it names were
    never planned: listing them read as cells a plan with none had run."""
    if NOT_EXERCISED in v.flags and not v.effects:
        return f"none planned ({NOT_EXERCISED})"
    if h.rates:
        return ", ".join(f"{r:g}" for r in h.rates)
    return "all measured" if v.effects else "none measured"


def evidence_markdown(h: Hypothesis, v: Verdict, *, plot: str | None = None, alpha: float = 0.05) -> str:
    """The evidence block for one hypothesis: statement, verdict, flags, cell table, diagnostic.

    ``plot`` is the markdown image of this hypothesis's distribution plot
    (``EvidencePlots.image_markdown``), when it has one.
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
        f"- Prediction: {_prediction_text(h)}"
        if not on_mix(v)
        else "- Prediction: sheddable traffic is shed before protected traffic (the shedding order)",
        f"- Workloads: {md(', '.join(h.workloads))}; rates: {_rates_text(h, v)}"
        if not on_mix(v)
        else "- Judged on: the plan's priority mix, per-class admit rate (the table in the priority-mix section)"
        if v.admission
        else "- To be judged on: the plan's priority mix, per-class admit rate (no usable result yet: the "
        "priority-mix section says why)",
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
    elif not v.admission:
        lines += ["No measured cells.", ""]
    if plot and v.effects:
        lines += [plot, ""]
    lines += [f"_{md(h.diagnostic)}_", ""]
    return "\n".join(lines)


def _mean_change(v: Verdict) -> float | None:
    if not v.effects:
        return None
    return float(np.mean([e.rel_change for e in v.effects]))


#: Beside a mean change that holds a group-sequential cell's early-look estimate; EARLY_STOP_NOTE explains it.
EARLY_STOP = "early stop"
EARLY_STOP_NOTE = (
    f"_{EARLY_STOP}_: a cell decided at an early look of the group-sequential plan shows that look's change, and an "
    "estimate where a test stops early leans away from zero; _all runs_ is the mean change with every run the "
    "looks reached (each cell's is in the hypothesis's flags)."
)


def _mean_change_text(v: Verdict) -> str:
    """The mean change; with a cell decided at an early look, marked so and with every run's mean beside it, so the
    table gate 3 reads first never carries the early-stop estimate (biased away from zero) as a plain number."""
    mean = _pct(_mean_change(v))
    if not any(e.all_runs_change is not None for e in v.effects):
        return mean
    every = float(np.mean([e.rel_change if e.all_runs_change is None else e.all_runs_change for e in v.effects]))
    return f"{mean} ({EARLY_STOP}; all runs {_pct(every)})"


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
                    else "shedding order (priority mix)"
                    if on_mix(v)
                    else (v.effects[0].metric if v.effects else "—")
                ),
                "verdict": _STATUS_MARK[v.status],
                "cells": len(v.effects),
                "mean change": _mean_change_text(v),
                "range": f"{_pct(min(changes))} to {_pct(max(changes))}" if len(changes) > 1 else "—",
                "flags": len(v.flags),
            }
        )
    return pd.DataFrame(rows)


def summary_markdown(verdicts: Sequence[Verdict], hypotheses: Sequence[Hypothesis] | None = None) -> str:
    """Counts and the plain table, for a PR comment or verdicts.md."""
    if not verdicts:
        return "No hypotheses were evaluated."
    head = f"**{status_counts(v.status for v in verdicts)}** of {len(verdicts)} hypotheses."
    unjudged = _not_judged(verdicts, hypotheses or [])
    inconclusive = sum(v.status is VerdictStatus.INCONCLUSIVE for v in verdicts)
    if unjudged:
        head += (
            f" {len(unjudged)} of the {inconclusive} inconclusive are not judged: {_reasons(unjudged)}; each says "
            "what would decide it."
        )
    waiting = [v.hypothesis_id for v in verdicts if v.status is VerdictStatus.INCONCLUSIVE and NOT_USED_FLAG in v.flags]
    if waiting:
        head += (
            f" {', '.join(waiting)} {'is' if len(waiting) == 1 else 'are'} planned on the priority mix and not judged "
            "yet: no priority-mix result could be used (the priority-mix section says why)."
        )
    table = summary_table(verdicts, hypotheses).to_markdown(index=False)
    early = any(e.all_runs_change is not None for v in verdicts for e in v.effects)
    return "\n".join([head, "", table, "", *([EARLY_STOP_NOTE, ""] if early else [])])


def _not_judged(verdicts: Sequence[Verdict], hypotheses: Sequence[Hypothesis]) -> list[Verdict]:
    """Inconclusive hypotheses no benchmark of this plan decides (no prediction: a run the cluster cannot do, or
    a signal no planned run varies), and those whose verdict records why no report decides it (``unjudged_reason``:
    set aside as not measurable on these cells though the request gave a prediction). They count as inconclusive,
    so the count says which of them were never judged, rather than leave them to read like undecided measurements."""
    unpredicted = {h.id for h in hypotheses if h.prediction is None}
    return [
        v
        for v in verdicts
        if v.status is VerdictStatus.INCONCLUSIVE
        and (v.hypothesis_id in unpredicted or unjudged_reason(v) is not None)
        and not on_mix(v)
    ]


def _reasons(unjudged: Sequence[Verdict]) -> str:
    """'B2, B4 (not runnable on this cluster), B7 (no planned run varies it)': each verdict's own reason
    (``unjudged_reason``, the words the PR body and gate 3 use), ids sharing one named once."""
    by_reason: dict[str, list[str]] = {}
    for v in unjudged:
        by_reason.setdefault(unjudged_reason(v) or "no benchmark report decides it", []).append(v.hypothesis_id)
    return ", ".join(f"{', '.join(ids)} ({reason})" for reason, ids in by_reason.items())


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


#: What the page says above the valid reports a group-sequential cell's looks did not reach (stage 5's page too).
UNREACHED_LEAD = (
    "These reports passed validation, but their cell's looks stopped before them: the other arm is short there "
    "(the reason names the runs it is missing), or they go past the plan's last look. No verdict uses them, and "
    "they are not counted as rejected."
)


def evidence_files(
    hypotheses: Sequence[Hypothesis],
    verdicts: Sequence[Verdict],
    *,
    reports: Any = None,
    per_request: pd.DataFrame | None = None,
    rejected: Sequence[tuple[str, str]] = (),
    alpha: float = 0.05,
    warnings: Sequence[str] = (),
    priority_mix: str = "",
    queues: str = "",
) -> dict[str, str | bytes]:
    """Everything ``promote evaluate`` writes, as out-dir-relative path -> content.

    verdicts.json, verdicts.md (``warnings`` first, as quoted Markdown the caller wrote: what the verdicts
    could not check, e.g. reports never bound to their arm; then summary, forest plot, rejected reports, one
    evidence block per hypothesis), and plots/*.png (``bot.stats.plots``). ``priority_mix`` is stage 5's
    priority-mix section (Markdown), placed before the tracks as on stage 5's page, and ``queues`` its
    waiting-queue section after it (``run_validate.queues_markdown_for``), which a scheduler's texts point to.
    """
    from bot.stats.judged import NOT_USED_HEADING, split_unreached
    from bot.stats.plots import plot_evidence

    by_id = {v.hypothesis_id: v for v in verdicts}
    ordered = sorted((h for h in hypotheses if h.id in by_id), key=_order)
    plots = plot_evidence(ordered, verdicts, reports, per_request, alpha=alpha)
    md = ["# Verdicts", ""]
    md += [line for w in warnings for line in (f"> ⚠️ {w}", "")]
    md += [summary_markdown([by_id[h.id] for h in ordered], ordered)]
    md += [plots.summary_markdown("plots", alpha=alpha)]
    invalid, unreached = split_unreached(rejected)
    if invalid:
        md += [f"## {NOT_USED_HEADING}", "", "| Report | Reason |", "|---|---|"]
        md += [f"| `{_cell_text(p)}` | {_cell_text(r)} |" for p, r in invalid] + [""]
    if unreached:
        md += [
            "## Valid reports no look reached (not used)",
            "",
            UNREACHED_LEAD,
            "",
            "| Report | Reason |",
            "|---|---|",
        ]
        md += [f"| `{_cell_text(p)}` | {_cell_text(r)} |" for p, r in unreached] + [""]
    md += [line for section in (priority_mix, queues) if section for line in (section, "")]
    for track in Track:
        hs = [h for h in ordered if h.track == track]
        if not hs:
            continue
        md += [f"## Track {track.value}", ""]
        for h in hs:
            md.append(evidence_markdown(h, by_id[h.id], plot=plots.image_markdown(h.id, "plots"), alpha=alpha))
    files: dict[str, str | bytes] = {
        "verdicts.json": verdicts_to_json([by_id[h.id] for h in ordered]),
        "verdicts.md": "\n".join(md).rstrip() + "\n",
    }
    files.update({f"plots/{name}": png for name, png in sorted(plots.images.items())})
    return files


def _order(h: Hypothesis) -> tuple[str, int, str]:
    digits = "".join(ch for ch in h.id[1:] if ch.isdigit())
    return (h.track.value, int(digits) if digits else 0, h.id)


__all__ = [
    "evidence_files",
    "evidence_markdown",
    "evidence_table",
    "summary_markdown",
    "summary_table",
    "verdicts_from_json",
    "verdicts_to_json",
]
