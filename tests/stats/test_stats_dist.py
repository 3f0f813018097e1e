"""bot.stats.dist gives scipy.stats's own floats, and planning no longer imports scipy.stats."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from scipy import stats

from bot import PROJECT_ROOT
from bot.stats import dist

PROBS = np.concatenate([np.geomspace(1e-12, 0.5, 120), 1 - np.geomspace(1e-12, 0.5, 120)[::-1]])
XS = np.linspace(-40, 40, 801)
DFS = [1, 1.5, 2, 3, 4.7, 9, 30, 250, 1e6]


def test_normal_tails_are_scipy_stats_values():
    assert np.array_equal(dist.norm_sf(XS), stats.norm.sf(XS))
    assert np.array_equal(dist.norm_logsf(XS), stats.norm.logsf(XS))
    assert np.array_equal(dist.norm_isf(PROBS), stats.norm.isf(PROBS))
    assert dist.norm_isf(0.025) == stats.norm.isf(0.025)
    assert isinstance(dist.norm_sf(1.5), float)


def test_student_t_is_scipy_stats_values():
    for df in DFS:
        assert np.array_equal(dist.t_ppf(PROBS, df), stats.t.ppf(PROBS, df)), df
        assert np.array_equal(dist.t_sf(XS, df), stats.t.sf(XS, df)), df
    grid = np.array([1.0, 2.5, 7.0, 40.0])
    assert np.array_equal(dist.t_ppf(0.975, grid), stats.t.ppf(0.975, grid))


def test_chi2_quantiles_are_scipy_stats_values():
    for k in (1, 2, 3, 5, 11, 39, 200):
        assert np.array_equal(dist.chi2_ppf(PROBS, k), stats.chi2.ppf(PROBS, k)), k


def test_planning_does_not_import_scipy_stats():
    """The benchmark plan of the bundled example (sizing, power, the sequential design) in a fresh interpreter."""
    code = (
        "import sys\n"
        "from bot import PROJECT_ROOT\n"
        "from bot.bench.plan import plan_for\n"
        "from bot.dictionary import load_dictionary\n"
        "from bot.hypotheses import generate_hypotheses\n"
        "from bot.model import PromotionRequest, TranslationSummary\n"
        "req = PromotionRequest.load(PROJECT_ROOT / 'examples' / 'weighted-adaptive' / 'promotion.yaml')\n"
        "d = load_dictionary()\n"
        "signals = ['InFlightRequests', 'KVUtilization']\n"
        "summary = TranslationSummary(kind=req.kind, plugin_type=req.plugin_type, package_dir='pkg', signals=signals,\n"
        "    freshness_gaps=signals, touched_gaps=d.touched_gaps(req.kind, signals))\n"
        "plan = plan_for(req, generate_hypotheses(req, summary, d))\n"
        "assert plan.sequential is not None and plan.hypothesis_power\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
