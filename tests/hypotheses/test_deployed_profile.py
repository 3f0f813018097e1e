"""Track B texts follow the profile the experiment deploys and claim only what the benchmark measures.

Found by an llm-d reader checking that the bot agrees with itself (consistency findings 1, 3, 4, 5): B6 was
confirmed "with prefix-cache-scorer in the profile ... carried by prefix-cache-scorer" for a profile that runs
the scorer alone (its config warns that adding prefix-cache-scorer counts the term twice); B5 claimed a
10-second recovery of the request distribution nothing measured, for a pod "restarted" that the run deletes;
the InFlightRequests freshness was sent to metric-staleness, which cannot change it beside inflight-load-producer;
B1 advised adding the producer and a random tie-break to a config that has both.
"""

from __future__ import annotations

import re

import pytest

from bot.bench.conditions import conditions_changing, conditions_for
from bot.hypotheses import generate_hypotheses
from bot.model import PolicyKind, TranslationSummary
from tests.hypotheses.conftest import make_request

#: What the bundled example's EndpointPickerConfig runs beside the scorer (it reads the prefix match and the
#: in-flight count itself; no other scorer).
STANDALONE = ["approx-prefix-cache-producer", "inflight-load-producer"]


def _gap(dictionary, gap: str, epp_plugins, kind: str = "routing", signals=()):
    summary = TranslationSummary(
        kind=PolicyKind(kind),
        plugin_type="evolved-x",
        package_dir="pkg/x",
        signals=list(signals),
        touched_gaps=[gap],
        epp_plugins=epp_plugins,
    )
    req = make_request(kind=kind, claims=[], source_text="")
    return next(h for h in generate_hypotheses(req, summary, dictionary) if h.source == gap)


def test_the_prefix_hypothesis_names_what_carries_the_cache_term_in_the_deployed_profile(dictionary):
    alone = _gap(dictionary, "prefix-cache-signal", STANDALONE)
    assert "with prefix-cache-scorer in the profile" not in alone.statement
    assert "carried by prefix-cache-scorer" not in alone.statement
    assert "no prefix-cache-scorer in its profile" in alone.statement
    assert "the plugin carries the cache-affinity term itself" in alone.statement
    assert "Do not add prefix-cache-scorer" in alone.diagnostic
    # a profile that does run prefix-cache-scorer (a scheduler's, an admitter's) keeps the words that say so
    beside = _gap(dictionary, "prefix-cache-signal", ["approx-prefix-cache-producer", "prefix-cache-scorer"])
    assert "with prefix-cache-scorer in the profile" in beside.statement
    # a profile with neither claims no carrier at all
    bare = _gap(dictionary, "prefix-cache-signal", [])
    assert "carried" not in bare.statement and "carries" not in bare.statement


@pytest.mark.parametrize("kind", ["routing", "admission", "scheduling"])
def test_the_pod_failure_hypothesis_claims_only_what_its_run_measures(kind, dictionary):
    h = _gap(dictionary, "pod-health", STANDALONE, kind)
    condition = conditions_for(make_request(kind=kind).stack)["pod-failure"]
    assert "deleted" in condition.what
    claim = h.statement.split(" (Decided by")[0]
    assert "deleted mid-benchmark" in claim and "restart" not in claim
    assert "recover" not in claim and "pre-failure" not in claim
    assert "e2e p95" in claim and h.prediction.metric == "e2e_p95"


def test_no_track_b_template_claims_a_time_bound_no_run_measures(dictionary):
    """No llm-d-benchmark report gives a recovery time: "within 10 s" in a statement is a claim nothing decides."""
    for gap in dictionary.gaps:
        tb = gap.track_b
        texts = [tb.statement, *(w.statement for w in tb.by_kind.values())]
        for pw in tb.by_profile.values():
            texts += [pw.statement, *(w.statement for w in pw.by_kind.values())]
        for text in texts:
            assert not re.search(r"within \d+ ?(s|ms|seconds)\b", text), (gap.id, text)


def test_in_flight_freshness_goes_only_to_a_condition_that_changes_it(dictionary):
    # beside inflight-load-producer the count is synchronous: slowing the scrape does not change it
    assert conditions_changing({"InFlightRequests"}, STANDALONE) == []
    assert conditions_changing({"EffectiveLoad", "QueueDepth", "BatchSize", "InFlightRequests"}, STANDALONE) == [
        "metric-staleness"
    ]
    # without the producer it falls back to the scraped gauges, which the condition does slow
    assert conditions_changing({"InFlightRequests"}, ["prefix-cache-scorer"]) == ["metric-staleness"]

    def fresh(epp_plugins):
        summary = TranslationSummary(
            kind=PolicyKind.ROUTING,
            plugin_type="evolved-x",
            package_dir="pkg/x",
            signals=["InFlightRequests", "QueueDepth"],
            freshness_gaps=["InFlightRequests", "QueueDepth"],
            touched_gaps=["metric-staleness"],
            epp_plugins=epp_plugins,
        )
        req = make_request(claims=[], source_text="")
        return generate_hypotheses(req, summary, dictionary)

    with_producer = fresh(STANDALONE)
    stale = next(h for h in with_producer if h.source == "metric-staleness")
    assert stale.signals == ["QueueDepth"]
    assert any(h.signals == ["InFlightRequests"] and h.not_in_plan for h in with_producer)
    without = fresh(["queue-scorer"])
    stale = next(h for h in without if h.source == "metric-staleness")
    assert stale.signals == ["InFlightRequests", "QueueDepth"]


@pytest.mark.parametrize("kind", ["routing", "admission"])
def test_the_herding_advice_suggests_nothing_the_config_already_has(kind, dictionary):
    h = _gap(dictionary, "concurrency-races", STANDALONE, kind, ["InFlightRequests"])
    d = h.diagnostic
    assert "random tie-break" not in d and "add the inflight-load-producer" not in d
    assert "already reads inflight-load-producer" in d and d.startswith("If this fails, it would indicate")
    # no profile runs a picker that does not shuffle ties, so no wording of any profile asks for one
    for gap in dictionary.gaps:
        tb = gap.track_b
        words = [tb.diagnostic, *(w.diagnostic for w in tb.by_kind.values())]
        words += [w.diagnostic for pw in tb.by_profile.values() for w in (pw, *pw.by_kind.values())]
        assert not [w for w in words if "tie-break" in w], gap.id
