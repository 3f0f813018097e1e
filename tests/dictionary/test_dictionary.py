"""The committed translation dictionary loads, answers lookups correctly and renders deterministically."""

from __future__ import annotations

import json

import jsonschema
import pytest

from bot import PROJECT_ROOT
from bot.dictionary import Dictionary, load_dictionary, load_raw, schema_json
from bot.dictionary_doc import render_markdown
from bot.model import PolicyKind

# From /work/shared/reference/blis.md §1 (RoutingSnapshot at f90a1e3a) — the requirement, not an output.
SNAPSHOT_FIELDS = [
    "ID",
    "QueueDepth",
    "BatchSize",
    "KVUtilization",
    "FreeKVBlocks",
    "CacheHitRate",
    "InFlightRequests",
    "PreemptionCount",
    "Model",
    "GPUType",
    "TPDegree",
    "CostPerHour",
    "TotalKvCapacityTokens",
    "KvTokensInUse",
    "TTFT",
    "ITL",
    "DispatchRate",
    "AvgInTokens",
    "AvgOutTokens",
    "MaxBatchSize",
    "ResidentAdapters",
]
REQUEST_FIELDS = [
    "ID",
    "InputTokens",
    "OutputTokens",
    "MaxOutputLen",
    "ArrivalTime",
    "Priority",
    "TenantID",
    "SLOClass",
    "SessionID",
    "ClientID",
    "PrefixGroup",
    "PrefixLength",
    "Model",
    "Adapter",
    "Deadline",
    "SLOTargetUs",
    "Streaming",
]
STATE_FIELDS = ["Clock", "Snapshots", "LoadingSnapshots", "SelectedInstance"]
SEED_GAPS = [
    "lora-affinity",
    "pod-health",
    "network-latency",
    "pd-role-split",
    "pod-heterogeneity",
    "concurrency-races",
]
SHORT_METRICS = {
    "ttft_mean",
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "tpot_mean",
    "itl_mean",
    "e2e_mean",
    "e2e_p50",
    "e2e_p95",
    "e2e_p99",
    "throughput",
    "request_rate",
}


@pytest.fixture(scope="module")
def d() -> Dictionary:
    return load_dictionary()


def test_pins_and_version(d):
    assert d.version.count(".") == 2
    assert d.pins["llm_d_router"] == "v0.10.0"
    assert d.pins["go"] == "1.26.6"
    assert "f90a1e3a" in d.pins["blis"]
    assert "8bc9f1d" in d.pins["llm_d_benchmark"]


def test_map_a_uses_real_signatures_and_llmd_router_layout(d):
    routing, admission, scheduling = (d.interface(k) for k in ("routing", "admission", "scheduling"))
    assert routing.blis_method == "Route(req *Request, state *RouterState) RoutingDecision"
    assert admission.blis_method == "Admit(req *Request, state *RouterState) (admitted bool, reason string)"
    assert scheduling.blis_method == "OrderQueue(requests []*Request, clock int64)"
    assert routing.llmd_extension_point == scheduling.llmd_extension_point == "scheduling.Scorer"
    assert admission.llmd_extension_point == "requestcontrol.Admitter"
    assert admission.target_dir == "pkg/epp/framework/plugins/requestcontrol/admitter/{package}"
    assert routing.target_dir == scheduling.target_dir == "pkg/epp/framework/plugins/scheduling/scorer/{package}"
    assert "Filter" in admission.seed_said and "reject" in (admission.why_changed or "")
    for i in d.interfaces:
        assert "{package}" in i.target_dir
        assert i.llmd_import.startswith("github.com/llm-d/llm-d-router/")


@pytest.mark.parametrize(
    ("scope", "names"), [("snapshot", SNAPSHOT_FIELDS), ("request", REQUEST_FIELDS), ("state", STATE_FIELDS)]
)
def test_map_b_covers_every_blis_field(d, scope, names):
    missing = [n for n in names if d.signal(n, scope=scope) is None]
    assert missing == []


def test_alias_lookup_resolves_pending_requests(d):
    old, new = d.signal("PendingRequests"), d.signal("InFlightRequests")
    assert old is not None and old is new
    assert "9a603bca" in (new.removed or "")
    assert new.freshness.gap and "synchronous" in new.freshness.blis.lower()
    assert d.signal("NoSuchSignal") is None


def test_the_rename_says_the_count_changed_too(d):
    """One Map B entry for both names, but not one count: the entry says so, and what the translation does about it."""
    new = d.signal("InFlightRequests")
    assert "redefined" in (new.removed or "")
    assert "Not a pure rename" in new.notes and "routed to the instance and not yet queued" in new.notes
    assert "hazard.counter-meaning-changed" in new.notes
    assert any("PendingRequests" in c and "redefined" in c for c in d.seed_corrections)


def test_scope_disambiguates_shared_names(d):
    assert d.signal("ID").scope == "snapshot"
    assert d.signal("ID", scope="request").llmd.expr == "req.RequestID"
    assert d.signal("Model", scope="request").identifier_only


