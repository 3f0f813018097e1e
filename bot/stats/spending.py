"""Group-sequential boundaries from an alpha-spending function (Lan and DeMets 1983).

A claim tested after every round of runs, instead of once at the end, must
spend its alpha across the looks or its false-confirm rate grows with every
look. The spending function ``f(t, alpha)`` says how much of alpha may have
been spent by information fraction ``t`` (here: runs per arm so far / the
cell's horizon); the boundary of look ``k`` is set so that, under the null,
the chance of crossing for the first time at look ``k`` is
``f(t_k) - f(t_{k-1})``. Because the boundaries depend only on the looks
actually taken, looks need not be equally spaced and a round the budget cut
short is handled as it happened.

- ``obrien-fleming``: ``f(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))`` (O'Brien-Fleming
  type): almost nothing is spent early, so the last look keeps nearly the
  fixed design's level and little power is lost; early stops need strong
  evidence.
- ``pocock``: ``f(t) = alpha log(1 + (e - 1) t)`` (Pocock type): spends evenly,
  stops earlier on average, but the last look is stricter.

The boundaries are for the standardised statistic of a one-sided test with
independent increments (Z_k = B(t_k) / sqrt(t_k), B a Brownian motion): the
first-crossing probabilities are computed by recursive numerical integration
of the sub-density of B on the continuation region (Armitage, McPherson and
Rowe 1969; Jennison and Turnbull 2000, ch. 19) on a Simpson grid, and each
boundary is found by Brent's method. ``tests/stats`` checks them against the
published values and against simulated Brownian paths.

The cells' tests are Welch t-tests with few degrees of freedom, not z-tests:
the rule compares each look's p-value with the *nominal level* of the
boundary, ``1 - Phi(c_k)`` (the "significance level approach", Jennison and
Turnbull 2000, section 11.5), and the tests check the resulting error rates by
simulation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import optimize, special  # not scipy.stats: its import is slow (bot.stats.dist says why)

from bot.stats import dist

Spending = Literal["obrien-fleming", "pocock"]
SPENDINGS: tuple[str, ...] = ("obrien-fleming", "pocock")

_SD_RANGE = 8.0  # the density is carried from -8 sd up to the boundary
_POINTS = 201  # Simpson grid points per look (odd)
#: Levels at which nominal levels are tabulated for the inverse (repeated p-values).
_ALPHA_GRID = np.geomspace(1e-8, 0.5, 81)


def spent(t: float | np.ndarray, alpha: float, spending: Spending) -> float | np.ndarray:
    """Alpha spent by information fraction ``t`` (clipped to [0, 1])."""
    t = np.clip(np.asarray(t, dtype=float), 0.0, 1.0)
    if spending == "obrien-fleming":
        with np.errstate(divide="ignore"):
            z = dist.norm_isf(alpha / 2) / np.sqrt(t)
        out = 2.0 * dist.norm_sf(z)
    elif spending == "pocock":
        out = alpha * np.log1p((math.e - 1.0) * t)
    else:
        raise ValueError(f"unknown spending function {spending!r}; expected one of {SPENDINGS}")
    return float(out) if out.ndim == 0 else out


def boundaries(ts: Sequence[float], alpha: float, spending: Spending) -> np.ndarray:
    """Z-scale boundaries c_1..c_K for looks at information fractions ``ts`` (increasing, in (0, 1])."""
    return np.array(_boundaries(tuple(round(float(t), 12) for t in ts), float(alpha), spending))


def nominal_levels(ts: Sequence[float], alpha: float, spending: Spending) -> np.ndarray:
    """One-sided nominal p-levels 1 - Phi(c_k) of the boundaries: a look's test crosses when its p <= this."""
    return dist.norm_sf(boundaries(ts, alpha, spending))


