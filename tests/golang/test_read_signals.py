"""The plugin reads, declares, fills and deploys only the signals its decision reads: those of the evolved logic
and those of the BLIS scorers ``baseline.go`` carries for it, no others.

Found by a researcher's trial (routing_regime_blend.go, shortened from it): a router whose evolved block reads only
QueueDepth and KVUtilization, beside BLIS's default scorers (precise-prefix-cache, queue-depth, kv-utilization). The
PR said it decided "from 4 signals (BatchSize, InFlightRequests, KVUtilization, QueueDepth)", the adapter filled
BatchSize and InFlightRequests, the EndpointPickerConfig deployed inflight-load-producer and evolved.go carried an
``EffectiveLoad()`` nothing called, all for the four signals any weighted-scoring baseline might read, not for the
scorers this plugin computes.
"""

from __future__ import annotations

import pytest

from bot.golang.analysis_types import signals_read
from bot.golang.analyze import analyze
from bot.golang.generate import generate
from bot.golang.plugin_summary import what_it_does
from bot.golang.source import load_evolved_source
from bot.model import PolicyKind

from .conftest import FIXTURES, translate_path

BLEND = FIXTURES / "routing_regime_blend.go"
NOT_READ = ("BatchSize", "InFlightRequests", "EffectiveLoad", "InFlightLoad", "inflight-load-producer")


def _file(gen, suffix: str) -> str:
    return next(t for p, t in gen.files.items() if p.endswith(suffix))


@pytest.fixture(scope="module")
def blend(dictionary):
    src = load_evolved_source(BLEND)
    return src, analyze(src, dictionary)


def test_the_analysis_reads_queue_depth_and_kv_utilization_only(blend):
    _, an = blend
    assert an.uses_scorers and an.era == "head"
    assert an.signal_names == ["KVUtilization", "QueueDepth"]  # the copy's EffectiveLoad() is never called
    # BLIS's default scorers of its era read nothing more: precise-prefix-cache the prefix match, queue-depth
    # QueueDepth, kv-utilization KVUtilization
    assert signals_read(an, PolicyKind.ROUTING) == {"KVUtilization", "QueueDepth"}


def test_the_plugin_fills_declares_and_deploys_only_what_it_reads(blend, dictionary):
    src, an = blend
    gen = generate(src, an, dictionary, "evolved-regime-blend")
    assert gen.baseline_signals == []
    assert sorted(gen.snapshot_fields) == ["ID", "KVUtilization", "QueueDepth"]
    assert gen.producers == ["approx-prefix-cache-producer"]
    adapter, evolved = _file(gen, "/adapter.go"), _file(gen, "/evolved.go")
    main = _file(gen, "/evolved_regime_blend.go")
    assert "s.QueueDepth = int(m.WaitingQueueSize)" in adapter and "s.KVUtilization = " in adapter
    for text in (adapter, evolved, main, gen.epp_config):
        for name in NOT_READ:
            assert name not in text, (name, text[:200])
    assert "inFlightLoadProducerName" not in {p.name for p in gen.params}
    assert "PrefixCacheMatchInfoDataKey" in main  # Consumes() still declares the prefix match its scorers read


def test_a_scorer_that_reads_the_load_brings_its_signals_and_producer(blend, dictionary):
    """A gate-1 ``scorers:`` line naming load-balance (1/(1+EffectiveLoad)) makes the plugin carry it, so it
    reads, fills and deploys what that scorer reads, and EffectiveLoad() is emitted for it."""
    src, an = blend
    scorers = [("precise-prefix-cache", 1.0), ("load-balance", 1.0)]
    gen = generate(src, an, dictionary, "evolved-regime-blend", options={"scorers": scorers})
    assert gen.baseline_signals == ["BatchSize", "InFlightRequests"]
    assert gen.producers == ["approx-prefix-cache-producer", "inflight-load-producer"]
    assert "func (s routingSnapshot) EffectiveLoad() int" in _file(gen, "/evolved.go")
    assert "s.InFlightRequests = " in _file(gen, "/adapter.go")
    assert "scoreLoadBalance" in _file(gen, "/baseline.go")


