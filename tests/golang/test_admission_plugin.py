"""An admitter as llm-d-router v0.10.0 runs it (maint5 #1, #6): its config lets it own admission, the baseline arm
differs from it in the plugin alone, its texts say a rejection reaches clients as HTTP 500, name the in-tree
probabilistic-admitter, and say what it does with an endpoint the EPP has not scraped (checked on the compiled
plugin with the real Go toolchain)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from bot.bench.conditions import STALE_METRICS_INTERVAL
from bot.golang.admission_docs import DETECTOR, DETECTOR_PARAMETERS, baseline_config, upstream_alternative
from bot.golang.generate import package_name, struct_name
from bot.golang.plugin_summary import what_it_does
from bot.golang.toolchain import check_plugin
from bot.hypotheses.wording import plugin_phrase
from bot.model import PolicyKind
from bot.stages.implement_tests import BASELINE_EPP_CONFIG, baseline_epp_config

from .conftest import CORPUS, EXAMPLE, run_probe_test, translate_path

PLUGIN = "evolved-saturation-shedder"


@pytest.fixture(scope="module")
def a02(dictionary):
    return translate_path(CORPUS / "a02_gaie_saturation_shedder.go", dictionary, PLUGIN)[2]


def _file(tr, suffix: str) -> str:
    return next(t for p, t in tr.files.items() if p.endswith(suffix))


def test_the_admitter_config_keeps_llm_ds_built_in_shedding_out_of_reach(a02):
    """Upstream's probabilistic-admitter-epp-config.yaml: utilization-detector at effectively infinite thresholds,
    named by flowControl.saturationDetector, so the legacy admission controller does not shed first; and the EPP's
    own metrics staleness (2s), not the detector's 200ms (the test below)."""
    cfg = yaml.safe_load(a02.epp_config)
    detector = next(p for p in cfg["plugins"] if p["type"] == DETECTOR)
    assert detector["parameters"] == {
        "queueDepthThreshold": 999999999,
        "kvCacheUtilThreshold": 1.0,
        "metricsStalenessThreshold": "2s",
    }
    assert detector["parameters"] == DETECTOR_PARAMETERS
    assert cfg["flowControl"] == {"saturationDetector": {"pluginRef": "utilization-detector"}}
    assert "reaches the client as HTTP 500, not 429" in " ".join(a02.epp_config.split())


def test_the_admitter_config_says_when_llm_ds_built_in_shedding_still_fires(dictionary):
    """llm-d maintainer, on a03's config: does kvCacheUtilThreshold 1.0 really switch the built-in shedding off at a
    full cache? It does not. At llm-d-router v0.10.0 the utilization-detector's saturation is the mean over the
    candidate endpoints (1.0 with none) of max(WaitingQueueSize / queueDepthThreshold, KVCacheUsagePercent /
    kvCacheUtilThreshold), an endpoint with missing or stale metrics (metricsStalenessThreshold, 200ms by default)
    counting 1.0 (the config sets 2s); kvCacheUtilThreshold must lie in (0, 1] (a larger value is refused, not
    clamped); the legacy admission controller sheds priority < 0 at saturation >= 1.0. So a pool whose every cache is
    full sheds."""
    _, _, a03 = translate_path(CORPUS / "a03_openevolve_tenant_fair_share.py", dictionary, "evolved-tenant-fair")
    cfg = yaml.safe_load(a03.epp_config)
    detector = next(p for p in cfg["plugins"] if p["type"] == DETECTOR)
    assert detector["parameters"] == {
        "queueDepthThreshold": 999999999,
        "kvCacheUtilThreshold": 1.0,
        "metricsStalenessThreshold": "2s",
    }
    said = " ".join(ln.lstrip("# ") for ln in a03.epp_config.splitlines() if ln.startswith("#"))
    assert "raised out of reach" not in said
    assert (
        "mean over the candidate endpoints (1.0 with none) of max(WaitingQueueSize / queueDepthThreshold, "
        "KVCacheUsagePercent / kvCacheUtilThreshold), an endpoint whose metrics are missing or older than the "
        "detector's metricsStalenessThreshold (2s here) counting 1.0" in said
    )
    assert (
        "queueDepthThreshold 999999999 puts the queue term out of reach, but kvCacheUtilThreshold 1.0, the largest "
        "value v0.10.0 accepts (a larger one is refused at startup, not clamped), does not switch the KV cache term "
        "off: an endpoint whose KV cache is full (KVCacheUsagePercent 1.0) reads 1.0" in said
    )
    assert (
        "So the built-in admission still sheds priority < 0 before the plugin runs when every candidate endpoint has "
        "a full KV cache or no metrics scraped in the last 2s" in said
    )
    baseline = baseline_epp_config(PolicyKind.ADMISSION, a03.epp_config, "evolved-tenant-fair")
    said = " ".join(ln.lstrip("# ") for ln in baseline.splitlines() if ln.startswith("#"))
    assert "out of reach" not in said
    assert (
        "it still sheds when there is no candidate endpoint or every candidate endpoint has a full KV cache or "
        "no metrics scraped in the last 2s; short of that every request is admitted" in said
    )
    readme = " ".join(_file(a03, "README.md").split())
    assert "does not switch the KV cache term off" in readme.split("## Caveats", 1)[1]
    assert "kept out of reach" not in plugin_phrase(PolicyKind.ADMISSION, PLUGIN)[1]


