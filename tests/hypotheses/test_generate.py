"""Track A/B/C generation against the real dictionary and real request models."""

from __future__ import annotations

import pytest

from bot.hypotheses import (
    HypothesisError,
    blis_metric_to_short,
    claim_rates,
    generate_hypotheses,
    openevolve_findings,
    render_hypothesis,
)
from bot.hypotheses.metrics import metric_label
from bot.model import VVUQ, Direction, Family, HypothesisType, PolicyKind, RequestError, Track, TranslationSummary
from bot.model.metrics import BLIS_TO_SHORT, METRICS
from tests.hypotheses.conftest import make_request


def _track(hs, t):
    return [h for h in hs if h.track is Track(t)]


# ---------------------------------------------------------------- Track A


def test_claims_become_track_a_with_short_metric_and_direction(request_, summary, dictionary):
    hs = generate_hypotheses(request_, summary, dictionary)
    a = {h.source: h for h in _track(hs, "A")}
    for claim in request_.claims:
        h = a[claim.id]
        assert h.prediction.metric == BLIS_TO_SHORT[claim.metric]
        assert h.prediction.direction is Direction(claim.direction)
        assert h.prediction.blis_magnitude == claim.magnitude
        assert (h.family, h.vvuq, h.type) == (claim.family, claim.vvuq, claim.type)
        assert h.blis_statement.startswith(claim.statement)
        assert h.workloads == [claim.workload]
        assert "llm-d-benchmark" in h.statement and "default scorer pipeline" in h.statement
        assert h.diagnostic.startswith("If this fails, it would indicate")
    assert a["tput"].family is Family.PERFORMANCE_REGIME and a["tput"].type is HypothesisType.MONOTONICITY
    # the magnitude is relaxed: the statement asserts a direction, never the BLIS factor
    assert "2.45" not in a["ttft-prefix"].statement and "better (lower) mean TTFT" in a["ttft-prefix"].statement


@pytest.mark.parametrize(
    ("blis_rate", "real", "expected"),
    [
        (None, [4, 8, 12], []),
        (8, [4, 8, 12], [8]),
        (9, [4, 8, 12], [8]),
        (10, [4, 8, 12], [8]),  # tie between 8 and 12 goes to the lower rate
        (11, [12, 4, 8], [12]),
        (2000, [4, 8, 12], []),  # simulator scale: every real rate
        (1, [4, 8, 12], []),
    ],
)
def test_claim_rate_rule(blis_rate, real, expected):
    assert claim_rates(blis_rate, real) == expected


def test_claim_rate_carried_into_hypothesis(request_, summary, dictionary):
    a = {h.source: h for h in generate_hypotheses(request_, summary, dictionary) if h.track is Track.A}
    assert a["ttft-prefix"].rates == [8.0]  # BLIS 9 req/s inside [4, 12] -> nearest real rate
    assert a["tput"].rates == []  # BLIS 2000 req/s is off the GPU scale -> every real rate
    assert "BLIS rate 9 req/s → 8 req/s" in a["ttft-prefix"].blis_statement


def test_magnitude_against_direction_names_the_field(summary, dictionary):
    req = make_request()
    req.claims[0].magnitude = 0.3  # "decrease" with a positive change
    with pytest.raises(HypothesisError, match=r"claims\[ttft-prefix\]\.magnitude") as exc:
        generate_hypotheses(req, summary, dictionary)
    assert isinstance(exc.value, RequestError)


def test_unknown_claim_metric_names_the_field(summary, dictionary):
    req = make_request()
    req.claims[1].metric = "wibble_ms"
    with pytest.raises(HypothesisError, match=r"claims\[tput\]\.metric: unknown metric 'wibble_ms'"):
        generate_hypotheses(req, summary, dictionary)


def test_claim_on_metric_llm_d_does_not_report_has_no_prediction(summary, dictionary):
    req = make_request()
    req.claims[1].metric = "slo_attainment"
    a = {h.source: h for h in generate_hypotheses(req, summary, dictionary) if h.track is Track.A}
    assert a["tput"].prediction is None
    assert "does not report" in a["tput"].statement


def test_claim_on_ttft_p95_is_decided_by_the_benchmark(summary, dictionary):
    """Every v0.2 report carries time_to_first_token.p95; a claim on BLIS's ttft_p95_ms once read "llm-d-benchmark
    does not report it" and got no runs."""
    req = make_request()
    req.claims[1].metric = "ttft_p95_ms"
    a = {h.source: h for h in generate_hypotheses(req, summary, dictionary) if h.track is Track.A}
    assert a["tput"].prediction.metric == "ttft_p95"
    assert "not measured" not in a["tput"].title and "p95 TTFT" in a["tput"].statement