def test_effective_load_expands_to_its_components(d):
    el = d.signal("EffectiveLoad")
    assert el.scope == "method"
    assert el.expands_to == ["QueueDepth", "BatchSize", "InFlightRequests"]
    # BLIS's EffectiveLoad counts queued and running twice (InFlightRequests covers them): so does llm-d's.
    expr = el.llmd.expr.replace(" ", "")
    assert "n+int(l.Requests)" in expr and "return2*n" in expr
    assert d.expand(["EffectiveLoad"]) == sorted(["EffectiveLoad", "QueueDepth", "BatchSize", "InFlightRequests"])
    assert d.expand(["PendingRequests", "Unknown"]) == ["InFlightRequests"]


def test_kv_utilization_is_not_divided_by_100(d):
    kv = d.signal("KVUtilization")
    assert kv.llmd.expr == "float64(m.KVCacheUsagePercent)"
    assert "100" not in kv.llmd.expr and "0-1" in kv.llmd.source


def test_input_tokens_are_an_approximation_from_request_size(d):
    it = d.signal("InputTokens")
    assert "RequestSizeBytes" in it.llmd.expr and it.llmd.replaces == "len(req.InputTokens)"
    assert it.fidelity in ("medium", "low") and "approximation" in it.llmd.source


def test_output_tokens_is_oracle_and_untranslatable(d):
    ot = d.signal("OutputTokens")
    assert ot.oracle and ot.llmd is None and ot.fidelity == "none" and "INV-9" in ot.fallback


def test_untranslatable_signals_carry_a_fallback(d):
    untranslatable = [s for s in d.signals if s.llmd is None]
    assert {"CacheHitRate", "TTFT", "ITL", "CostPerHour", "DispatchRate"} <= {s.name for s in untranslatable}
    for s in untranslatable:
        assert s.fidelity == "none" and s.fallback and len(s.fallback) > 40, s.name


def test_slo_class_maps_to_objectives_priority(d):
    slo = d.signal("SLOClass")
    assert "req.Objectives.Priority" in slo.llmd.expr
    assert d.signal("SessionID").llmd.expr == 'req.Headers["x-session-token"]'


def test_map_c_has_seed_gaps_and_actionable_track_b(d):
    ids = [g.id for g in d.gaps]
    assert set(SEED_GAPS) <= set(ids)
    assert all(d.gap(g).in_seed for g in SEED_GAPS)
    for g in d.gaps:
        t = g.track_b
        assert t.diagnostic.startswith("If this fails, it would indicate"), g.id
        assert t.metric in SHORT_METRICS, g.id
        assert g.touched_by_kinds or g.touched_by_signals, g.id
    with pytest.raises(KeyError):
        d.gap("no-such-gap")


@pytest.mark.parametrize("kind", list(PolicyKind))
def test_touched_gaps_per_kind(d, kind):
    bare = d.touched_gaps(kind, [])
    assert bare == sorted(g.id for g in d.gaps if kind in g.touched_by_kinds)
    assert "pod-health" in bare  # every kind runs against real, failing pods
    # adding signals only ever adds gaps, and the answer is sorted, deduplicated and repeatable
    sigs = ["EffectiveLoad", "PendingRequests", "SLOClass", "InputTokens", "NotASignal"]
    got = d.touched_gaps(kind, sigs)
    assert got == sorted(set(got)) == d.touched_gaps(kind, reversed(sigs))
    assert set(bare) <= set(got)
    assert {"metric-staleness", "concurrency-races", "priority-semantics", "input-token-estimate"} <= set(got)


def test_touched_gaps_kind_specific(d):
    assert "queue-ordering-authority" in d.touched_gaps("scheduling", [])
    assert "queue-ordering-authority" not in d.touched_gaps("routing", [])
    assert "priority-semantics" in d.touched_gaps(PolicyKind.ADMISSION, [])
    assert "lora-affinity" not in d.touched_gaps("admission", [])
    assert "lora-affinity" in d.touched_gaps("admission", ["ResidentAdapters"])
    assert d.touched_gaps("routing", ["PendingRequests"]) == d.touched_gaps("routing", ["InFlightRequests"])


def test_signal_and_gap_cross_references_agree(d):
    for s in d.signals:
        for gid in s.gaps:
            assert s.name in d.gap(gid).touched_by_signals


def test_render_is_deterministic_and_complete(d):
    md = render_markdown(d)
    assert md == render_markdown(load_dictionary())
    assert md.startswith("# BLIS → llm-d translation dictionary")
    for heading in ("## Version pins", "## What changed since the design doc", "## Map A", "## Map B", "## Map C"):
        assert heading in md
    for s in d.signals:
        assert f"| `{s.name}` | {s.scope} |" in md
    for g in d.gaps:
        assert f"| `{g.id}` |" in md
    for v in d.pins.values():
        assert v in md
    assert "requestcontrol.Admitter" in md and "PendingRequests" in md


def test_committed_schema_matches_models_and_yaml_validates():
    committed = (PROJECT_ROOT / "dictionary" / "schema.json").read_text(encoding="utf-8")
    assert committed == schema_json(), "dictionary/schema.json is stale: run `python -m bot.dictionary`"
    jsonschema.validate(load_raw(), json.loads(committed))