def _go_seconds(duration: str) -> float:
    """A Go duration as the configs here write them (``200ms``, ``2s``), in seconds."""
    number, unit = re.fullmatch(r"([0-9.]+)(ms|s)", duration).groups()
    return float(number) / (1000 if unit == "ms" else 1)


def test_the_admitter_config_does_not_shed_on_a_scrape_lag_every_run_can_have(a02):
    """llm-d-router v0.10.0: the utilization-detector counts an endpoint whose metrics are older than its
    metricsStalenessThreshold (default 200ms, utilization/config.go:36) as saturation 1.0 (detector.go:142-148), the
    pool's saturation is their mean (detector.go:164), and the legacy admission controller sheds priority < 0 at
    saturation >= 1.0 (admission.go:74-75). So every pod's scrape lagging 200ms at once (the metric-staleness run's
    1s refresh interval most of the time, a GC pause, an overloaded EPP) shed what the plugin would have admitted:
    the benchmark measured llm-d's shedding, not the plugin. The config sets the EPP's own staleness (its
    --metrics-staleness-threshold default, server/options.go:142), twice the longest refresh interval a planned run
    uses, says why in one line beside it, and the baseline arm runs the same detector (the arms differ in the plugin
    alone)."""
    cfg = yaml.safe_load(a02.epp_config)
    detector = next(p for p in cfg["plugins"] if p["type"] == DETECTOR)
    assert detector["parameters"]["metricsStalenessThreshold"] == "2s"
    assert _go_seconds(detector["parameters"]["metricsStalenessThreshold"]) >= 2 * _go_seconds(STALE_METRICS_INTERVAL)
    lines = a02.epp_config.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("metricsStalenessThreshold:"))
    assert lines[at - 1] == (
        "    # not the default 200ms: a scrape lag shorter than 2s on every pod no longer sheds requests"
    )
    assert len(lines[at - 1]) <= 100
    said = " ".join(ln.lstrip("# ") for ln in a02.epp_config.splitlines() if ln.startswith("#"))
    assert "(default 200ms)" not in said
    assert "when every candidate endpoint has a full KV cache or no metrics scraped in the last 2s" in said
    baseline_text = baseline_epp_config(PolicyKind.ADMISSION, a02.epp_config, PLUGIN)
    baseline = yaml.safe_load(baseline_text)
    assert next(p for p in baseline["plugins"] if p["type"] == DETECTOR) == detector
    said = " ".join(ln.lstrip("# ") for ln in baseline_text.splitlines() if ln.startswith("#"))
    assert (
        "kvCacheUtilThreshold 1.0, the largest value llm-d-router v0.10.0 accepts, metricsStalenessThreshold 2s)"
        in said
    )
    assert "every candidate endpoint has a full KV cache or no metrics scraped in the last 2s" in said
    report = [ln for ln in a02.report_markdown.splitlines() if ln.startswith("- **llm-d's own shedding**: ")]
    assert report == [
        (
            "- **llm-d's own shedding**: the EndpointPickerConfig's utilization-detector (queueDepthThreshold "
            "999999999, kvCacheUtilThreshold 1.0, metricsStalenessThreshold 2s, in both arms) leaves llm-d's own "
            "shedding of priority < 0 (HTTP 429, before the plugin runs) to a pool whose every endpoint has a full KV "
            "cache or no metrics scraped in the last 2s."
        )
    ]