def test_claim_on_a_reported_statistic_the_bot_does_not_map_blames_the_bot(summary, dictionary):
    req = make_request()
    req.claims[1].metric = "ttft_p99p9_ms"
    a = {h.source: h for h in generate_hypotheses(req, summary, dictionary) if h.track is Track.A}
    h = a["tput"]
    assert h.prediction is None
    assert "does not report" not in h.statement and "not measured by llm-d-benchmark" not in h.title
    assert "The bot has no metric for it" in h.statement and "time_to_first_token.p99p9" in h.statement
    assert "the bot has no metric for it" in h.title


def test_openevolve_triples_become_track_a(request_, summary, dictionary):
    hs = generate_hypotheses(request_, summary, dictionary)
    oe = [h for h in _track(hs, "A") if h.source.startswith("HYPOTHESIS-")]
    assert [h.source for h in oe] == ["HYPOTHESIS-1", "HYPOTHESIS-2"]  # 3 was REFUTED in BLIS
    h1, h2 = oe
    assert h1.prediction.metric == "e2e_mean" and h1.prediction.direction is Direction.DECREASE
    assert h1.workloads == ["prefix-heavy"]  # cache_warmup -> blis_workload workload_v2_cache_warmup.yaml
    assert "so hot prefixes stop piling onto one instance" in h1.mechanism  # continuation line joined
    assert "EXPECT cache_warmup_e2e_ms < 4250" in h1.blis_statement
    assert h2.prediction.metric == "e2e_p95"
    # avg_* averages the BLIS workloads: every workload with a BLIS counterpart, not the guard workloads
    assert h2.workloads == [w.name for w in request_.workloads if w.blis_workload]
    assert len(h2.workloads) < len(request_.workloads)
    found = openevolve_findings(request_)
    h3_line = 1 + request_.source_text.splitlines().index("\t// HYPOTHESIS-3: Quadratic penalties help load spikes")
    assert [(f.check, f.line, f.file) for f in found] == [("G2.openevolve-refuted-in-blis", h3_line, "best_program.go")]


def test_malformed_expect_is_a_clear_error(summary, dictionary):
    src = "// HYPOTHESIS-1: faster\n// MECHANISM-1: because\n// EXPECT-1: lower latency please\n"
    req = make_request(source_text=src)
    with pytest.raises(
        HypothesisError, match=r"best_program.go:3: EXPECT-1: 'lower latency please' is not '<metric> <op> <threshold>'"
    ):
        generate_hypotheses(req, summary, dictionary)


# ---------------------------------------------------------------- Track B


def test_track_b_one_per_touched_gap_and_freshness_tied_to_the_run_that_varies_it(request_, summary, dictionary):
    assert summary.touched_gaps and summary.freshness_gaps
    b = _track(generate_hypotheses(request_, summary, dictionary), "B")
    gaps, fresh = b[: len(summary.touched_gaps)], b[len(summary.touched_gaps) :]
    assert [h.source for h in gaps] == list(summary.touched_gaps)
    for h in b:
        assert h.diagnostic.startswith("If this fails, it would indicate")
    for h, gid in zip(gaps, summary.touched_gaps, strict=True):
        tb = dictionary.gap(gid).track_b
        assert h.family is tb.family and h.type is tb.type
        if h.prediction is not None:
            assert h.prediction.metric == tb.metric and h.prediction.direction.value == tb.direction
    # The metric-staleness treatment slows the metrics scrape: the scraped signals are decided there, once.
    stale = next(h for h in gaps if h.source == "metric-staleness")
    assert all(w.endswith("+metric-staleness") for w in stale.workloads)
    assert stale.signals == ["QueueDepth", "KVUtilization"]
    assert "covering the Map B freshness of `QueueDepth` and `KVUtilization`" in stale.title
    assert [c.split(":")[0] for c in stale.covers] == [
        "Map B freshness of `QueueDepth`",
        "Map B freshness of `KVUtilization`",
    ]
    # What no planned run varies is one line, not decided by the plan (never judged on cells that vary nothing).
    (rest,) = fresh
    assert rest.signals == ["InFlightRequests", "CacheHitRate"] and rest.source == "InFlightRequests, CacheHitRate"
    assert rest.family is Family.STRUCTURAL_MODEL and rest.prediction is None
    assert "no planned run varies them" in rest.title
    assert "needs a run that changes how fresh llm-d's `InFlightRequests` and `CacheHitRate` are" in rest.not_in_plan
    assert "should behave according to" in rest.statement and "verified by observable" in rest.statement
    # found by a new user: its mechanism said "Verify via the concurrency-races and metric-staleness Track B
    # hypotheses" while its title says no planned run varies it
    assert "Verify via" not in rest.mechanism and "`InFlightRequests`: With several EPP replicas" in rest.mechanism
    assert ".;" not in rest.mechanism and rest.mechanism.endswith(".")  # one sentence per signal, joined cleanly


