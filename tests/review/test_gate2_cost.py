"""Gate 2's GPU cost: one line to decide on (expected, at most), then each figure on its own labelled line.

Found by a researcher's trial (trial4, an admitter with a priority mix): gate 2 read "60 runs, 1948 GPU-minutes at
most (... the fixed plan 1440 ...) ... a priority mix (6 runs, 348 GPU-minutes) ...: 1788 in all, the figure stage 5
reports as planned", and the person had to work out which of the four numbers was the cap and which the plan.
"""

from __future__ import annotations

import pytest

from bot.bench.units import gpu_minutes
from bot.review.brief import plan_cost_lines
from tests.bench.test_priority_plan import _admission


@pytest.fixture(scope="module")
def plan():
    return _admission()[1]


def test_the_cost_leads_with_what_is_expected_and_the_cap_then_labels_every_figure(plan):
    seq, pm = plan.sequential, plan.priority_mix
    assert seq is not None and pm is not None
    lead, lines = plan_cost_lines(plan)
    expected = round(seq.expected_gpu_minutes + pm.gpu_minutes, 1)
    assert lead == (
        f"expected {gpu_minutes(expected)} GPU-minutes, at most {gpu_minutes(plan.most_gpu_minutes)} (the cap "
        "`promote bench run` applies unless given another)"
    )
    # each figure once, beside what it is
    cells_most = max(plan.cost.gpu_minutes, seq.max_gpu_minutes)
    assert lines == [
        (
            f"the cells, sequential design (what `promote bench run` follows): expected "
            f"{gpu_minutes(seq.expected_gpu_minutes)} GPU-minutes if every claim holds as planned, "
            f"{gpu_minutes(seq.expected_gpu_minutes_null)} if the plugin changes nothing, "
            f"{gpu_minutes(seq.max_gpu_minutes)} at most (every cell to its horizon)"
        ),
        (
            f"the cells, fixed plan (every run, no early stop; `promote bench run --fixed`): {plan.cost.runs} runs, "
            f"{gpu_minutes(plan.cost.gpu_minutes)} GPU-minutes, {plan.ratio:.0%} of the naive plan"
        ),
        (
            f"the priority mix (per-class admission, its own experiment, run either way): {pm.runs} runs, "
            f"{gpu_minutes(pm.gpu_minutes)} GPU-minutes"
        ),
        (
            f"expected = the sequential design's expected {gpu_minutes(seq.expected_gpu_minutes)} + the priority mix "
            f"{gpu_minutes(pm.gpu_minutes)}; at most = the cells' larger maximum {gpu_minutes(cells_most)} + the "
            f"priority mix {gpu_minutes(pm.gpu_minutes)}"
        ),
        (
            f"planned, the figure stage 5 reports spending against: {gpu_minutes(plan.total_gpu_minutes)} GPU-minutes "
            "(the fixed plan's cells + the priority mix)"
        ),
    ]


def test_a_fixed_plan_without_a_mix_says_one_figure_twice_and_no_sequential_line(plan):
    fixed = plan.model_copy(update={"sequential": None, "priority_mix": None})
    lead, lines = plan_cost_lines(fixed)
    said = gpu_minutes(fixed.cost.gpu_minutes)
    assert lead.startswith(f"expected {said} GPU-minutes, at most {said} (the cap")
    assert lines == [
        (
            f"the cells, fixed plan (what `promote bench run` follows: every run, no early stop): {fixed.cost.runs} "
            f"runs, {said} GPU-minutes, {fixed.ratio:.0%} of the naive plan; the figure stage 5 reports spending "
            "against"
        ),
    ]