def test_each_scorer_reads_its_own_signals():
    from bot.golang.analysis_types import scorer_signals

    assert scorer_signals([("precise-prefix-cache", 2), ("queue-depth", 1), ("kv-utilization", 1)], "head") == [
        "QueueDepth",
        "KVUtilization",
    ]
    # before BLIS #960 queue-depth ranked by EffectiveLoad(): queued + running + in flight
    assert scorer_signals([("queue-depth", 1)], "2026-02") == ["QueueDepth", "BatchSize", "InFlightRequests"]
    assert scorer_signals([("running-requests", 1), ("active-requests", 1)], "head") == [
        "BatchSize",
        "InFlightRequests",
    ]
    assert scorer_signals([("prefix-affinity", 1)], "head") == []


def test_the_summary_and_the_pr_name_only_the_signals_read(dictionary):
    _, _, tr = translate_path(BLEND, dictionary, "evolved-regime-blend")
    assert tr.summary.signals == ["KVUtilization", "QueueDepth"]
    assert tr.summary.epp_plugins == ["approx-prefix-cache-producer"]
    rows = [ln for ln in tr.report_markdown.splitlines() if ln.startswith("| `")]
    assert not [r for r in rows if r.startswith(("| `BatchSize`", "| `InFlightRequests`"))]
    assert "baseline scorer term" not in tr.report_markdown
    sentence = what_it_does(PolicyKind.ROUTING, "evolved-regime-blend", "", tr.summary.signals)
    assert "from 2 signals (KVUtilization, QueueDepth)" in sentence


def test_a_router_reading_only_scraped_gauges_is_held_to_the_floor_staleness_allows(dictionary):
    """With BatchSize and InFlightRequests gone the plugin reads only high-fidelity signals, but both are gauges
    llm-d scrapes: their staleness alone put this faithful translation at 97.5% (100% with it switched off), below
    a 99% floor meant for signals as fresh as BLIS's. The staleness is Track B's to decide, not gate 1's."""
    _, _, tr = translate_path(BLEND, dictionary, "evolved-regime-blend")
    f = tr.summary.fidelity
    assert f.floor == 0.95 and not f.all_high_fidelity and f.agreement_all_off == 1.0
    assert [c.mapping for c in f.causes] == ["metric-staleness"]
    assert not [x for x in tr.findings if x.check == "translate.fidelity-below-floor"]
    assert "(floor 95%, some signal below high fidelity or scraped)" in tr.report_markdown


def test_the_scorer_table_says_what_each_carried_scorer_function_reads():
    """SCORER_READS is what decides the adapter's fills and the producers: it must name what baseline.go reads."""
    import re

    from bot import PROJECT_ROOT
    from bot.golang.analysis_types import EFFECTIVE_LOAD_PARTS, SCORER_READS
    from bot.golang.plugin_shape import BASELINE_SCORERS

    assert set(SCORER_READS) == set(BASELINE_SCORERS)
    template = (PROJECT_ROOT / "bot" / "golang" / "templates" / "baseline.go.j2").read_text()
    for name in BASELINE_SCORERS:
        # the scorer's own function: the last block the template guards by its name (the first is its switch case)
        body = template.split(f'{{% if "{name}" in used %}}')[-1].split("{% endif %}")[0]
        assert "func score" in body, name
        fields = set(re.findall(r"\bs\.([A-Z]\w*)\b(?!\()", body.replace("{{ queue_expr }}", "s.QueueDepth"))) - {"ID"}
        if "s.EffectiveLoad()" in body:
            fields |= set(EFFECTIVE_LOAD_PARTS)
        assert fields == set(SCORER_READS[name]), name