def test_freshness_of_a_signal_the_plugin_holds_constant_is_not_testable(request_, summary, dictionary):
    constant = summary.model_copy(update={"untranslatable": ["CacheHitRate"]})
    b = _track(generate_hypotheses(request_, constant, dictionary), "B")
    last = b[-1]
    assert last.signals == ["CacheHitRate"] and "the plugin holds it constant" in last.title
    assert (
        last.not_testable and "`CacheHitRate`, which llm-d cannot supply: the plugin holds it at 0" in last.not_testable
    )
    assert last.prediction is not None and not last.benchmarked  # what it would predict stays visible
    assert b[-2].signals == ["InFlightRequests"] and b[-2].not_testable is None


def test_freshness_without_a_runnable_treatment_is_one_untested_line(request_, summary, dictionary):
    no_interval = request_.model_copy(
        update={
            "stack": request_.stack.model_copy(
                update={"cluster": request_.stack.cluster.model_copy(update={"metrics_interval": False})}
            )
        }
    )
    b = _track(generate_hypotheses(no_interval, summary, dictionary), "B")
    assert [h.signals for h in b if h.signals] == [["QueueDepth", "KVUtilization", "InFlightRequests", "CacheHitRate"]]
    assert "no run condition of this plan (`pod-failure`) changes them" in b[-1].not_in_plan


def test_failure_injection_gap_is_decided_by_a_fault_treatment_or_reported_not_runnable(request_, summary, dictionary):
    b = {h.source: h for h in _track(generate_hypotheses(request_, summary, dictionary), "B")}
    robustness = [g for g in summary.touched_gaps if dictionary.gap(g).track_b.family is Family.ROBUSTNESS]
    injected = [g for g in robustness if "pod" in dictionary.gap(g).track_b.workloads]
    assert injected
    for g in injected:  # the cluster may delete pods (the default): a planned pod-failure treatment decides it
        h = b[g]
        assert h.prediction is not None and "fault treatment `pod-failure`" in h.statement
        assert all(w.endswith("+pod-failure") for w in h.workloads)
    no_faults = request_.model_copy(
        update={
            "stack": request_.stack.model_copy(
                update={"cluster": request_.stack.cluster.model_copy(update={"pod_deletion": False})}
            )
        }
    )
    b = {h.source: h for h in _track(generate_hypotheses(no_faults, summary, dictionary), "B")}
    for g in injected:  # it cannot: reported as not runnable, with the reason
        assert b[g].prediction is None and "stack.cluster.pod_deletion is false" in b[g].statement
        assert "stack.cluster.pod_deletion is false" in b[g].not_in_plan  # the verdict will say it
    # a gap whose hint names one of the request's workloads (by profile) is predicted on it
    hinted = [g for g in summary.touched_gaps if "shared_prefix_synthetic" in dictionary.gap(g).track_b.workloads]
    for g in hinted:
        assert b[g].prediction is not None and b[g].workloads == ["prefix-heavy"]


def test_unknown_gap_in_summary_is_an_error(request_, summary, dictionary):
    bad = summary.model_copy(update={"touched_gaps": ["no-such-gap"]})
    with pytest.raises(HypothesisError, match="'no-such-gap' is not a Map C gap"):
        generate_hypotheses(request_, bad, dictionary)


# ---------------------------------------------------------------- Track C


def test_track_c_per_baseline_and_guarded_metric(request_, summary, dictionary):
    c = _track(generate_hypotheses(request_, summary, dictionary), "C")
    # the equivalence on the first guarded metric implies its no-regression: one hypothesis, not two
    assert len(c) == sum(len(b.guarded_metrics) for b in request_.baselines)
    i = 0
    for b in request_.baselines:
        eq, *nr = c[i : i + len(b.guarded_metrics)]
        i += len(b.guarded_metrics)
        assert eq.prediction.direction is Direction.EQUIVALENT and eq.prediction.margin == 0.05
        assert eq.prediction.metric == b.guarded_metrics[0]
        assert eq.covers == [
            f"No regression of {metric_label(b.guarded_metrics[0])} beyond 5% on {b.name}: implied by {eq.id} (equivalence within ±5% bounds the regression)"
        ]
        assert [h.prediction.metric for h in nr] == b.guarded_metrics[1:]
        assert all(h.prediction.direction is Direction.NO_WORSE and h.prediction.margin == 0.05 for h in nr)
        assert all(h.workloads == [b.workload] and h.source == b.name for h in [eq, *nr])
        assert all(h.rates == ([b.rate] if b.rate is not None else []) for h in [eq, *nr])


