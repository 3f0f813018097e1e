"""Where a Map C gap can be tested (bot.hypotheses.operating_points): pure, on the bundled request."""

from __future__ import annotations

from bot.hypotheses.operating_points import gap_run_plan
from bot.model import Family, PromotionRequest
from tests.conftest import REQUEST


def test_a_workload_named_like_a_class_mix_does_not_make_a_class_mix_gap_testable():
    """Found by a new user: renaming a workload `mixed-class` made the 'shed only sheddable requests' hypothesis
    benchmarked, on a profile that still sent every request at one priority."""
    req = PromotionRequest.load(REQUEST)
    renamed = req.model_copy(
        update={"workloads": [req.workloads[0].model_copy(update={"name": "mixed-class"}), *req.workloads[1:]]}
    )
    hint = "priority-mix harness / mixed-class workload above saturation"
    for request in (req, renamed):
        _, rates, why = gap_run_plan(request, hint, Family.CROSS_POLICY)
        assert rates == [] and why is not None and "several priority classes" in why
    # A hint a named workload does provide still resolves to it.
    workloads, _, why = gap_run_plan(req, f"{req.workloads[0].name} at its highest rate", Family.CROSS_POLICY)
    assert workloads == [req.workloads[0].name] and why is None
