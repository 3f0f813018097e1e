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
