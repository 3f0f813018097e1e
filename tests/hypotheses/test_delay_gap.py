"""The `network-latency` gap (a TTFT equivalence "at low load, where time-based branches rarely fire"): planned only
on a low-load cell, and not benchmarked at all for a scheduler whose time logic cannot see delay.

Found end to end (s01): B3 was planned on load-spikes @ 30 req/s, one of A1's own cells, so a scheduler doing what A1
claims "refuted" it and filed BLIS feedback about network delay, which never enters the pseudo-queue's time logic
(the request's age is 0 by construction, the waiting requests' ages come from incumbentSpacingUs).
"""

from __future__ import annotations

from pathlib import Path

from bot.hypotheses import generate_hypotheses
from bot.model import PolicyKind, PromotionRequest, TranslationSummary

from .conftest import make_request

S01 = Path(__file__).resolve().parents[2] / "examples" / "corpus" / "promote" / "s01-scheduling.yaml"
GAP = "network-latency"


def _summary(dictionary, kind: str, signals: list[str], stateful: bool = False) -> TranslationSummary:
    return TranslationSummary(
        kind=PolicyKind(kind),
        plugin_type="evolved-x",
        package_dir="pkg/x",
        signals=signals,
        touched_gaps=dictionary.touched_gaps(kind, signals),
        stateful=stateful,
    )


def _gap(req, summary, dictionary):
    return next(h for h in generate_hypotheses(req, summary, dictionary) if h.source == GAP)


def test_a_scheduler_whose_time_logic_cannot_see_delay_gets_no_benchmarked_delay_hypothesis(dictionary):
    req = PromotionRequest.load(S01)
    summary = _summary(dictionary, "scheduling", ["ArrivalTime", "QueueDepth", "SLOClass"])
    assert GAP in summary.touched_gaps  # gate 1 still wants the gap answered
    h = _gap(req, summary, dictionary)
    assert h.prediction is None and not h.benchmarked and h.not_testable is None
    assert "incumbentSpacingUs" in h.statement and "own wait is 0" in h.statement
    assert "low load" not in h.statement.split("Not benchmarked")[0]
    assert h.diagnostic.startswith("If this fails, it would indicate")


def test_a_stateful_scheduler_keeps_the_gap_but_never_on_a_claims_cell(dictionary):
    # s01's claim (BLIS rate 1000, outside the GPU range) covers both load-spikes rates: no cell is low load.
    req = PromotionRequest.load(S01)
    h = _gap(req, _summary(dictionary, "scheduling", ["ArrivalTime", "QueueDepth"], stateful=True), dictionary)
    assert h.prediction is None and h.not_in_plan
    assert "low-load cell" in h.not_in_plan and "A1 predicts a change at `load-spikes` @ 30 req/s" in h.not_in_plan


def test_routing_puts_the_low_load_equivalence_on_the_lowest_rate_no_claim_names(dictionary):
    # prefix-heavy runs at 4, 8, 12; its claim (BLIS rate 9) maps to 8: 4 is low load, as before.
    summary = _summary(dictionary, "routing", ["Clock", "QueueDepth"])
    h = _gap(make_request(source_text=""), summary, dictionary)
    assert h.benchmarked and (h.workloads, h.rates) == (["prefix-heavy"], [4.0])
    # A claim at 4 req/s says the evolved logic acts there: the lowest rate is no longer low load.
    req = make_request(source_text="")
    claims = [c.model_dump() | ({"rate": 4.0} if c.workload == "prefix-heavy" else {}) for c in req.claims]
    h = _gap(make_request(claims=claims, source_text=""), summary, dictionary)
    assert not h.benchmarked and "A1 predicts a change at `prefix-heavy` @ 4 req/s" in h.not_in_plan
    # A workload's only rate is its operating point, not low load.
    one = [w.model_dump() | ({"rates": [8]} if w.name == "prefix-heavy" else {}) for w in req.workloads]
    h = _gap(make_request(workloads=one, claims=[], source_text=""), summary, dictionary)
    assert not h.benchmarked and "runs at one rate (8 req/s)" in h.not_in_plan
