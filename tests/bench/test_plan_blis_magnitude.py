"""A claim BLIS predicts at the noise floor is planned at 2 × T_eff, and the plan says what that hides
(sched-e2e #7): s01's A1 read "power 86%" at -20% while BLIS predicts -10% on a 10% floor, where a verdict
confirms it rarely; neither the power table nor gate 2's summary said so."""

from __future__ import annotations

from bot.bench.plan import make_plan
from bot.bench.plan_markdown import plan_markdown
from bot.review.brief import _short_of_plan

from .test_bench_plan import _h, _request


def _with_blis(h, magnitude: float):
    return h.model_copy(update={"prediction": h.prediction.model_copy(update={"blis_magnitude": magnitude})})


def test_a_claim_blis_puts_at_the_floor_gets_its_power_there_beside_the_planned_one():
    req = _request()
    at_floor = _with_blis(_h("A1", ["load-spikes"], "ttft_p99", rates=[30]), -0.10)
    plan = make_plan(req, [at_floor], prior_cv=0.05)  # T_eff = max(5%, 2 × 5%) = 10%
    assert abs(plan.t_eff - 0.10) < 1e-9
    [hp] = plan.hypothesis_power
    m, at = hp.power_at_blis
    assert m == -0.10 and at < hp.power_floor / 2, (at, hp.power_floor)  # at the floor: far below the planned power
    [note] = [n for n in plan.notes if n.startswith("A1: BLIS predicts -10%")]
    assert "at or below the noise floor (T_eff 10.0%)" in note and "planned at -20% (2 × T_eff)" in note
    assert f"about {at:.0%}" in note
    md = plan_markdown(plan)
    [row] = [line for line in md.splitlines() if line.startswith("| A1 |")]
    assert f"BLIS predicts -10%: power there {at:.0%}" in row
    said = _short_of_plan(plan)
    assert "A1: BLIS predicts -10% against a noise floor of 10%" in said and "(planned at -20%)" in said
    assert f"is about {at:.0%} at BLIS's figure" in said


def test_a_claim_blis_puts_beyond_twice_the_floor_or_against_its_direction_gets_no_such_line():
    req = _request()
    for magnitude in (-0.30, 0.10):
        h = _with_blis(_h("A1", ["load-spikes"], "ttft_p99", rates=[30]), magnitude)
        plan = make_plan(req, [h], prior_cv=0.05)
        assert plan.hypothesis_power[0].power_at_blis is None
        assert not any("BLIS predicts" in n for n in plan.notes) and _short_of_plan(plan) == ""
