"""A claim's magnitude is the change its statement states: checked before anything runs (bot.stages.preflight),
without refusing a statement whose numbers are about the workload or that states more than one change."""

from __future__ import annotations

import pytest

from bot.model import BlisClaim, PromotionRequest
from bot.stages.preflight import check_magnitudes, magnitude_disagreement
from tests.conftest import REQUEST


def _claim(statement: str, magnitude: float | None) -> BlisClaim:
    direction = "increase" if magnitude is not None and magnitude > 0 else "decrease"
    return BlisClaim(
        id="c", statement=statement, metric="e2e_p95_ms", direction=direction, magnitude=magnitude, workload="w"
    )


def test_the_bundled_example_passes():
    check_magnitudes(PromotionRequest.load(REQUEST))  # "(7600 ms -> 5776 ms, -24%)" beside "60% heavy-hitter"


AGREE = [
    ("60% heavy-hitter group, 15% no-prefix traffic; p95 7600 ms -> 5776 ms, -24%", -0.24),
    ("p95 falls -24%", -0.236),  # rounds to the statement's 24
    ("p95 falls -23.6%", -0.24),  # the magnitude is the coarser number
    ("throughput +12%", 0.12),
    ("p95 falls \u221224%", -0.24),  # a typographic minus
    ("p95 24% lower", -0.24),
    ("60% heavy-hitter group: the evolved router lowers p95", -0.05),  # a share of the workload, not a change
    ("p95 -24% at rate 30 and -18% at rate 45", -0.18),  # two changes: which is the metric's is a guess
    ("load rises by 60% and p95 goes down", -0.1),  # "by N%" describes the workload as often as the claim
    ("10-20% lower tail", -0.5),  # a range has no single value
    ("p95 falls -24%", None),  # no magnitude: nothing to compare
]


@pytest.mark.parametrize(("statement", "magnitude"), AGREE)
def test_statements_that_agree_or_cannot_be_judged_pass(statement, magnitude):
    assert magnitude_disagreement(_claim(statement, magnitude)) is None


DISAGREE = [
    ("p95 7600 ms -> 5776 ms, -24%", -0.18, "-0.18 is -18%, but the statement says -24%; set magnitude: -0.24 "),
    ("p95 falls -24%", -0.2451, "is -24.51%, but the statement says -24%; set magnitude: -0.24 "),
    ("p95 24% lower", -0.18, "the statement says 24% lower; set magnitude: -0.24 "),
    ("throughput +12.5%", 0.2, "0.2 is +20%, but the statement says +12.5%; set magnitude: 0.125 "),
    ("p95 +24%", -0.24, "set magnitude: 0.24 and direction: increase if the statement is right"),
]


@pytest.mark.parametrize(("statement", "magnitude", "says"), DISAGREE)
def test_a_magnitude_the_statement_contradicts_names_both_and_the_fix(statement, magnitude, says):
    why = magnitude_disagreement(_claim(statement, magnitude))
    assert why is not None and why.startswith("claims[c].magnitude: ") and says in why, why
