"""The runs a verdict judged, for the checks beside its tests (the mechanism check, the shedding guard).

A group-sequential cell judges only the first runs of each arm: the looks the runs reached, and of those the
look that decided it. A check that read every run would contradict the verdict ("the later runs do not change
the decision") with runs the verdict says it did not use, so these cut the reports to the judged runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd

from bot.stats import sequential
from bot.stats.cells import BASELINE, EVOLVED, TABLE_COLUMNS, ReportIndex, rate_key
from bot.stats.cells import _rep_label as rep_label
from bot.stats.design import DecisionRule


def _schedule(decision: DecisionRule, workload: str, rate: float) -> list[int] | None:
    seq = decision.sequential
    return None if seq is None else seq.looks.get(f"{workload}@{rate:g}")


def judged_arms(index: ReportIndex, decision: DecisionRule) -> Callable[[str, float, str], tuple[np.ndarray, ...]]:
    """``index.arms`` cut to the runs a cell's verdict uses: a group-sequential cell's looks reached (none below
    its first look), so a check beside the tests never reads runs the verdict says it did not use."""

    def arms(workload: str, rate: float, metric: str) -> tuple[np.ndarray, np.ndarray]:
        b, e = index.arms(workload, rate, metric)
        schedule = _schedule(decision, workload, rate)
        if schedule is None:
            return b, e
        taken = sequential.looks_taken(schedule, min(b.size, e.size))
        n = taken[-1] if taken else 0
        return b[:n], e[:n]

    return arms


def judged_requests(index: ReportIndex, requests, workload: str, rate: float, metric: str, runs: int | None):
    """``index`` with this cell's request counts cut to the first ``runs`` runs of each arm (the runs of ``metric``
    the deciding look judged, matched by repetition label), for the shedding guard; ``index`` itself when every
    run was judged (``runs`` None) or the reports carry no per-run request rows."""
    if runs is None or requests is None or not len(requests):
        return index
    lb, le = index.labels(workload, rate, metric)
    keep = {BASELINE: set(lb[:runs]), EVOLVED: set(le[:runs])}
    rk = rate_key(rate)
    cols = (requests[c].to_numpy() for c in ("workload", "rate", "repetition", "treatment"))
    mask = [
        str(wl) == workload and rate_key(r) == rk and rep_label(rep) in keep.get(str(t), set())
        for wl, r, rep, t in zip(*cols, strict=True)
    ]
    cut = ReportIndex.build(SimpleNamespace(table=pd.DataFrame(columns=list(TABLE_COLUMNS)), requests=requests[mask]))
    counts = {k: v for k, v in index.requests.items() if k != (workload, rk)}
    counts.update(cut.requests)
    return replace(index, requests=counts)


#: How reports-not-used.json starts the reason for a run no look of its cell reached (gate 3 reads it apart: such a
#: report is no bad evidence, it only decides nothing).
PAST_LAST_LOOK = "past the last look its cell reached"


def runs_past_last_look(reports, decision: DecisionRule | None) -> dict[tuple[str, str, float, str], str]:
    """(arm, workload, rate key, repetition label) -> why, for every run that a group-sequential cell's looks did not
    reach: its arm ran more runs than the cell's last look took (the plan's horizon, or the other arm's count), so
    no verdict used it. Counting it as used said "141 reports used" beside a flag saying one of them was not; the
    page and reports-not-used.json must agree. A run is used when any metric's looks reach it; a cell below its
    first look keeps its runs (its verdict says why nothing was judged)."""
    seq = None if decision is None else decision.sequential
    if seq is None:
        return {}
    index = ReportIndex.build(reports)
    used: dict[tuple[str, str, float], set[str]] = {}
    seen: dict[tuple[str, str, float], set[str]] = {}
    reached: dict[tuple[str, float], tuple[int, list[int]]] = {}
    for wl, rate, metric in sorted(index.values):
        b, e = index.arms(wl, rate, metric)
        labels = dict(zip((BASELINE, EVOLVED), index.labels(wl, rate, metric), strict=True))
        schedule = _schedule(decision, wl, rate)
        taken = sequential.looks_taken(schedule, min(b.size, e.size)) if schedule is not None else []
        n = taken[-1] if taken else None
        if n is not None:
            reached[(wl, rate)] = max(reached.get((wl, rate), (0, [])), (n, list(schedule or [])))
        for arm, names in labels.items():
            seen.setdefault((arm, wl, rate), set()).update(names)
            used.setdefault((arm, wl, rate), set()).update(names if n is None else names[:n])
    out = {}
    for (arm, wl, rate), names in sorted(seen.items()):
        n, schedule = reached.get((wl, rate), (0, []))
        why = _why_short(seen, wl, rate, n, schedule)
        for label in sorted(names - used[(arm, wl, rate)]):
            out[(arm, wl, rate, label)] = (
                f"{PAST_LAST_LOOK} ({wl} @ {rate:g} req/s): {why}, so its looks use the first {n} runs per arm "
                f"(looks at {schedule}) and no verdict uses this run; it is valid, and a group-sequential decision "
                "does not change with runs after its last look"
            )
    return out


def _rep_order(label: str) -> tuple[int, float, str]:
    return (0, float(label), "") if label.replace(".", "", 1).isdigit() else (1, 0.0, label)


def _why_short(seen: dict[tuple[str, str, float], set[str]], wl: str, rate: float, n: int, schedule: list[int]) -> str:
    """Why a cell's looks stopped where they did, naming what is missing: the arm one run short, and which of its
    repetitions (the other arm has them), else the plan's last look, else the runs the next look needs. A valid run
    the looks did not reach was listed as failing validation, and the run actually missing was named nowhere."""
    labels = {arm: seen.get((arm, wl, rate), set()) for arm in (BASELINE, EVOLVED)}
    counts = {arm: len(v) for arm, v in labels.items()}
    last = schedule[-1] if schedule else n
    short, long = sorted(labels, key=lambda a: counts[a])
    parts = []
    if counts[short] < min(counts[long], last):
        wanted = sorted(labels[long], key=_rep_order)[:last]  # the other arm's runs the looks could have used
        missing = [r for r in wanted if r not in labels[short]]
        shown = ", ".join(f"rep-{r}" for r in missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        parts.append(
            f"the {short} arm has {counts[short]} run(s) here" + (f" ({short} {shown} missing)" if missing else "")
        )
    later = [k for k in schedule if k > n]
    if later and counts[short] > n:
        parts.append(f"the next look needs {later[0]} runs per arm")
    if counts[long] > last:
        parts.append(f"the plan's looks end at {last} runs per arm")
    return "; ".join(parts) or "no look was reached"


#: The heading over the first group ``split_unreached`` returns (stage 5's page and `promote evaluate`'s): reports
#: that failed validation, and the valid ones of a cell the plan does not run, which decide nothing either.
NOT_USED_HEADING = (
    "Reports not used (failed validation, duplicates, cells not in the plan, or not evidence for this plan's arms)"
)


def split_unreached(rejected) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(reports that failed validation or are no evidence, valid reports past the last look of their cell): listed
    apart and counted apart, so a valid run is never called rejected (``runs_past_last_look``)."""
    invalid = [(p, r) for p, r in rejected if not r.startswith(PAST_LAST_LOOK)]
    return invalid, [(p, r) for p, r in rejected if r.startswith(PAST_LAST_LOOK)]
