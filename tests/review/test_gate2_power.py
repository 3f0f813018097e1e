"""Gate 2's one-line summary says when the plan it prices is expected to confirm little (verify2 #5).

s01's gate 2 approved 1,840 GPU-minutes with every benchmarked hypothesis under-powered (0-8%): the plan's power
table said so, the summary a person approves on did not. The clause is the power table's own figures.
"""

from __future__ import annotations

from bot.bench.plan import make_plan
from bot.review.brief import _under_powered
from tests.bench.test_bench_plan import _h, _request


def _plan(prior_cv: float):
    hs = [
        _h("A1", ["load-spikes"], "ttft_p99", rates=[30]),
        _h("C1", ["load-spikes"], "e2e_p95", "equivalent", rates=[30]),
        _h("C2", ["load-spikes"], "ttft_mean", "equivalent", rates=[30]),
    ]
    return make_plan(_request(), hs, prior_cv=prior_cv)


def test_the_summary_says_when_none_or_most_of_the_benchmarked_hypotheses_reach_the_power_target():
    quiet, noisy, noisier = _plan(0.01), _plan(0.05), _plan(0.2)
    assert all(hp.decidable for hp in quiet.hypothesis_power) and _under_powered(quiet) == ""
    assert [hp.decidable for hp in noisy.hypothesis_power] == [True, False, False]
    most = max(hp.power for hp in noisy.hypothesis_power[1:])
    assert _under_powered(noisy) == f"; 2 of the 3 do not reach 80% power (C1, C2: at most {most:.0%})"
    assert not any(hp.decidable for hp in noisier.hypothesis_power)
    most = max(hp.power for hp in noisier.hypothesis_power)
    assert _under_powered(noisier) == f"; none of the 3 reaches 80% power (at most {most:.0%})"


def test_one_under_powered_hypothesis_of_several_is_left_to_the_plan():
    plan = _plan(0.05)
    one = plan.model_copy(update={"hypothesis_power": plan.hypothesis_power[:2]})  # A1 decidable, C1 not: half
    assert _under_powered(one) == ""
