"""The noise a plan is sized for, read from earlier results: the largest baseline coefficient of variation.

Sample reports are refused unless ``allow_sample_data`` (as stage 5 refuses them): their noise is made
up, and a GPU plan sized from it would be sized for a cluster nobody measured. The largest CV over
cells and metrics is taken, as sim2real v3 did: a plan sized for the noisiest cell holds for the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bot.bench.evidence import EvidencePolicy, load_evidence


def largest_baseline_cv(
    results_dir: str | Path, metrics: Iterable[str] | None = None, *, allow_sample_data: bool = False
) -> tuple[float | None, bool]:
    """(the largest baseline CV, or None when no baseline cell has 2 or more repetitions; whether sample reports
    went into it)."""
    policy = EvidencePolicy(allow_sample_data=allow_sample_data)
    rs = load_evidence(results_dir, policy)
    t = rs.table[rs.table["treatment"] == "baseline"]
    wanted = sorted(set(metrics)) if metrics else None
    if wanted:
        t = t[t["metric"].isin(wanted)]
    cvs = []
    for _, g in t.groupby(["workload", "rate", "metric"], sort=True):
        if len(g) < 2:
            continue
        mean = float(g["value"].mean())
        if mean <= 0:
            continue
        cvs.append(float(g["value"].std(ddof=1)) / mean)
    return (max(cvs) if cvs else None), bool(policy.sample_used)


def prior_cv_from_results(
    results_dir: str | Path, metrics: Iterable[str] | None = None, *, allow_sample_data: bool = False
) -> tuple[float, bool]:
    """The largest baseline CV in earlier results, and whether sample reports went into it (``prior_cv``)."""
    from bot.bench.plan import PlanError

    cv, sample = largest_baseline_cv(results_dir, metrics, allow_sample_data=allow_sample_data)
    if cv is None:
        raise PlanError(
            f"{results_dir}: no baseline cell with 2 or more repetitions to estimate the CV from; "
            "pass prior_cv or results with repeated baseline runs"
        )
    return cv, sample
