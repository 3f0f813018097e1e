"""What a plan promises, by simulation: the planned promotion drawn many times, judged by the verdict's own code.

The analytic power of ``bot.stats.power`` is exact for one claim at a fixed
level. A promotion's claims are not alone: they share cells (one run feeds
every hypothesis on that workload and rate), and weighted Holm passes the alpha
of a confirmed hypothesis on to the others, so the chance that a hypothesis is
confirmed when every claim is at its planned effect is higher than its
stand-alone power. The plan prints that chance, computed here: the planned
scenario (a true relative change per (cell, metric), the plan's noise model)
is drawn ``sims`` times with a fixed seed and every draw is decided by
``bot.stats.decide``, the code ``evaluate`` runs on real reports.

The draws: log-normal runs (baseline log sd from the CV, the evolved arm's
``evolved_ratio`` times it, its median moved by the true change), each run
independently x5 with probability ``outlier_rate``. Metrics of one run are
drawn independently (they are correlated on a real cluster; that changes the
joint outcomes of claims on different metrics of one cell, not any single
claim's chance).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from bot.stats.decide import CONFIRMED, REFUTED, Claim, Decisions, decide
from bot.stats.design import DecisionRule
from bot.stats.power import NoiseModel, log_sd
from bot.stats.rule import cell_stats

#: Simulated promotions per plan; the printed chances are within about 1 point (one sd) of the exact ones.
DEFAULT_SIMS = 2000
SEED = 20260415
OUTLIER_FACTOR = 5.0


def draw_arms(
    rng: np.random.Generator, sims: int, n: int, effect: float, noise: NoiseModel, n_evolved: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(baseline, evolved) run values, shape (sims, n), median 100 and 100 x (1 + effect)."""
    ne = n if n_evolved is None else n_evolved
    s = log_sd(noise.cv)
    b = rng.lognormal(math.log(100.0), s, (sims, n))
    e = rng.lognormal(math.log(100.0 * (1 + effect)), noise.evolved_ratio * s, (sims, ne))
    if noise.outlier_rate > 0:
        b = np.where(rng.random(b.shape) < noise.outlier_rate, b * OUTLIER_FACTOR, b)
        e = np.where(rng.random(e.shape) < noise.outlier_rate, e * OUTLIER_FACTOR, e)
    return b, e


def confirm_rates(
    claims: Sequence[Claim],
    metric_of: Mapping[str, str],
    truth: Mapping[tuple[Hashable, str], float],
    noise: NoiseModel,
    reps: Mapping[Hashable, int],
    decision: DecisionRule,
    *,
    sims: int = DEFAULT_SIMS,
    seed: int = SEED,
) -> dict[str, float]:
    """Share of simulated promotions in which each claim is confirmed (fixed-size design).

    ``claims[i].cells`` are cell keys; ``metric_of[claim id]`` its metric; ``truth[(cell, metric)]``
    the true relative change there (0 when absent); ``reps[cell]`` the runs per arm.
    """
    dec = _decisions(claims, metric_of, truth, noise, reps, decision, sims, seed)
    return {hid: float(np.mean(dec.of(hid) == CONFIRMED)) for hid in dec.ids}


def refute_rates(
    claims: Sequence[Claim],
    metric_of: Mapping[str, str],
    truth: Mapping[tuple[Hashable, str], float],
    noise: NoiseModel,
    reps: Mapping[Hashable, int],
    decision: DecisionRule,
    *,
    sims: int = DEFAULT_SIMS,
    seed: int = SEED,
) -> dict[str, float]:
    """Share of simulated promotions in which each claim is refuted (fixed-size design; as ``confirm_rates``):
    a regression guard's chance of catching the regression ``truth`` plants."""
    dec = _decisions(claims, metric_of, truth, noise, reps, decision, sims, seed)
    return {hid: float(np.mean(dec.of(hid) == REFUTED)) for hid in dec.ids}


def _decisions(claims, metric_of, truth, noise, reps, decision, sims: int, seed: int) -> Decisions:
    rng = np.random.default_rng(seed)
    keys = sorted({(cell, metric_of[c.id]) for c in claims for cell in c.cells}, key=repr)
    stats_by_key = {}
    for key in keys:
        b, e = draw_arms(rng, sims, reps[key[0]], truth.get(key, 0.0), noise)
        stats_by_key[key] = cell_stats(b, e)
    keyed = [
        Claim(c.id, c.kind, c.margin, c.better, tuple((cell, metric_of[c.id]) for cell in c.cells)) for c in claims
    ]
    return decide(keyed, stats_by_key, decision)
