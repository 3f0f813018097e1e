"""One hypothesis per distinct claim, and the claims the translated plugin cannot test."""

from __future__ import annotations

import pytest

from bot.hypotheses import generate_hypotheses
from bot.hypotheses.generate import implies
from bot.hypotheses.signals import evolved_reads, named_signals, not_testable_reason
from bot.model import Direction
from tests.hypotheses.conftest import make_request

SESSION_GO = """\
package sim

type RoutingSnapshot struct {
	CacheHitRate float64
}

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	// EVOLVE-BLOCK-START
	// HYPOTHESIS-1: favouring cache-warm instances for session requests lowers TTFT on prefix-heavy
	// MECHANISM-1: a (1+0.3*CacheHitRate) bonus above a 0.35 hit rate keeps sessions sticky
	// EXPECT-1: ttft_mean_ms < 80
	for _, snap := range state.Snapshots {
		// CacheHitRate is read below
		if req.SessionID != "" && snap.CacheHitRate > 0.35 {
			adj *= 1.0 + 0.3*snap.CacheHitRate
		}
	}
	// EVOLVE-BLOCK-END
}
"""


def _constant(summary):
    return summary.model_copy(update={"untranslatable": ["CacheHitRate"]})


# ---------------------------------------------------------------- the signal link


def test_named_signals_reads_names_aliases_and_access_forms_only(summary, dictionary):
    s = summary.model_copy(update={"signals": [*summary.signals, "TTFT"]})
    assert named_signals(["bonus on CacheHitRate", None], s, dictionary) == ["CacheHitRate"]
    assert named_signals(["PendingRequests counts dispatches"], s, dictionary) == ["InFlightRequests"]
    # a metric word is the outcome, not a read; the access form is a read
    assert named_signals(["this lowers TTFT"], s, dictionary) == []
    assert named_signals(["penalise snap.TTFT above 200"], s, dictionary) == ["TTFT"]
    # whole words only
    assert named_signals(["CacheHitRateEstimate and MyQueueDepth"], s, dictionary) == []


def test_evolved_reads_are_code_lines_inside_the_evolve_block(dictionary):
    reads = evolved_reads(SESSION_GO, "CacheHitRate", dictionary)
    # not the struct field (outside the block), not the MECHANISM or the comment line
    assert reads == [
        (14, 'if req.SessionID != "" && snap.CacheHitRate > 0.35 {'),
        (15, "adj *= 1.0 + 0.3*snap.CacheHitRate"),
    ]


def test_not_testable_reason_names_the_signal_the_constant_and_the_lines(summary, dictionary):
    assert not_testable_reason(["CacheHitRate"], summary, dictionary, SESSION_GO) is None  # translatable here
    reason = not_testable_reason(["QueueDepth", "CacheHitRate"], _constant(summary), dictionary, SESSION_GO, "x.go")
    assert reason == (
        "the mechanism reads `CacheHitRate`, which llm-d cannot supply: the plugin holds it at 0, so evolved line 14 "
        'of x.go `if req.SessionID != "" && snap.CacheHitRate > 0.35 {` (and 1 more line) cannot act as it did in BLIS'
    )
    assert "QueueDepth" not in reason


# ---------------------------------------------------------------- Track A


