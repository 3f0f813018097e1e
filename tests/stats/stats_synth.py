"""Synthetic report sets with a known truth, shaped like bot.bench.reports.ReportSet.

The statistics only read ``table`` and ``requests``; building the DataFrames
directly keeps these tests independent of YAML parsing and fast enough to run
thousands of simulated experiments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bot.bench.metrics import METRICS
from bot.model import VVUQ, Direction, Family, Hypothesis, HypothesisType, Prediction, Track
from bot.stats.power import log_sd


@dataclass
class SynthReports:
    table: pd.DataFrame
    requests: pd.DataFrame
    rejected: list[tuple[str, str]] = field(default_factory=list)


def lognormal(rng: np.random.Generator, mean: float, cv: float, n: int) -> np.ndarray:
    """n run-level values with arithmetic mean ``mean`` and coefficient of variation ``cv``."""
    s = log_sd(cv)
    return rng.lognormal(np.log(mean) - s * s / 2, s, n)


def build(cells: list[dict]) -> SynthReports:
    """cells: dicts with workload, rate, metric, baseline (array), evolved (array), and optional
    lost_baseline / lost_evolved (failed+incomplete per repetition) and total (requests per repetition)."""
    rows, req = [], {}
    for c in cells:
        for treatment in ("baseline", "evolved"):
            for rep, v in enumerate(np.asarray(c[treatment], dtype=float)):
                m = METRICS[c["metric"]]
                rows.append(
                    {
                        "treatment": treatment,
                        "workload": c["workload"],
                        "rate": float(c["rate"]),
                        "repetition": rep,
                        "metric": c["metric"],
                        "statistic": m.statistic,
                        "value": float(v),
                        "unit": m.unit,
                    }
                )
                key = (treatment, c["workload"], float(c["rate"]), rep)
                lost = c.get(f"lost_{treatment}", 0)
                req[key] = {
                    "treatment": treatment,
                    "workload": c["workload"],
                    "rate": float(c["rate"]),
                    "repetition": rep,
                    "total": int(c.get("total", 1000)),
                    "failures": int(lost),
                    "incomplete": 0,
                }
    return SynthReports(pd.DataFrame(rows), pd.DataFrame(list(req.values())))


def arm_pair(rng, *, cv: float, effect: float, n: int, n_evolved: int | None = None, mean: float = 100.0):
    b = lognormal(rng, mean, cv, n)
    e = lognormal(rng, mean * (1 + effect), cv, n if n_evolved is None else n_evolved)
    return b, e


def hypothesis(
    hid: str = "A1",
    *,
    metric: str = "ttft_mean",
    direction: Direction = Direction.DECREASE,
    workloads=("chat",),
    rates=(),
    margin: float = 0.05,
    blis_magnitude: float | None = None,
) -> Hypothesis:
    track = Track(hid[0])
    htype = {Direction.EQUIVALENT: HypothesisType.EQUIVALENCE}.get(direction, HypothesisType.DOMINANCE)
    return Hypothesis(
        id=hid,
        track=track,
        title=f"{hid} {metric} {direction.value}",
        statement=f"{metric} {direction.value}",
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type=htype,
        diagnostic="If this fails, it would indicate the mechanism does not transfer.",
        workloads=list(workloads),
        rates=list(rates),
        prediction=Prediction(metric=metric, direction=direction, margin=margin, blis_magnitude=blis_magnitude),
        source=hid,
    )