@lru_cache(maxsize=4096)
def _boundaries(ts: tuple[float, ...], alpha: float, spending: Spending) -> tuple[float, ...]:
    if not ts or any(not 0 < t <= 1 for t in ts) or any(b <= a for a, b in itertools.pairwise(ts)):
        raise ValueError(f"information fractions {ts} must increase within (0, 1]")
    out: list[float] = []
    cum = [float(spent(t, alpha, spending)) for t in ts]
    grid = weights = dens = None  # sub-density of B(t_{k-1}) on the continuation region
    prev_t, prev_cum = 0.0, 0.0
    for t, c in zip(ts, cum, strict=True):
        step = c - prev_cum
        if dens is None:  # first look: B(t) ~ N(0, t)
            b = math.sqrt(t) * -special.ndtri(step) if step > 0 else math.inf
            out.append(b / math.sqrt(t))
            hi = b if math.isfinite(b) else _SD_RANGE * math.sqrt(t)
            grid, weights = _simpson(-_SD_RANGE * math.sqrt(t), hi)
            dens = _phi(grid / math.sqrt(t)) / math.sqrt(t)
        else:
            sd = math.sqrt(t - prev_t)
            mass = dens * weights

            def crossing(b: float, mass=mass, grid=grid, sd=sd) -> float:
                return float(np.sum(mass * special.ndtr((grid - b) / sd)))

            if step <= 0:
                b = math.inf
            else:
                lo, hi = grid[0], grid[-1] + 40 * sd
                b = optimize.brentq(lambda x, s=step: crossing(x) - s, lo, hi, xtol=1e-9) if crossing(lo) > step else lo
            out.append(b / math.sqrt(t))
            top = b if math.isfinite(b) else _SD_RANGE * math.sqrt(t)
            new_grid, new_weights = _simpson(-_SD_RANGE * math.sqrt(t), top)
            kernel = _phi((new_grid[:, None] - grid[None, :]) / sd) / sd
            dens = kernel @ mass
            grid, weights = new_grid, new_weights
        prev_t, prev_cum = t, c
    return tuple(out)


def _phi(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _simpson(lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(lo, hi, _POINTS)
    h = (hi - lo) / (_POINTS - 1)
    w = np.ones(_POINTS)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return x, w * h / 3.0


@lru_cache(maxsize=1024)
def _level_table(ts: tuple[float, ...], spending: Spending) -> np.ndarray:
    """log nominal level of each look (rows) at each alpha of ``_ALPHA_GRID`` (columns)."""
    table = np.array([dist.norm_logsf(_boundaries(ts, float(a), spending)) for a in _ALPHA_GRID]).T
    return np.maximum.accumulate(table, axis=1)  # monotone in alpha, for interpolation


def repeated_p(p: np.ndarray, ts: Sequence[float], spending: Spending) -> np.ndarray:
    """The smallest overall alpha at which each look's p-value would cross that look's boundary.

    ``p``: (S, K) one-sided p-values at looks with information fractions ``ts`` (NaN: look not
    taken); returns (S, K). A claim's repeated p-value after some looks is the minimum over them:
    it is rejected at level alpha exactly when some look crossed its boundary for alpha (to within
    the interpolation over a grid of 81 levels, log-spaced from 1e-8 to 0.5). Values above 0.5
    come back as 1.
    """
    key = tuple(round(float(t), 12) for t in ts)
    table = _level_table(key, spending)
    log_alpha = np.log(_ALPHA_GRID)
    p = np.asarray(p, dtype=float)
    out = np.ones_like(p)
    with np.errstate(divide="ignore"):
        logp = np.log(np.clip(p, 1e-300, 1.0))
    for k in range(len(key)):
        col = logp[:, k]
        row = table[k]
        inv = np.interp(col, row, log_alpha, left=log_alpha[0], right=np.inf)
        out[:, k] = np.where(np.isfinite(p[:, k]) & (col <= row[-1]), np.exp(np.minimum(inv, 0.0)), 1.0)
    return out