def test_claim_whose_mechanism_reads_a_constant_signal_is_not_testable(summary, dictionary):
    req = make_request(
        source_text=SESSION_GO,
        claims=[
            {
                "id": "session-ttft",
                "statement": "the session bonus lowers TTFT on prefix-heavy",
                "metric": "ttft_mean_ms",
                "direction": "decrease",
                "workload": "prefix-heavy",
                "mechanism": "Score multiplied by (1 + 0.3*CacheHitRate) when req.SessionID is set",
            },
            {
                "id": "spill",
                "statement": "queue penalties lower p95 on load-spikes",
                "metric": "e2e_p95_ms",
                "direction": "decrease",
                "workload": "load-spikes",
                "mechanism": "QueueDepth above 4 halves the score",
            },
        ],
    )
    a = [h for h in generate_hypotheses(req, _constant(summary), dictionary) if h.track.value == "A"]
    assert [h.source for h in a] == ["session-ttft", "spill"]  # HYPOTHESIS-1 repeats session-ttft: folded in
    session, spill = a
    assert session.signals == ["CacheHitRate"] and "CacheHitRate" in session.not_testable
    assert "evolved line 14 of best_program.go" in session.not_testable and not session.benchmarked
    assert session.covers == ["OpenEvolve HYPOTHESIS-1 (line 9): predicts the same, tested here"]
    assert spill.signals == ["QueueDepth"] and spill.not_testable is None and spill.benchmarked
    # with the signal translated, the same claim is an ordinary, benchmarked hypothesis
    a2 = generate_hypotheses(req, summary, dictionary)[0]
    assert a2.not_testable is None and a2.benchmarked


def test_a_duplicate_openevolve_claim_brings_its_signals(summary, dictionary):
    """The claim in promotion.yaml names no signal; the OpenEvolve comment predicting the same does."""
    req = make_request(
        source_text=SESSION_GO,
        claims=[
            {
                "id": "session-ttft",
                "statement": "sessions stay warm",
                "metric": "ttft_mean_ms",
                "direction": "decrease",
                "workload": "prefix-heavy",
            }
        ],
    )
    (a,) = [h for h in generate_hypotheses(req, _constant(summary), dictionary) if h.track.value == "A"]
    assert a.signals == ["CacheHitRate"] and a.not_testable


def _session_claim(**over) -> dict:
    claim = {
        "id": "session-ttft",
        "statement": "sessions stay warm",
        "metric": "ttft_mean_ms",
        "direction": "decrease",
        "workload": "prefix-heavy",
        "mechanism": "a (1+0.3*CacheHitRate) bonus keeps sessions sticky",
    }
    return claim | over


def test_a_claims_declared_signals_are_its_signals_not_the_ones_its_text_names(summary, dictionary):
    """The researcher's ``signals:`` list wins over the mechanism's words, and over an OpenEvolve duplicate's."""
    s = _constant(summary)
    req = make_request(source_text=SESSION_GO, claims=[_session_claim(signals=["QueueDepth"])])
    (a,) = [h for h in generate_hypotheses(req, s, dictionary) if h.track.value == "A"]
    assert a.signals == ["QueueDepth"] and a.not_testable is None and a.benchmarked
    assert a.covers  # HYPOTHESIS-1 (which names CacheHitRate) is still folded in, its signal not added
    # an older alias is read as its canonical name; a declared constant signal makes the claim untestable
    req = make_request(source_text=SESSION_GO, claims=[_session_claim(statement="x", mechanism=None, signals=[])])
    (a,) = [h for h in generate_hypotheses(req, s, dictionary) if h.track.value == "A"]
    assert a.signals == [] and a.not_testable is None
    req = make_request(
        source_text=SESSION_GO, claims=[_session_claim(mechanism="stickiness", signals=["CacheHitRate"])]
    )
    (a,) = [h for h in generate_hypotheses(req, s, dictionary) if h.track.value == "A"]
    assert a.signals == ["CacheHitRate"] and "CacheHitRate" in a.not_testable


def test_declared_signals_take_aliases_and_refuse_what_the_plugin_does_not_read(summary, dictionary):
    from bot.hypotheses.errors import HypothesisError
    from bot.hypotheses.signals import declared_signals

    reads = ["CacheHitRate", "InFlightRequests", "QueueDepth"]
    assert declared_signals("c", None, reads, dictionary) is None
    assert declared_signals("c", ["QueueDepth", "PendingRequests"], reads, dictionary) == [
        "InFlightRequests",
        "QueueDepth",
    ]
    with pytest.raises(HypothesisError, match=r"claims\[c\]\.signals: GpuBandwidth is not a signal the dictionary"):
        declared_signals("c", ["GpuBandwidth"], reads, dictionary)
    with pytest.raises(
        HypothesisError, match="KVUtilization is not read by the evolved program; the program reads Cache"
    ):
        declared_signals("c", ["KVUtilization"], reads, dictionary)


