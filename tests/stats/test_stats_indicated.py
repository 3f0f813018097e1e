"""What the text says of evidence that points against a claim without refuting it, and of a level that depends on
other hypotheses (reanalysis findings 1 and 4): from synthetic reports through ``evaluate`` to the headline, the
report's tables and the PR's track lines."""

from __future__ import annotations

import re

from bot.model import Direction, Track, VerdictStatus
from bot.render import claims, outcome
from bot.stages import pr_parts
from bot.stats.design import DecisionRule
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import build, hypothesis, with_sample_cv

INCONCLUSIVE = VerdictStatus.INCONCLUSIVE
NULL_GUARDS = ("code", "rag", "doc", "chat2")


def _arms(workload: str, change: float, metric: str = "e2e_p95", cv: float = 0.03, n: int = 5) -> dict:
    """Two arms of n runs with the same spread, the evolved one exactly ``change`` slower or faster."""
    b = with_sample_cv(cv, n)
    return {"workload": workload, "rate": 10, "metric": metric, "baseline": b, "evolved": b * (1 + change)}


def _slower_guard_promotion(change: float = 0.10):
    """P1 of the reanalysis, small: C5's evolved arm 10% slower on p95, its 90% interval wholly beyond the 5%
    margin, its refutation (one-sided p about 0.02) significant alone but not after Holm over five hypotheses."""
    cells = [_arms("sanity", change)] + [_arms(w, 0.0) for w in NULL_GUARDS]
    hs = [hypothesis("C5", metric="e2e_p95", direction=Direction.NO_WORSE, workloads=["sanity"])]
    hs += [
        hypothesis(f"C{i + 1}", metric="e2e_p95", direction=Direction.NO_WORSE, workloads=[w])
        for i, w in enumerate(NULL_GUARDS)
    ]
    verdicts = evaluate(hs, build(cells))
    return hs, verdicts


def test_a_guard_whose_interval_lies_beyond_the_margin_says_a_regression_is_indicated_not_that_runs_would_help():
    _, verdicts = _slower_guard_promotion()
    c5 = verdicts[0]
    (e,) = c5.effects
    assert c5.status is INCONCLUSIVE and e.ci_low > 0.05, e  # not refuted, yet wholly beyond the margin
    m = re.search(r"a regression of at least (\S+)% is indicated .*refutation p = (\S+) > (\S+), its level", e.reason)
    assert m, e.reason
    assert m.group(1) == f"{e.ci_low * 100:.1f}" and float(m.group(2)) > float(m.group(3))
    assert float(m.group(2)) < 0.05  # significant alone: only multiplicity control holds it back
    assert "not significant after multiplicity control" in e.reason
    for wrong in ("does not contradict the prediction", "more runs or a quieter cluster would", "not ruled out"):
        assert wrong not in c5.summary, c5.summary
    assert "Adjusted p of the refutation = " in c5.summary and "points against it" in c5.summary
    # the hypotheses whose interval only reaches the margin keep the old, true wording
    assert all("indicated" not in v.summary for v in verdicts[1:])


def test_the_headline_the_tables_and_the_pr_say_a_regression_is_indicated():
    hs, verdicts = _slower_guard_promotion()
    pairs = list(zip(hs, verdicts, strict=True))
    head = outcome.headline(pairs)
    assert "no regression" not in head, head
    low = verdicts[0].effects[0].ci_low
    assert f"1 regression indicated, not significant after multiplicity control (C5 at least {claims.pct(low)}" in head
    # bj2 7: the other undecided guards keep their bound, and the indicated one is a flag on C5 as early stop is
    upto = max(e.ci_high for v in verdicts[1:] for e in v.effects)
    assert f"; regressions up to {upto:.1%} not ruled out for the other 4 undecided)." in head, head
    assert verdicts[0].flags == [
        f"indicated, not significant after multiplicity control: a regression of at least {low:.1%} at sanity @ 10 req/s"
    ]
    assert all(v.flags == [] for v in verdicts[1:])
    assert "at least" in claims.cause(hs[0], verdicts[0].effects[0])
    assert "indicated, not significant after multiplicity control" in outcome.guards_table(pairs, Track.C)
    by_id = {v.hypothesis_id: v for v in verdicts}
    assert pr_parts.indicated_ids(hs, by_id, Track.C) == ["C5"]
    line = next(x for x in pr_parts.track_line(hs, by_id, Track.C) if "C5" in x)
    assert "a regression of at least" in line and "indicated at 10 req/s, not significant" in line, line
    # the report's definition of Refuted is the one the code applies
    how = outcome.how_to_read(pairs)
    assert "Holm over the refutation tests" in how and "indicated, not significant" in how
    assert "contradicts the prediction beyond the noise floor (or the margin) and none confirms it" not in how


def test_a_directional_claim_measured_the_other_way_says_so_without_refuting():
    """Same logic for a claim: A1 predicted lower p95, the evolved arm is 6.5% slower, beyond the 6% noise floor, and
    the move against the prediction is not significant after multiplicity control."""
    cells = [_arms("sanity", 0.065, n=4)] + [_arms(w, 0.0) for w in NULL_GUARDS]  # noise floor 6%
    hs = [hypothesis("A1", metric="e2e_p95", workloads=["sanity"])]
    hs += [
        hypothesis(f"C{i + 1}", metric="e2e_p95", direction=Direction.NO_WORSE, workloads=[w])
        for i, w in enumerate(NULL_GUARDS)
    ]
    a1 = evaluate(hs, build(cells))[0]
    assert a1.status is INCONCLUSIVE, a1.summary
    assert "an increase of at least" in a1.effects[0].reason and "against the prediction" in a1.effects[0].reason
    assert "does not contradict the prediction" not in a1.summary
    head = outcome.headline(list(zip(hs, evaluate(hs, build(cells)), strict=True)))
    assert "A1 indicated against the prediction, not significant after multiplicity control" in head, head


def test_a_level_held_down_by_an_unmeasured_hypothesis_says_so_not_that_more_runs_would_help():
    """P4c of the reanalysis, small: A1 (most of the weight) has no report, so its share of alpha never passes on;
    C1's guard, within its margin, is tested at its own small share and stays undecided on evidence that would
    confirm it were A1 measured and confirmed."""
    rule = DecisionRule(weights={"A1": 0.9, "C1": 0.1})
    hs = [
        hypothesis("A1", metric="e2e_p95", workloads=["spikes"]),
        hypothesis("C1", metric="e2e_p95", direction=Direction.NO_WORSE, workloads=["chat"]),
    ]
    c1 = evaluate(hs, build([_arms("chat", 0.0)]), decision=rule)[1]
    (e,) = c1.effects
    assert c1.status is INCONCLUSIVE and 0.005 < e.p_value < 0.05, (c1.summary, e.p_value)
    assert "tested at level 0.005; it would be 0.05 if A1, which has no measured cell, were confirmed" in c1.summary
    assert "depends on A1 (no measured cell): at 0.05 its p-value" in c1.summary
    assert "would be within it" in c1.summary and "more runs per arm would lower" not in c1.summary
    # measured and undecided, A1 holds its share as any hypothesis does: nothing to say beyond the level
    measured = evaluate(hs, build([_arms("chat", 0.0), _arms("spikes", 0.0)]), decision=rule)[1]
    assert "it would be" not in measured.summary and "more runs per arm would lower" in measured.summary
