"""The few distribution functions the planner and the guards need, as scipy.stats computes them.

Each is the formula scipy.stats's distribution calls (its ``_sf``, ``_isf``, ``_ppf``) on scipy.special,
without importing scipy.stats: that import takes about a quarter of a second beyond scipy.special and
scipy.optimize, paid by every process that plans a benchmark (the gate-2 brief, stage 4, each
``promote bench run`` and ``bench teardown``) for a handful of quantiles. The values are the same floats;
``tests/stats/test_stats_dist.py`` holds each to scipy.stats exactly. Arguments are assumed in range
(a probability in [0, 1], degrees of freedom above 0), as every caller has them.
"""

from __future__ import annotations

import numpy as np
from scipy import special


def norm_sf(x):
    """P(Z > x) for a standard normal Z."""
    return special.ndtr(-np.asarray(x, dtype=float))[()]


def norm_isf(q):
    """The x with P(Z > x) = q."""
    return -special.ndtri(np.asarray(q, dtype=float))[()]


def norm_logsf(x):
    """log P(Z > x), accurate far into the tail."""
    return special.log_ndtr(-np.asarray(x, dtype=float))[()]


def t_ppf(p, df):
    """The p quantile of Student's t with ``df`` degrees of freedom."""
    return special.stdtrit(df, p)


def t_sf(x, df):
    """P(T > x) for Student's t with ``df`` degrees of freedom."""
    return special.stdtr(df, -np.asarray(x, dtype=float))[()]


def chi2_ppf(p, k):
    """The p quantile of the chi-squared distribution with ``k`` degrees of freedom."""
    return 2 * special.gammaincinv(np.asarray(k, dtype=float) / 2, p)
