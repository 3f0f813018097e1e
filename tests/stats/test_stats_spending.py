"""Group-sequential boundaries: published values, simulated Brownian paths, and the repeated p-value."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bot.stats.spending import boundaries, nominal_levels, repeated_p, spent

FIVE = [0.2, 0.4, 0.6, 0.8, 1.0]


def test_boundaries_match_the_published_lan_demets_values():
    """One-sided alpha 0.025, five equally spaced looks (Jennison & Turnbull; gsDesign sfLDOF / sfLDPocock)."""
    assert boundaries(FIVE, 0.025, "obrien-fleming") == pytest.approx([4.877, 3.357, 2.680, 2.290, 2.031], abs=2e-3)
    assert boundaries(FIVE, 0.025, "pocock") == pytest.approx([2.438, 2.427, 2.410, 2.397, 2.386], abs=2e-3)
    assert boundaries([1.0], 0.05, "pocock") == pytest.approx([stats.norm.isf(0.05)], abs=1e-6)


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
@pytest.mark.parametrize("ts", [[0.3, 0.55, 1.0], [5 / 9, 7 / 9, 1.0], [0.5, 1.0]])
def test_simulated_brownian_paths_cross_with_exactly_the_alpha_spent(spending, ts):
    rng = np.random.default_rng(len(ts))
    sims = 400_000
    t = np.array(ts)
    paths = np.cumsum(rng.normal(0, np.sqrt(np.diff(np.r_[0.0, t])), (sims, t.size)), axis=1) / np.sqrt(t)
    c = boundaries(ts, 0.01, spending)
    first = np.argmax(paths >= c, axis=1)
    crossed = (paths >= c).any(axis=1)
    for k in range(t.size):
        want = spent(t[k], 0.01, spending) - (spent(t[k - 1], 0.01, spending) if k else 0.0)
        got = np.mean(crossed & (first == k))
        assert abs(got - want) < 4 * np.sqrt(want / sims) + 1e-5, (k, got, want)


def test_repeated_p_inverts_the_nominal_levels():
    ts = [5 / 9, 7 / 9, 1.0]
    rng = np.random.default_rng(3)
    p = rng.uniform(1e-5, 0.02, (50, 3))
    rp = repeated_p(p, ts, "pocock")
    for i in range(0, 50, 7):
        for k in range(3):
            if rp[i, k] < 0.5:
                assert nominal_levels(ts, rp[i, k], "pocock")[k] == pytest.approx(p[i, k], rel=2e-3)
    # monotone: a smaller p never has a larger repeated p; a look not taken (NaN) counts as 1
    order = np.argsort(p[:, 0])
    assert np.all(np.diff(rp[order, 0]) >= -1e-12)
    assert repeated_p(np.array([[np.nan, 0.3, 0.9]]), ts, "pocock")[0, 0] == 1.0


def test_bad_looks_are_refused():
    with pytest.raises(ValueError, match="increase"):
        boundaries([0.5, 0.5], 0.05, "pocock")
    with pytest.raises(ValueError, match="spending"):
        spent(0.5, 0.05, "haybittle")  # type: ignore[arg-type]
