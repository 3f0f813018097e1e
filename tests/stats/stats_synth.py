"""Synthetic report sets with a known truth, shaped like bot.bench.reports.ReportSet.

The statistics only read ``table`` and ``requests``; building the DataFrames
directly keeps these tests independent of YAML parsing and fast enough to run
thousands of simulated experiments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bot.model import VVUQ, Direction, Family, Hypothesis, HypothesisType, Prediction, Track
from bot.model.metrics import METRICS
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


def with_sample_cv(cv: float, n: int = 6, mean: float = 100.0) -> np.ndarray:
    """n run-level values whose *sample* CV, as the rule computes it (``rule.cell_stats``: from the log sd), is
    exactly ``cv``: evenly spread on the log scale, so no run is an outlier. For tests of the CV limit's edge."""
    z = np.linspace(-1.0, 1.0, n)
    return mean * np.exp(log_sd(cv) * z / z.std(ddof=1))


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


# --------------------------------------------------------------------------
# Batches: thousands of simulated experiments at once, drawn here with numpy only
# (never with the code under test), judged by the same functions evaluate() calls.
# --------------------------------------------------------------------------

SHAPES = ("normal", "lognormal", "outliers", "heteroscedastic")
OUTLIER_RATE, OUTLIER_FACTOR, HETERO_RATIO = 0.10, 5.0, 2.0


def draw(rng: np.random.Generator, shape: str, *, sims: int, n: int, cv: float, mean: float = 100.0) -> np.ndarray:
    """(sims, n) run-level values with arithmetic mean ``mean`` and CV ``cv`` under a noise shape.

    - ``normal``: raw-scale normal noise;
    - ``lognormal``: log-normal noise (multiplicative);
    - ``outliers``: log-normal, then each run independently x5 with probability 10%
      (a throttled or drained run);
    - ``heteroscedastic`` is a property of a *pair* of arms: see ``draw_pair``.
    """
    if shape == "normal":
        return rng.normal(mean, cv * mean, (sims, n))
    s = log_sd(cv)
    x = rng.lognormal(np.log(mean) - s * s / 2, s, (sims, n))
    if shape == "outliers":
        x = np.where(rng.random((sims, n)) < OUTLIER_RATE, x * OUTLIER_FACTOR, x)
    return x


def draw_pair(
    rng: np.random.Generator, shape: str, *, sims: int, n: int, cv: float, effect: float, n_evolved: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and evolved arms, the evolved arm's distribution scaled by (1 + effect).

    ``heteroscedastic``: log-normal arms, the evolved arm twice as noisy (log-scale sd x 2) with
    its median (1 + effect) x the baseline's (with unequal spreads the ratio of arithmetic means
    also moves with the spread; the claims are about the typical run).
    """
    ne = n if n_evolved is None else n_evolved
    if shape == "heteroscedastic":
        s = log_sd(cv)
        b = rng.lognormal(np.log(100.0) - s * s / 2, s, (sims, n))
        e = rng.lognormal(np.log(100.0 * (1 + effect)) - s * s / 2, HETERO_RATIO * s, (sims, ne))
        return b, e
    b = draw(rng, shape, sims=sims, n=n, cv=cv)
    e = draw(rng, shape, sims=sims, n=ne, cv=cv, mean=100.0 * (1 + effect))
    return b, e


def draw_model(
    rng: np.random.Generator,
    *,
    sims: int,
    n: int,
    cv: float,
    effect: float,
    evolved_ratio: float = 1.0,
    outlier_rate: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """A plan's noise model, drawn here: log-normal arms (the evolved one ``evolved_ratio`` x as spread, its
    median (1 + effect) x the baseline's), each run independently x5 with probability ``outlier_rate``."""
    s = log_sd(cv)
    b = rng.lognormal(np.log(100.0) - s * s / 2, s, (sims, n))
    e = rng.lognormal(np.log(100.0 * (1 + effect)) - s * s / 2, evolved_ratio * s, (sims, n))
    b = np.where(rng.random(b.shape) < outlier_rate, b * OUTLIER_FACTOR, b)
    e = np.where(rng.random(e.shape) < outlier_rate, e * OUTLIER_FACTOR, e)
    return b, e


def batch_statuses(specs, arms, decision=None, *, robust: bool = True) -> dict[str, np.ndarray]:
    """Decide a batch of simulated promotions through ``bot.stats.decide`` (what evaluate() calls).

    ``specs``: (hypothesis id, Direction, margin, metric, [cell keys]); ``arms``: cell key ->
    (baseline (S, n), evolved (S, n)). Returns hypothesis id -> status per experiment (1, 0, -1).
    """
    from bot.stats.decide import Claim, decide
    from bot.stats.design import DecisionRule
    from bot.stats.rule import cell_stats

    stats_by_cell = {k: cell_stats(b, e, robust=robust) for k, (b, e) in arms.items()}
    claims = [
        Claim(hid, direction.value, margin, METRICS[metric].better, tuple(keys))
        for hid, direction, margin, metric, keys in specs
    ]
    dec = decide(claims, stats_by_cell, decision or DecisionRule())
    return {hid: dec.of(hid) for hid in dec.ids}