def test_the_baseline_arm_is_the_admitters_config_without_the_admitter(a02):
    evolved = yaml.safe_load(a02.epp_config)
    baseline_text = baseline_epp_config(PolicyKind.ADMISSION, a02.epp_config, PLUGIN)
    baseline = yaml.safe_load(baseline_text)
    assert baseline["flowControl"] == evolved["flowControl"]
    assert baseline["schedulingProfiles"] == evolved["schedulingProfiles"]
    assert baseline["plugins"] == [p for p in evolved["plugins"] if p["type"] != PLUGIN]
    assert {k for k in evolved if k != "plugins"} == {k for k in baseline if k != "plugins"}
    assert "the arms differ in the plugin alone" in " ".join(baseline_text.split())
    with pytest.raises(ValueError, match="lists the plugin type other"):
        baseline_config(a02.epp_config, "other")


def test_a_router_keeps_llm_ds_default_baseline_and_no_detector(dictionary):
    _, _, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    assert "flowControl" not in yaml.safe_load(tr.epp_config)
    assert baseline_epp_config(PolicyKind.ROUTING, tr.epp_config, "evolved-adaptive-scorer") == BASELINE_EPP_CONFIG


def test_the_texts_say_a_rejection_is_a_500_and_name_the_in_tree_admitter(a02):
    main = " ".join(line.strip(" /") for line in _file(a02, "evolved_saturation_shedder.go").splitlines())
    assert "the client gets HTTP 500, not 429" in main and "errcommon.Internal" in main
    readme = " ".join(_file(a02, "README.md").split())
    assert "A rejection reaches the client as HTTP 500, not 429" in readme
    assert "Nearest upstream alternative: llm-d-router v0.10.0's in-tree `probabilistic-admitter`" in readme
    assert "with the same thresholds" in readme
    assert "(fail open). Upstream fails closed" in readme
    assert "HTTP 500" in " ".join(a02.report_markdown.split())
    pr = what_it_does(PolicyKind.ADMISSION, PLUGIN, "t", a02.summary.signals, a02.summary.thresholds)
    assert "HTTP 500, not 429" in pr and "`probabilistic-admitter`" in pr
    # ghuser3 finding 8: the gauges are named where "the same" would have had no antecedent (the plugin was just
    # said to read many signals), and the fail-open on unscraped endpoints is stated beside upstream's fail-closed
    assert "reads the same two gauges" not in pr
    assert (
        "which reads two of the gauges this plugin reads, llm-d's WaitingQueueSize and KVCacheUsagePercent "
        "(QueueDepth and KVUtilization here), with the same thresholds: its saturation is the mean over endpoints of "
        "max(WaitingQueueSize / 5, KVCacheUsagePercent / 0.8)" in pr
    )
    assert "so it fails open (with none scraped it decides on an empty pool), where upstream fails closed" in pr
    assert "every request admitted" not in plugin_phrase(PolicyKind.ADMISSION, PLUGIN)[1]


def test_the_alternative_is_named_only_for_an_admitter_reading_the_same_gauges():
    assert upstream_alternative(["QueueDepth", "SLOClass"]) == ""
    other = upstream_alternative(["KVUtilization", "QueueDepth"], {"qd": 8.0, "kv": 0.9, "scorers": ["x"]})
    assert "probabilistic-admitter" in other and "same thresholds" not in other


UNSCRAPED_PROBE = """package {package}

import (
\t"testing"

\terrcommon "github.com/llm-d/llm-d-router/pkg/common/error"
\tfwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
\t"github.com/llm-d/llm-d-router/test/utils"
\tk8stypes "k8s.io/apimachinery/pkg/types"
)

func probeEndpoint(name string, m *fwkdl.Metrics) scheduling.Endpoint {{
\treturn scheduling.NewEndpoint(&fwkdl.EndpointMetadata{{ID: k8stypes.NamespacedName{{Name: name}}}}, m, nil)
}}

func TestProbeUnscraped(t *testing.T) {{
\ta := New{struct}(DefaultParameters())
\treq := &scheduling.InferenceRequest{{RequestID: "r-1", Objectives: scheduling.RequestObjectives{{Priority: -1}}}}
\tunscraped := []scheduling.Endpoint{{
\t\tprobeEndpoint("no-metrics", nil),
\t\tprobeEndpoint("never-updated", &fwkdl.Metrics{{WaitingQueueSize: 50, KVCacheUsagePercent: 1}}),
\t}}
\tif err := a.Admit(utils.NewTestContext(t), req, unscraped); err != nil {{
\t\tt.Fatalf("no endpoint scraped: got %v, want the request admitted (fail open, as the README says)", err)
\t}}
\tsaturated := probeEndpoint("saturated", &fwkdl.Metrics{{WaitingQueueSize: 50, UpdateTime: time.Unix(1_700_000_000, 0)}})
\terr := a.Admit(utils.NewTestContext(t), req, append(unscraped, saturated))
\tif err == nil || errcommon.CanonicalCode(err) != errcommon.ResourceExhausted {{
\t\tt.Fatalf("a saturated scraped endpoint beside unscraped ones: got %v, want a ResourceExhausted rejection", err)
\t}}
\tt.Log("PROBE fail-open ok")
}}
"""


