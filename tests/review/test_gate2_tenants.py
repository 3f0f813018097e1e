"""Gate 2: a plugin that decides by the request's tenant is benchmarked on cells that send one tenant each.

Found in a researcher's trial (trial3 p2, fixtures/tenant_fair): an admitter keeps, per tenant (``req.TenantID``,
llm-d's fairness ID), a sliding count of its arrivals and a moving average of its prompt length, and rejects a tenant
whose volume exceeds 1.5x the mean of the active tenants while the pool is busy. Every planned cell sends all its
requests under one fairness ID (inference-perf sends a fixed ``api.headers`` entry with every request, and the plan
runs one workload at a time), so the lone tenant always is the mean, `mine > 1.5*fair` never holds and the
admitter never rejects: A1 was judged, and confirmed on sample data, on cells that cannot exercise it. Gate 2 said
so only inside `G2.priority-exercised`'s fix ("all under one fairness ID unless a workload sends one per tenant",
which no workload per tenant changes).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from bot.dictionary import load_dictionary
from bot.hypotheses import generate_hypotheses
from bot.model import PipelineState, PolicyKind, PromotionRequest, Severity, TranslationSummary
from bot.review.gate2_traffic import traffic_findings

TRIAL = Path(__file__).parent / "fixtures" / "tenant_fair" / "promotion.yaml"
#: What stage 2 recorded for the trial's admitter (translation.json of its rehearsal).
TRIAL_SIGNALS = ["Clock", "InputTokens", "KVUtilization", "QueueDepth", "SLOClass", "TenantID"]
CHECK = "G2.tenants-exercised"
HEADER = "x-llm-d-inference-fairness-id"


def summary_for(signals=TRIAL_SIGNALS, kind=PolicyKind.ADMISSION, **update) -> TranslationSummary:
    d = load_dictionary()
    rows = {f"{pool}:{p}": "admit" for pool in ("idle", "overloaded") for p in (-1, 0, 1)}
    return TranslationSummary(
        kind=kind,
        plugin_type="tenant-fair-admitter",
        package_dir="pkg/x",
        signals=signals,
        freshness_gaps=[s for s in signals if d.signal(s).freshness.gap],
        touched_gaps=d.touched_gaps(kind, signals),
        behaviour=rows if kind is PolicyKind.ADMISSION else {},
        stateful=True,
    ).model_copy(update=update)


def tenant_findings(request: PromotionRequest, summary: TranslationSummary, home="local", check: str | None = CHECK):
    """Gate 2's tenant findings on ``request``'s own hypotheses."""
    hyps = [(f"docs/{h.id}.md", h) for h in generate_hypotheses(request, summary, load_dictionary())]
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch="promotion/x")
    ctx = SimpleNamespace(
        request=request,
        state=state,
        dictionary=load_dictionary(),
        paths=SimpleNamespace(hypotheses_dir="docs/h", epp_config=lambda t: f"deploy/{t}.yaml"),
        read=lambda path: None,
        home=home,
        work=None,
    )
    return [f for f in traffic_findings(ctx, hyps, summary) if check in (None, f.check)]


def with_overrides(request: PromotionRequest, workload: str, overrides: dict) -> PromotionRequest:
    changed = request.model_copy(deep=True)
    next(w for w in changed.workloads if w.name == workload).overrides.update(overrides)
    return changed


def test_a_per_tenant_admitter_on_cells_of_one_fairness_id_is_flagged():
    from bot.stages.pr_parts import brief

    [f] = tenant_findings(PromotionRequest.load(TRIAL), summary_for())
    assert f.severity is Severity.IMPORTANT
    # what it reads, where from, and what the cells send
    assert "TenantID" in f.message and f"`{HEADER}`" in f.message
    assert "which no planned workload (load-spikes, optimized-baseline, sanity-random) sends" in f.message
    assert "one fairness ID" in f.message and "A1" in f.message
    # a rule that compares a tenant with the others never acts on a lone tenant; one per tenant alone meets all
    assert "always the mean" in f.message
    assert brief(f.message).startswith("every planned cell sends its requests under one fairness ID")
    # the admitter's plan has a priority mix: it sends three, and decides none of these
    assert "tenant-critical, tenant-normal, tenant-batch" in f.message and "shedding order" in f.message
    # the fix: what each way a person might try does, and what clears the check
    assert "a workload per tenant" in f.fix and "one at a time" in f.fix
    assert "`data.otel_trace_replay.attribute_to_header_map`" in f.fix and HEADER in f.fix
    assert "exclude: A1" in f.fix
    assert "benchmark" in f.fix and "by hand" in f.fix


def test_a_fixed_fairness_header_is_one_tenant_and_is_still_flagged():
    """`api.headers.x-llm-d-inference-fairness-id: tenant-a` sends the header, but the same ID on every request:
    a workload per tenant still gives each run one tenant."""
    req = with_overrides(PromotionRequest.load(TRIAL), "load-spikes", {f"api.headers.{HEADER}": "tenant-a"})
    [f] = tenant_findings(req, summary_for())
    assert "load-spikes sends the one ID `tenant-a`" in f.message
    # the deprecated alias is read too, and header names are lower-cased as the EPP reads them
    old = with_overrides(
        PromotionRequest.load(TRIAL), "load-spikes", {"api.headers.X-Gateway-Inference-Fairness-Id": "t"}
    )
    [g] = tenant_findings(old, summary_for())
    assert "load-spikes sends the one ID `t`" in g.message


def test_a_workload_that_sends_a_fairness_id_per_request_clears_it():
    """inference-perf 0.6.1 varies a header per request only on a trace replay that maps a span attribute to it."""
    mapped = {
        "data.type": "otel_trace_replay",
        "data.otel_trace_replay.trace_directory": "/traces",
        "data.otel_trace_replay.attribute_to_header_map": {"tenant.id": "X-LLM-D-Inference-Fairness-ID"},
    }
    req = with_overrides(PromotionRequest.load(TRIAL), "load-spikes", mapped)
    assert tenant_findings(req, summary_for()) == []
    # a map to another header is not it
    other = dict(mapped, **{"data.otel_trace_replay.attribute_to_header_map": {"tenant.id": "x-tenant"}})
    assert len(tenant_findings(with_overrides(PromotionRequest.load(TRIAL), "load-spikes", other), summary_for())) == 1


def test_a_plugin_that_does_not_read_the_tenant_or_cannot_is_not_flagged():
    req = PromotionRequest.load(TRIAL)
    assert tenant_findings(req, summary_for([s for s in TRIAL_SIGNALS if s != "TenantID"])) == []
    assert tenant_findings(req, summary_for(untranslatable=["TenantID"])) == []


def test_a_router_that_reads_the_tenant_is_flagged_without_the_admitters_mix():
    req = PromotionRequest.load(TRIAL).model_copy(update={"kind": PolicyKind.ROUTING})
    [f] = tenant_findings(req, summary_for(["QueueDepth", "TenantID"], kind=PolicyKind.ROUTING))
    assert "priority mix" not in f.message and "tenant-normal" not in f.message


def test_on_github_the_exclude_is_the_comment():
    [f] = tenant_findings(PromotionRequest.load(TRIAL), summary_for(), home="github")
    assert "`/request-changes exclude: A1 (why)`" in f.fix


def test_the_bundled_example_reads_no_tenant():
    from tests.conftest import REQUEST

    req = PromotionRequest.load(REQUEST)
    signals = ["QueueDepth", "KVUtilization", "CacheHitRate", "SessionID"]
    assert tenant_findings(req, summary_for(signals, kind=PolicyKind.ROUTING)) == []


def test_the_stateful_admitters_fix_no_longer_says_a_workload_per_tenant_would_do():
    [f] = tenant_findings(PromotionRequest.load(TRIAL), summary_for(), check="G2.priority-exercised")
    assert "unless a workload sends one per tenant" not in f.fix
    assert CHECK in f.fix


def test_stage_5_gets_the_same_cause_as_a_caveat_and_sets_nothing_aside():
    """G3TEN: gate 2's finding used to stop at gate 2, and the sample data showed A1 "confirmed" bare. Stage 5
    reads the same cause (``tenant_caveat``) and judges the claims with it as a caveat: the admitter is stateful and
    a per-tenant limit acts on a lone tenant too, so "the plugin does not act on these cells" is not proven."""
    from bot.bench.set_aside import for_plan
    from bot.review.gate2_tenants import tenant_caveat

    d, req, summary = load_dictionary(), PromotionRequest.load(TRIAL), summary_for()
    hyps = generate_hypotheses(req, summary, d)
    c = tenant_caveat(d, req, hyps, summary)
    assert c is not None and c.check == CHECK and c.rule == "per-tenant rule"
    assert "one fairness ID" in c.cause and "TenantID" in c.cause
    assert f"`{HEADER}`" in c.fix and "otel_trace_replay" in c.fix and "several clients" in c.fix
    assert "exclude" not in c.fix  # gate 2 is approved by stage 5: its exclude is no longer on offer
    # nothing set aside for it: every benchmarked hypothesis is planned and judged
    assert [h.id for h in for_plan(req, summary, None, hyps) if h.benchmarked] == [h.id for h in hyps if h.benchmarked]
    # what clears gate 2's check clears the caveat; a plugin that does not read the tenant has none
    mapped = {
        "data.type": "otel_trace_replay",
        "data.otel_trace_replay.attribute_to_header_map": {"tenant.id": HEADER},
    }
    assert tenant_caveat(d, with_overrides(req, "load-spikes", mapped), hyps, summary) is None
    untenanted = summary_for([s for s in TRIAL_SIGNALS if s != "TenantID"])
    assert tenant_caveat(d, req, hyps, untenanted) is None