def test_track_c_without_baselines_derives_from_every_workload(summary, dictionary):
    req = make_request(baselines=[])
    hs = generate_hypotheses(req, summary, dictionary)
    c = _track(hs, "C")
    improved = {w for h in _track(hs, "A") if h.prediction for w in h.workloads}
    for w in req.workloads:
        mine = [h for h in c if h.workloads == [w.name]]
        nr = [h for h in mine if h.prediction.direction is Direction.NO_WORSE]
        eq = [h for h in mine if h.prediction.direction is Direction.EQUIVALENT]
        assert len(eq) == (0 if w.name in improved else 1)
        # without an equivalence the first guarded metric needs its own no-regression hypothesis
        assert [h.prediction.metric for h in nr] == ["ttft_mean", "e2e_p95", "throughput"][len(eq) :]
        assert all("No baseline scenarios were given" in h.statement for h in mine)
    assert len(c) == 3 * len(req.workloads)


def test_unknown_guarded_metric_names_the_field(summary, dictionary):
    req = make_request(baselines=[{"name": "x", "workload": "chat", "guarded_metrics": ["latency"]}])
    with pytest.raises(HypothesisError, match=r"baselines\[x\]\.guarded_metrics"):
        generate_hypotheses(req, summary, dictionary)


# ---------------------------------------------------------------- ids, determinism, kinds


def test_ids_are_sequential_per_track(request_, summary, dictionary):
    hs = generate_hypotheses(request_, summary, dictionary)
    for t in "ABC":
        ids = [h.id for h in hs if h.track is Track(t)]
        assert ids == [f"{t}{n}" for n in range(1, len(ids) + 1)]
    assert [h.track.value for h in hs] == sorted(h.track.value for h in hs)


def test_same_input_same_text(summary, dictionary):
    one = [render_hypothesis(h) for h in generate_hypotheses(make_request(), summary, dictionary)]
    two = [render_hypothesis(h) for h in generate_hypotheses(make_request(), summary, dictionary)]
    assert one == two


def test_admission_wording_and_default_metric(dictionary):
    req = make_request(kind="admission", claims=[], source_text="")
    signals = ["InFlightRequests", "SLOClass"]
    s = TranslationSummary(
        kind=PolicyKind.ADMISSION,
        plugin_type="evolved-admission",
        package_dir="pkg/x",
        signals=signals,
        freshness_gaps=["InFlightRequests"],
        touched_gaps=dictionary.touched_gaps("admission", signals),
    )
    hs = generate_hypotheses(req, s, dictionary)
    assert not _track(hs, "A")
    fresh = [h for h in hs if h.source == "InFlightRequests"]
    assert metric_label("e2e_p95") in fresh[0].statement and fresh[0].prediction is None  # no planned run varies it
    assert "admission" in fresh[0].statement
    assert all(h.vvuq in VVUQ for h in hs)


ROUTING_WORDS = ("spread requests across pods", "herding", "herd", "random tie-break", "request distribution")


@pytest.mark.parametrize("gap", ["concurrency-races", "pod-health"])
def test_admission_track_b_is_worded_for_an_admitter_and_routing_keeps_its_words(gap, dictionary):
    # found by a new user: an admitter's B1 said "spread requests across pods ... herding" with "add a random
    # tie-break" as the fix, and B5 "recover its request distribution"; an admitter never picks a pod.
    def track_b(kind):
        s = TranslationSummary(
            kind=PolicyKind(kind),
            plugin_type="evolved-x",
            package_dir="pkg/x",
            signals=["InFlightRequests"],
            touched_gaps=[gap],
        )
        req = make_request(kind=kind, claims=[], source_text="")
        return next(h for h in generate_hypotheses(req, s, dictionary) if h.source == gap)

    adm = track_b("admission")
    text = (adm.statement + " " + adm.diagnostic).lower()
    assert not [w for w in ROUTING_WORDS if w in text], text
    assert "admi" in text and adm.diagnostic.startswith("If this fails, it would indicate")
    routing = track_b("routing")
    assert dictionary.gap(gap).track_b.worded_for("routing").filled("`evolved-x`", 4).statement in routing.statement
    assert routing.diagnostic == dictionary.gap(gap).track_b.diagnostic