def test_an_unscraped_pool_is_admitted_by_the_compiled_plugin_as_its_docs_say(a02, tmp_path):
    """The adapter leaves an endpoint the EPP has not scraped out (fail open, stated beside upstream's fail-closed
    choice): with none scraped a sheddable request is admitted, and the scraped endpoints alone decide."""
    probe = UNSCRAPED_PROBE.format(package=package_name(PLUGIN), struct=struct_name(PLUGIN)).replace(
        '\t"testing"\n', '\t"testing"\n\t"time"\n'
    )
    out = run_probe_test(a02, tmp_path, "probe_unscraped_test.go", probe, "TestProbeUnscraped")
    assert "PROBE fail-open ok" in out


def test_a02s_batch_only_coefficient_is_a_commented_constant_not_a_parameter_and_its_divisors_name_signals(a02):
    """maint5 item 7: `pCoeff` multiplies p only for SLOClass "batch", which the adapter never produces, yet the
    config offered it as tunable and the README said nothing; then (upstream2 #4) it was a public knob documented
    as "no effect here", which upstream would not take. It is an unexported constant of evolved.go with the reason
    beside it; the report and a gate-1 finding still account for it. qdThreshold and kvThreshold, the divisors of
    WaitingQueueSize and KVCacheUsagePercent, had an empty Signals column and "no llm-d input sets its subject"."""
    config = a02.epp_config
    assert "pCoeff" not in config and "no effect here" not in config
    main = _file(a02, "evolved_saturation_shedder.go")
    assert "PCoeff" not in main and "pCoeff" not in main and "No effect in llm-d" not in main
    assert "A number that cannot act in llm-d (it acts only for an SLO class llm-d never sends this\n// plugin" in main
    assert "pCoeff" not in _file(a02, "README.md") and "pCoeff" not in _file(a02, "_test.go")
    evolved = _file(a02, "evolved.go")
    assert (
        '\t// pCoeff acts only for SLO class "batch", which llm-d never sends this plugin.\n\tpCoeff float64 = 1.25\n'
    ) in evolved
    assert "p = math.Min(1, pCoeff*p)" in evolved
    assert "| (constant `pCoeff`) | `1.25` | coefficient | 62 |" in a02.report_markdown
    finding = next(f for f in a02.findings if f.check == "translate.untested-parameter" and "pCoeff" in f.message)
    assert "`pCoeff` (the evolved 1.25, the constant `pCoeff` in evolved.go, not a parameter)" in finding.message
    assert "pCoeff" not in a02.summary.thresholds
    assert a02.summary.fidelity.agreement == 0.85  # the harness compares the same states with the same value
    report = a02.report_markdown
    assert "| `qdThreshold` | `5` | field | 29 | QueueDepth |" in report
    assert "| `kvThreshold` | `0.8` | field | 29 | KVUtilization |" in report
    assert "no llm-d input sets its subject" not in report
    assert "qdThreshold is live" in report and "kvThreshold is live" in report


def test_an_admitters_router_state_returns_no_endpoints_admit_would_discard(a02):
    """upstream2 #8: newRouterState "returns those endpoints", but Admit threw them away (`state, _ :=`); a router
    uses them (it scores the routable endpoints), an admitter gets the state alone. The package's own test and the
    harness call it the same way (the probe test above compiles the package with its test)."""
    adapter, main = _file(a02, "adapter.go"), _file(a02, "evolved_saturation_shedder.go")
    assert ") *routerState {" in adapter and "routable :=" not in adapter and "returns those endpoints" not in adapter
    assert "state := newRouterState(endpoints)" in main and "state, _ :=" not in main  # its snapshots read no request
    assert "state := newRouterState([]scheduling.Endpoint{" in _file(a02, "_test.go")
    assert a02.summary.fidelity.measured  # the harness built and ran it