# ---------------------------------------------------------------- implication


def test_equivalence_implies_no_regression_at_a_wider_margin_on_the_same_cells(request_, summary, dictionary):
    c = [h for h in generate_hypotheses(request_, summary, dictionary) if h.track.value == "C"]
    eq, nr = c[0], c[1]
    assert eq.prediction.direction is Direction.EQUIVALENT and nr.prediction.direction is Direction.NO_WORSE
    same = nr.model_copy(update={"prediction": nr.prediction.model_copy(update={"metric": eq.prediction.metric})})
    assert implies(eq, same)
    assert not implies(same, eq)  # never the other way
    narrower = same.model_copy(update={"prediction": same.prediction.model_copy(update={"margin": 0.03})})
    assert not implies(eq, narrower)  # a tighter no-regression margin is a stronger claim: kept
    elsewhere = same.model_copy(update={"workloads": ["prefix-heavy"]})
    assert not implies(eq, elsewhere)
    assert not implies(eq, nr)  # another metric


def test_a_per_id_margin_changes_the_hypothesis_it_names_and_no_id_moves(request_, summary, dictionary):
    """Found by a new user: `margin C2: 3%` brought back the no-regression on C1's metric (implied by C1 at 5%,
    so it had no id) as C2 at 3%, and the C2 they had seen (another metric) moved to C3 at 5%."""
    before = {h.id: h for h in generate_hypotheses(request_, summary, dictionary)}
    after = {h.id: h for h in generate_hypotheses(request_, summary, dictionary, feedback="margin C2: 3%")}
    assert after.keys() == before.keys()
    c1, c2 = after["C1"], after["C2"]
    assert c2.prediction.metric == before["C2"].prediction.metric != c1.prediction.metric
    assert c2.prediction.margin == 0.03 and "3%" in c2.title
    assert c1.covers == before["C1"].covers != []  # the no-regression C1 implies stays merged
    assert all(after[i] == before[i] for i in before if i != "C2")


def test_an_equivalence_widened_past_what_it_implied_gives_that_test_a_new_id(request_, summary, dictionary):
    """``margin C1: 10%`` no longer bounds the regression at 5%: the test is kept, after the ids people saw."""
    before = [h for h in generate_hypotheses(request_, summary, dictionary) if h.track.value == "C"]
    after = [
        h for h in generate_hypotheses(request_, summary, dictionary, feedback="margin C1: 10%") if h.track.value == "C"
    ]
    assert [h.id for h in after[: len(before)]] == [h.id for h in before]
    assert after[0].prediction.margin == 0.10 and after[0].covers == []
    (back,) = after[len(before) :]
    assert back.id == f"C{len(before) + 1}" and back.source == before[0].source
    assert (back.prediction.metric, back.prediction.direction, back.prediction.margin) == (
        before[0].prediction.metric,
        Direction.NO_WORSE,
        0.05,
    )


def test_gate2_holds_not_testable_to_the_signals(request_, summary, dictionary):
    from bot.review.gate2 import _testability

    constant = _constant(summary)
    req = make_request(source_text=SESSION_GO, claims=[])
    hs = [(f"{h.id}.md", h) for h in generate_hypotheses(req, constant, dictionary)]
    assert _testability(hs, constant) == []  # as generated: consistent
    a1 = next(h for _, h in hs if h.id == "A1")
    assert a1.not_testable
    judged = a1.model_copy(update={"not_testable": None})
    (f,) = _testability([("A1.md", judged)], constant)
    assert f.check == "G2.not-testable-as-translated" and "reads CacheHitRate" in f.message
    (f,) = _testability([("A1.md", a1)], summary)  # the signal is translated after all
    assert "none of its signals (CacheHitRate) is untranslatable" in f.message