@pytest.mark.parametrize("kind", ["admission", "routing"])
def test_the_pod_failure_statement_counts_the_stacks_own_pods(kind, dictionary):
    # found by a GPU operator: B5 said "1 of 4 model-server pods restarted" on a 2-replica stack
    s = TranslationSummary(
        kind=PolicyKind(kind), plugin_type="evolved-x", package_dir="pkg/x", signals=[], touched_gaps=["pod-health"]
    )
    req = make_request(kind=kind, claims=[], source_text="")
    req = req.model_copy(update={"stack": req.stack.model_copy(update={"replicas": 2})})
    h = next(h for h in generate_hypotheses(req, s, dictionary) if h.source == "pod-health")
    assert "(1 of 2 model-server pods deleted mid-benchmark)" in h.statement
    assert "{" not in h.statement + h.diagnostic and "1 of 4" not in h.statement
    # where the stack is not known (gate 1's translation report), no count is made up
    worded = dictionary.gap("pod-health").track_b.worded_for(kind).filled("evolved-x")
    assert "(one model-server pod deleted mid-benchmark)" in worded.statement


def test_admission_concerns_do_not_talk_of_favouring_a_pod(dictionary):
    for gap in dictionary.gaps:
        assert gap.concern_for("routing") == gap.concern
        words = [w for w in ("favouring a pod", "herd onto") if w in gap.concern_for("admission")]
        assert not ("admission" in gap.touched_by_kinds and words), (gap.id, words)


# ---------------------------------------------------------------- metric names


def test_blis_metric_to_short_uses_the_bench_table():
    for blis, short in BLIS_TO_SHORT.items():
        assert blis_metric_to_short(blis) == short
    for short in METRICS:
        assert blis_metric_to_short(short) == short
    assert blis_metric_to_short("avg_p95_ms") == "e2e_p95"
    assert blis_metric_to_short("cache_warmup_e2e_ms") == "e2e_mean"
    with pytest.raises(HypothesisError, match="unknown metric 'p42_latency'"):
        blis_metric_to_short("p42_latency")
    with pytest.raises(HypothesisError, match="no llm-d-benchmark counterpart"):
        blis_metric_to_short("slo_attainment")


def test_openevolve_hypothesis_checked_where_its_text_says(summary, dictionary):
    """A plain EXPECT metric goes to the workload the HYPOTHESIS line names, else to evolved_for."""
    src = (
        "// HYPOTHESIS-1: Under load-spikes, load penalties cut tail latency\n// MECHANISM-1: spill bursts\n"
        "// EXPECT-1: e2e_p95_ms < 6500\n// HYPOTHESIS-2: sessions get faster\n// MECHANISM-2: warm caches\n"
        "// EXPECT-2: ttft_mean_ms < 80\n"
    )
    req = make_request(source_text=src)
    hs = [h for h in generate_hypotheses(req, summary, dictionary) if h.source.startswith("HYPOTHESIS-")]
    assert hs[0].workloads == ["load-spikes"]
    assert hs[1].workloads == ([req.evolved_for] if req.evolved_for else [w.name for w in req.workloads])


def test_a_folded_openevolve_claim_reads_as_its_own_sentence(summary, dictionary):
    """Found by a new user: a mechanism read "... on one instance.; OpenEvolve's HYPOTHESIS-1 ..."."""
    src = (
        "package sim\n\nfunc (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {\n"
        "\t// EVOLVE-BLOCK-START\n"
        "\t// HYPOTHESIS-1: favouring warm instances for session requests lowers TTFT on prefix-heavy\n"
        "\t// MECHANISM-1: sessions stay on warm instances\n\t// EXPECT-1: ttft_mean_ms < 80\n"
        "\t// EVOLVE-BLOCK-END\n}\n"
    )
    claim = {
        "id": "session-ttft",
        "statement": "the session bonus lowers TTFT on prefix-heavy",
        "metric": "ttft_mean_ms",
        "direction": "decrease",
        "workload": "prefix-heavy",
        "mechanism": "Sessions stick to one instance.",
    }
    (h,) = [
        h
        for h in generate_hypotheses(make_request(source_text=src, claims=[claim]), summary, dictionary)
        if h.track is Track.A
    ]
    assert h.covers  # HYPOTHESIS-1 was folded into the claim
    assert h.mechanism == (
        "Sessions stick to one instance. OpenEvolve's HYPOTHESIS-1 (line 5) predicts the same and is tested here."
    )
