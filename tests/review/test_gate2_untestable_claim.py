"""Gate 2 says when a BLIS claim is set aside as not testable as translated, and how to declare its signals.

Found by a researcher promoting a new program (newprog finding 4): p1's headline claim on `multiturn` (the
workload it was evolved for) names `CacheHitRate` in passing ("..., plus 0.25*CacheHitRate^2"), so it got no runs,
and gate 2 showed 0 findings; its session bonus, named as `ws.sessionHome`, did not count as reading SessionID.
The program is p1 as written (tests/golang/fixtures/routing_session_affinity.go); the summary is what stage 2 records for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.dictionary import load_dictionary
from bot.hypotheses import generate_hypotheses
from bot.model import PolicyKind, Severity, TranslationSummary
from bot.review.gate2 import _untestable_claims
from tests.hypotheses.conftest import make_request

SOURCE = (Path(__file__).parents[1] / "golang" / "fixtures" / "routing_session_affinity.go").read_text()
#: translation.json's signals for p1 (`promote translate`): CacheHitRate is held at 0 in llm-d.
SIGNALS = ["BatchSize", "CacheHitRate", "InFlightRequests", "KVUtilization", "QueueDepth", "SessionID"]
SESSION = "A +0.4 bonus on the session home instance (ws.sessionHome) while its QueueDepth is below 6, plus 0.25*CacheHitRate^2."


def p1_request(signals=None, cache_claim_workload="load-spikes"):
    session = {
        "id": "multiturn-ttft",
        "statement": "Under multiturn the evolved router lowers ttft_mean_ms by 18% because follow-up turns stay "
        "on their session home.",
        "metric": "ttft_mean_ms",
        "direction": "decrease",
        "magnitude": -0.18,
        "workload": "multiturn",
        "rate": 1000,
        "mechanism": SESSION,
    }
    if signals is not None:
        session["signals"] = signals
    cache = {
        "id": "cache-e2e",
        "statement": "The cache bonus lowers e2e_p95_ms by 5%.",
        "metric": "e2e_p95_ms",
        "direction": "decrease",
        "magnitude": -0.05,
        "workload": cache_claim_workload,
        "rate": 1000,
        "mechanism": "0.25*CacheHitRate^2 favours instances with warm caches.",
    }
    return make_request(
        source="p1_session_cubic.go",
        source_text=SOURCE,
        claims=[session, cache],
        workloads=[
            {"name": "multiturn", "profile": "shared_prefix_synthetic", "rates": [15, 30]},
            {"name": "load-spikes", "profile": "shared_prefix_synthetic", "rates": [30, 45]},
            {"name": "chat", "profile": "sanity_random", "rates": [5]},
        ],
        evolved_for="multiturn",
        baselines=[{"name": "chat-baseline", "workload": "chat", "rate": 5}],
    )


@pytest.fixture(scope="module")
def summary() -> TranslationSummary:
    d = load_dictionary()
    return TranslationSummary(
        kind=PolicyKind.ROUTING,
        plugin_type="evolved-weighted-scoring",
        package_dir="pkg/x",
        signals=SIGNALS,
        untranslatable=["CacheHitRate"],
        freshness_gaps=[s for s in SIGNALS if d.signal(s).freshness.gap],
        touched_gaps=d.touched_gaps(PolicyKind.ROUTING, SIGNALS),
    )


def hypotheses(req, summary):
    return [(f"docs/{h.id}.md", h) for h in generate_hypotheses(req, summary, load_dictionary())]


def by_source(hyps, source):
    return next(h for _, h in hyps if h.source == source)


def test_a_mechanism_naming_a_state_field_reads_the_signal_that_keys_it(summary):
    a1 = by_source(hypotheses(p1_request(), summary), "multiturn-ttft")
    # ws.sessionHome[req.SessionID] (lines 145 and 170): the session bonus reads SessionID
    assert a1.signals == ["CacheHitRate", "QueueDepth", "SessionID"]
    assert a1.not_testable and "`CacheHitRate`" in a1.not_testable


def test_the_headline_claim_set_aside_is_important_and_names_the_signals_override(summary):
    req = p1_request()
    hyps = hypotheses(req, summary)
    found = {f.message.split(" ")[0]: f for f in _untestable_claims(req, hyps, summary)}
    a1, cache = by_source(hyps, "multiturn-ttft"), by_source(hyps, "cache-e2e")
    f = found[a1.id]
    assert f.severity is Severity.IMPORTANT and f.check == "G2.claim-not-testable"
    assert "claim `multiturn-ttft` on `multiturn`, the workload the program was evolved for" in f.message
    assert "gets no benchmark runs" in f.message and "`CacheHitRate`" in f.message
    assert "add `signals: [QueueDepth, SessionID]` to claim `multiturn-ttft` in promotion.yaml" in f.fix
    # a claim on another workload is said too, less loudly; one that reads no carried signal has no override
    g = found[cache.id]
    assert g.severity is Severity.SUGGESTION and "evolved for" not in g.message
    assert "signals:" not in g.fix and "cannot be tested in llm-d as translated" in g.fix


def test_the_override_the_finding_shows_makes_the_claim_testable_and_clears_it(summary):
    req = p1_request(signals=["QueueDepth", "SessionID"])
    hyps = hypotheses(req, summary)
    a1 = by_source(hyps, "multiturn-ttft")
    assert a1.signals == ["QueueDepth", "SessionID"] and a1.not_testable is None and a1.benchmarked
    assert [f.message for f in _untestable_claims(req, hyps, summary) if a1.id in f.message] == []


def test_a_declared_list_that_keeps_the_signal_is_told_to_set_it(summary):
    req = p1_request(signals=["SessionID", "CacheHitRate"])
    hyps = hypotheses(req, summary)
    a1 = by_source(hyps, "multiturn-ttft")
    [f] = [f for f in _untestable_claims(req, hyps, summary) if f.message.startswith(a1.id)]
    assert "set `signals: [SessionID]` on claim `multiturn-ttft`" in f.fix and "declares none" not in f.message
