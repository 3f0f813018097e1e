"""A claim whose mechanism rests on logic gate 1 found dead in the plugin is not testable as translated.

Found in the trial (NOTE-13, "what is left"): a01 sheds `batch` requests above `batchLimit` in `case "batch":`
(line 167), a class llm-d never sends this plugin, so gate 1 made `batchLimit` and its factor constants of
evolved.go (``bot.golang.dead_branches``); yet a claim about batch requests was still planned, benchmarked and
could read "confirmed". The summary here is stage 2's own for a01 (the real translation), the claims are a
researcher's: one about the dead batch branch, one about the live sheddable one, and one naming both classes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.dictionary import load_dictionary
from bot.hypotheses import generate_hypotheses
from bot.hypotheses.blis_feedback import recommendations
from bot.hypotheses.dead_logic import classes_named
from bot.model import Severity, VerdictStatus
from bot.review.gate2 import _dead_in_passing, _testability, _untestable_claims
from bot.stats.verdicts import not_testable_verdict
from tests.hypotheses.conftest import make_request

A01 = Path(__file__).resolve().parents[2] / "examples" / "corpus" / "a01_pattern_c_adaptive_admission.go"
BATCH = "Batch requests are shed once the load ratio exceeds batchLimit (0.5, times 0.8 for heavy tenants)."
SHEDDABLE = "Sheddable requests are shed once the load ratio exceeds shedLimit (0.75, times 0.9 for heavy tenants)."
BOTH = "Sheddable and batch requests are shed when the load ratio is above their limits."


def claim(cid: str, metric: str, mechanism: str, workload: str = "load-spikes") -> dict:
    return {
        "id": cid,
        "statement": f"Under {workload} the admitter lowers {metric} by 10% vs always-admit.",
        "metric": metric,
        "direction": "decrease",
        "magnitude": -0.10,
        "workload": workload,
        "rate": 30,
        "mechanism": mechanism,
    }


@pytest.fixture(scope="module")
def a01_summary():
    """What stage 2 records for a01 (translation.json), from the real translation."""
    from bot.golang.analyze import analyze
    from bot.golang.source import load_evolved_source
    from bot.golang.translate import translate

    d = load_dictionary()
    src = load_evolved_source(A01)
    return translate(src, analyze(src, d, None), d, plugin_type="adaptive-admission").summary


def a01_request():
    return make_request(
        kind="admission",
        source=A01.name,
        source_text=A01.read_text(),
        claims=[
            claim("batch-ttft", "ttft_p95_ms", BATCH),
            claim("sheddable-e2e", "e2e_p95_ms", SHEDDABLE),
            claim("both-ttft", "ttft_mean_ms", BOTH, workload="chat"),
        ],
        workloads=[
            {"name": "load-spikes", "profile": "shared_prefix_synthetic", "rates": [30, 45]},
            {"name": "chat", "profile": "sanity_random", "rates": [5]},
        ],
        evolved_for="load-spikes",
        baselines=[{"name": "chat-baseline", "workload": "chat", "rate": 5}],
    )


@pytest.fixture(scope="module")
def hyps(a01_summary):
    return {h.source: h for h in generate_hypotheses(a01_request(), a01_summary, load_dictionary())}


def test_a_claim_resting_on_the_dead_batch_branch_is_not_testable_and_names_it(hyps):
    h = hyps["batch-ttft"]
    assert h.prediction is not None  # a benchmark metric: only the dead logic keeps it from the plan
    assert not h.benchmarked and h.not_testable, h.not_testable
    # the reason names the dead logic and its evolved-program line, as gate 1 found it
    where = '`case "batch"` (evolved line 167 of a01_pattern_c_adaptive_admission.go; `batchLimit` acts only there)'
    assert where in h.not_testable and 'serves only SLO class "batch", which llm-d never sends' in h.not_testable
    v = not_testable_verdict(h)
    assert v.status is VerdictStatus.NOT_TESTABLE and 'case "batch"' in v.summary


def test_stage_2_records_the_dead_branch_and_the_numbers_acting_only_there(a01_summary):
    [d] = a01_summary.dead_logic
    assert (d.line, d.code, d.classes) == (167, 'case "batch"', ["batch"])
    assert d.names == ["batchLimitEvolved", "batchLimit", "batchLimitFactor"]  # the constants and the evolved local


def test_a_class_counts_when_named_as_a_class():
    assert classes_named("Sheddable and batch requests are shed; the batch-class waits") == {"sheddable", "batch"}
    assert classes_named('class "background" and SLO classes batch or standard') == {"background", "batch", "standard"}
    # a batch size, batching, a non-batch request and a background task are no class
    assert classes_named("a larger batch size and continuous batching; non-batch requests; in the background") == set()


def test_blis_is_asked_for_a_mechanism_on_what_llm_d_sends(hyps):
    h = hyps["batch-ttft"]
    [rec] = recommendations([(h, not_testable_verdict(h))])
    assert rec.kind == "re-evolution" and '`case "batch"` (evolved line 167' in rec.text
    assert "cannot supply" not in rec.text and "critical, standard and sheddable" in rec.text


def test_claims_on_logic_that_acts_in_llm_d_stay_testable(hyps):
    # shedLimit acts in `case "sheddable"`; naming batch beside sheddable is in passing: the rest acts in llm-d
    for source in ("sheddable-e2e", "both-ttft"):
        h = hyps[source]
        assert h.benchmarked and h.not_testable is None, (source, h.not_testable)


def test_gate_2_says_when_a_hypothesis_on_dead_logic_is_still_benchmarked(a01_summary, hyps):
    paths = [(f"docs/hypotheses/{h.id}.md", h) for h in hyps.values()]
    assert _testability(paths, a01_summary) == []  # stage 3's records agree with the translation
    batch = hyps["batch-ttft"]
    stale = [(p, h.model_copy(update={"not_testable": None}) if h is batch else h) for p, h in paths]
    found = _testability(stale, a01_summary)
    assert [(f.severity, f.check) for f in found] == [(Severity.IMPORTANT, "G2.not-testable-as-translated")]
    assert batch.id in found[0].message and '`case "batch"` (evolved line 167' in found[0].message
    # and a hypothesis that says so without resting on dead logic is told it would not be judged for nothing
    live = hyps["sheddable-e2e"]
    wrong = [(p, h.model_copy(update={"not_testable": "made up"}) if h is live else h) for p, h in paths]
    assert [f.message.split(" ")[0] for f in _testability(wrong, a01_summary)] == [live.id]


def test_gate_2_says_when_dead_logic_is_named_in_passing(a01_summary, hyps):
    """both-ttft ("Sheddable and batch requests are shed ...") is benchmarked for its sheddable half; the batch
    half never runs in llm-d, which the gate says without blocking."""
    paths = [(f"docs/hypotheses/{h.id}.md", h) for h in hyps.values()]
    [f] = _dead_in_passing(paths, a01_summary)
    both = hyps["both-ttft"]
    assert (f.severity, f.check) == (Severity.SUGGESTION, "G2.dead-logic-in-passing")
    assert f.message.startswith(f"{both.id}'s mechanism also names") and '`case "batch"` (evolved line 167' in f.message
    # a mechanism on live logic alone, and one already set aside, are not named
    live = [(p, h) for p, h in paths if h is not both]
    assert _dead_in_passing(live, a01_summary) == []


def test_gate_2_names_the_claim_set_aside_and_what_to_do(a01_summary, hyps):
    req = a01_request()
    paths = [(f"docs/hypotheses/{h.id}.md", h) for h in hyps.values()]
    found = _untestable_claims(req, paths, a01_summary)
    assert [f.message.split(" ")[0] for f in found] == [hyps["batch-ttft"].id]
    f = found[0]
    assert f.severity is Severity.IMPORTANT and f.check == "G2.claim-not-testable"  # the headline workload
    assert "claim `batch-ttft`" in f.message and '`case "batch"` (evolved line 167' in f.message
    assert "mechanism" in f.fix and "promotion.yaml" in f.fix


def test_a_scheduler_s_class_branch_is_not_dead_logic():
    """s01's `case "batch":` never serves the request being placed, but its modelled waiting requests take
    incumbentSLOClass, which may be batch: the branch can run in the plugin, so no claim is set aside for it."""
    from bot.golang import dead_branches
    from bot.golang.analyze import analyze
    from bot.golang.source import load_evolved_source

    src = load_evolved_source(A01.parent / "s01_slo_aging_scheduler.go")
    an = analyze(src, load_dictionary(), None)
    assert an.kind.value == "scheduling" and dead_branches.dead_logic(an) == []
