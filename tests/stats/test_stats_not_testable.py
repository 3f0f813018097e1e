"""A hypothesis the translated plugin cannot test: its own status, no cells, no share of alpha."""

from __future__ import annotations

import numpy as np

from bot.model import Direction, VerdictStatus, status_counts
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import arm_pair, build, hypothesis

REASON = "its mechanism reads `CacheHitRate`, which the plugin sets to 0 (evolved line 194)"


def _reports(seed: int = 0):
    rng = np.random.default_rng(seed)
    cells = []
    for wl in ("chat", "multiturn"):
        b, e = arm_pair(rng, cv=0.03, effect=-0.20, n=6)
        cells.append({"workload": wl, "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": e})
    return build(cells)


def test_not_testable_is_never_judged_however_strong_the_data():
    reports = _reports()
    untestable = hypothesis("A2", workloads=("multiturn",)).model_copy(update={"not_testable": REASON})
    verdicts = {v.hypothesis_id: v for v in evaluate([hypothesis("A1"), untestable], reports)}
    v = verdicts["A2"]
    # The multiturn cell shows a clear 20% drop: still not confirmed, and not "inconclusive, add repetitions".
    assert v.status is VerdictStatus.NOT_TESTABLE
    assert v.effects == []
    assert "CacheHitRate" in v.summary and "evolved line 194" in v.summary
    assert "repetitions would not" in v.summary
    assert verdicts["A1"].status is VerdictStatus.CONFIRMED


def test_not_testable_takes_no_share_of_alpha():
    """The family the multiplicity control counts is the testable hypotheses only."""
    reports = _reports()
    alone = evaluate([hypothesis("A1")], reports)[0]
    untestable = hypothesis("A2", workloads=("multiturn",)).model_copy(update={"not_testable": REASON})
    with_untestable = evaluate([hypothesis("A1"), untestable], reports)[0]
    assert with_untestable.effects[0].p_adjusted == alone.effects[0].p_adjusted
    assert "over the promotion's 1 benchmarked" in with_untestable.summary
    both = evaluate([hypothesis("A1"), hypothesis("A2", workloads=("multiturn",))], reports)[0]
    assert "over the promotion's 2 benchmarked" in both.summary


def test_benchmarked_property():
    h = hypothesis("A1")
    assert h.benchmarked
    assert not h.model_copy(update={"not_testable": REASON}).benchmarked
    assert not h.model_copy(update={"prediction": None}).benchmarked


def test_status_counts_names_not_testable_only_when_present():
    c, i, n = VerdictStatus.CONFIRMED, VerdictStatus.INCONCLUSIVE, VerdictStatus.NOT_TESTABLE
    assert status_counts([c, i, i]) == "1 confirmed, 0 refuted, 2 inconclusive"
    assert status_counts([c, n]) == "1 confirmed, 0 refuted, 0 inconclusive, 1 not testable as translated"


def test_direction_of_untestable_hypothesis_is_kept_for_the_claims_table():
    untestable = hypothesis("A2", direction=Direction.DECREASE).model_copy(update={"not_testable": REASON})
    assert untestable.prediction is not None and untestable.prediction.direction is Direction.DECREASE


def test_gate3_holds_the_status_to_the_hypothesis():
    from bot.model import Verdict
    from bot.review.gate3 import _cell_problems
    from bot.stats.verdicts import not_testable_verdict

    untestable = hypothesis("A2").model_copy(update={"not_testable": REASON})
    assert _cell_problems(untestable, not_testable_verdict(untestable)) == []
    confirmed = Verdict(hypothesis_id="A2", status=VerdictStatus.CONFIRMED, summary="x")
    assert any("cannot test it" in p for p in _cell_problems(untestable, confirmed))
    unexplained = Verdict(hypothesis_id="A1", status=VerdictStatus.NOT_TESTABLE, summary="x")
    assert any("gives no reason" in p for p in _cell_problems(hypothesis("A1"), unexplained))