def test_a_stateless_admitter_gets_no_clock_no_warm_ups_and_no_contract_test_that_cannot_fail(a02, dictionary):
    """maint5 item 8: a02 keeps no state and reads no time, yet its plugin called a `now` clock on every Admit for
    an ignored argument, its tests replayed (always nil) warm-ups at a spacing, and TestAdmitContract accepted
    either outcome of Admit(nil, nil). A stateful admitter that reads the clock keeps all of it."""
    main = _file(a02, "evolved_saturation_shedder.go")
    test = _file(a02, "_test.go")
    assert "now func() int64" not in main and "a.now()" not in main
    assert main.count("time.Now()") == 1 and "func (f *failureLog) failed(" in main  # on a failure only
    assert "newRouterState(endpoints)" in main
    assert "warmups" not in test and "spacing" not in test and "a.now" not in test
    assert (
        "\tt *testing.T, params Parameters, endpoints []scheduling.Endpoint, request *scheduling.InferenceRequest,\n) bool {"
        in test
    )
    assert "TestAdmitContract" not in test
    _, _, a01 = translate_path(CORPUS / "a01_pattern_c_adaptive_admission.go", dictionary)
    stateful_main = next(t for p, t in a01.files.items() if p.endswith(".go") and "now func() int64" in t)
    assert "now := a.now()" in stateful_main
    stateful_test = next(t for p, t in a01.files.items() if p.endswith("_test.go"))
    assert "\twarmups []*scheduling.InferenceRequest,\n\tspacing int64,\n\trequest " in stateful_test


# A per-tenant rate limit (newprog p2, shortened): the tenant's requests past perTenantRPS in a window are rejected.
TENANT_RATE_LIMIT = """package sim

import "fmt"

type tenantWindow struct {
	start int64
	count int
}

type TenantRateLimit struct {
	windowUs     int64
	perTenantRPS float64
	windows      map[string]*tenantWindow
}

func NewTenantRateLimit() *TenantRateLimit {
	return &TenantRateLimit{windowUs: 1_000_000, perTenantRPS: 25, windows: map[string]*tenantWindow{}}
}

func (a *TenantRateLimit) Admit(req *Request, state *RouterState) (bool, string) {
	// EVOLVE-BLOCK-START
	if req.SLOClass == "critical" {
		return true, ""
	}
	w, ok := a.windows[req.TenantID]
	if !ok || state.Clock-w.start >= a.windowUs {
		w = &tenantWindow{start: state.Clock}
		a.windows[req.TenantID] = w
	}
	limit := a.perTenantRPS * float64(a.windowUs) / 1e6
	if float64(w.count) >= limit {
		return false, fmt.Sprintf("tenant %s over rate limit", req.TenantID)
	}
	w.count++
	return true, ""
	// EVOLVE-BLOCK-END
}
"""
_ROW = re.compile(r"\{\s*name:\s+(\"(?:[^\"\\]|\\.)*\"),(.*?)\n\t\t\},", re.S)


def _behaviour_rows(test: str) -> list[dict]:
    """TestBehaviour's rows: name, and each other field's Go text (a field broken over lines, on one)."""
    table = test.split("func TestBehaviour", 1)[1].split("for _, tc := range tests", 1)[0]
    rows = []
    for name, body in _ROW.findall(table):
        parts = re.split(r"^\t\t\t(\w+):", body, flags=re.M)[1:]
        fields = {k: " ".join(v.split()).removesuffix(",") for k, v in zip(parts[::2], parts[1::2], strict=True)}
        rows.append({"name": json.loads(name), **fields})
    return rows


def test_a_tenant_past_its_rate_is_rejected_where_its_request_alone_is_admitted(dictionary, tmp_path):
    """A rate limit's generated TestBehaviour held six "admit" rows on a fresh plugin and sequences whose requests
    came 0.2 s apart (never past 25 a second): a regression in the limit passed. The probes now also send a burst
    from the request's own tenant just before it: a row states that the compiled plugin rejects the request after
    the burst, beside one where the same request alone is admitted, and the generated test passes."""
    path = tmp_path / "p2_tenant_rate_limit.go"
    path.write_text(TENANT_RATE_LIMIT, encoding="utf-8")
    _, _, tr = translate_path(path, dictionary, "evolved-tenant-rate-limit")
    rows = _behaviour_rows(_file(tr, "_test.go"))
    alone = {(r["endpoints"], r["request"]) for r in rows if "warmups" not in r and r["want"] == '"admit"'}
    burst = [
        r
        for r in rows
        if r["want"] == '"reject"'
        and "warmups" in r
        and (tenant := re.search(r'FairnessID: "([^"]+)"', r["request"]))
        and set(re.findall(r'FairnessID: "([^"]+)"', r["warmups"])) == {tenant.group(1)}
        and (r["endpoints"], r["request"]) in alone
    ]
    assert burst, [r["name"] for r in rows]
    assert "is rejected" in burst[0]["name"] and burst[0]["name"].startswith("a tenant past its rate"), burst[0]
    report = check_plugin(tr.files)
    assert report.build_ok and report.vet_ok and report.test_ok, report.output[-3000:]
