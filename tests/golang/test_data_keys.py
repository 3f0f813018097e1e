"""The plugin reads produced data under the producer names its parameters select, as upstream consumers do.

Found by a Go reviewer: in llm-d-router v0.10.0 a producer stores its data under
``DataKey.WithNonEmptyProducerName(name)``, so a prefix producer configured as ``name: my-prefix`` (or the
precise-prefix-cache-producer) stores its match where the default key never looks. The generated adapter read the
default keys only: a cold endpoint (0 of 32 blocks cached) and a warm one (32 of 32) scored the same, and the
in-flight count fell back to the scraped gauges. Upstream consumers take ``prefixMatchInfoProducerName`` /
``inFlightLoadProducerName`` and declare the key they read in ``Consumes()``; so does the plugin now.
"""

from __future__ import annotations

from .conftest import EXAMPLE, passes_with_test, translate_path

#: Go: the bundled example's scorer configured with named producers, fed data stored under those names.
_NAMED_PRODUCERS_TEST = """package {pkg}

import (
	"encoding/json"
	"testing"
	"time"

	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/datalayer/attribute/concurrency"
	attrprefix "github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/datalayer/attribute/prefix"
	"github.com/llm-d/llm-d-router/test/utils"
)

func TestNamedProducers(t *testing.T) {{
	raw := `{{"prefixMatchInfoProducerName": "my-prefix", "inFlightLoadProducerName": "my-load"}}`
	p, err := {factory}("s", plugin.StrictDecoder(json.RawMessage(raw)), utils.NewTestHandle(utils.NewTestContext(t)))
	if err != nil {{
		t.Fatal(err)
	}}
	s := p.(*{struct})
	prefixKey := attrprefix.PrefixCacheMatchInfoDataKey.WithNonEmptyProducerName("my-prefix")
	loadKey := concurrency.InFlightLoadDataKey.WithNonEmptyProducerName("my-load")
	deps := s.Consumes()
	if deps.Required[prefixKey] == nil || deps.Optional[loadKey] == nil {{
		t.Errorf("Consumes() must declare the keys of the named producers, got %+v", deps)
	}}
	endpoint := func(name string, match int) scheduling.Endpoint {{
		attrs := fwkdl.NewAttributes()
		attrs.Put(prefixKey.String(), attrprefix.NewPrefixCacheMatchInfo(match, 32, 16))
		attrs.Put(loadKey.String(), &concurrency.InFlightLoad{{Requests: 3}})
		m := &fwkdl.Metrics{{WaitingQueueSize: 1, RunningRequestsSize: 1, KVCacheUsagePercent: 0.3, UpdateTime: time.Unix(1_700_000_000, 0)}}
		return scheduling.NewEndpoint(&fwkdl.EndpointMetadata{{ID: k8stypes.NamespacedName{{Name: name}}}}, m, attrs)
	}}
	cold, warm := endpoint("cold", 0), endpoint("warm", 32)
	scores := s.Score(utils.NewTestContext(t), &scheduling.InferenceRequest{{RequestID: "r"}}, []scheduling.Endpoint{{cold, warm}})
	if !(scores[warm] > scores[cold]) {{
		t.Errorf("the endpoint holding the whole prefix (my-prefix's match) must score higher: %v", scores)
	}}
	state, _ := newRouterState([]scheduling.Endpoint{{cold}}, s.keys)
	if got := state.Snapshots[0].InFlightRequests; got != 3 {{
		t.Errorf("InFlightRequests = %d, want 3 (my-load's count, not the scraped fallback 2)", got)
	}}
}}
"""


def test_named_producers_are_read_and_declared_through_go(dictionary):
    _, _, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    main = next(t for p, t in tr.files.items() if p.endswith("/evolved_adaptive_scorer.go"))
    assert 'PrefixMatchInfoProducerName string `json:"prefixMatchInfoProducerName"`' in main
    assert 'InFlightLoadProducerName string `json:"inFlightLoadProducerName"`' in main
    passes_with_test(
        tr,
        "/evolved_adaptive_scorer.go",
        "named_producers_test.go",
        lambda pkg: _NAMED_PRODUCERS_TEST.format(
            pkg=pkg, factory="EvolvedAdaptiveScorerFactory", struct="EvolvedAdaptiveScorer"
        ),
    )


def test_only_the_data_a_plugin_reads_gets_a_producer_parameter(dictionary):
    """An admitter that reads no produced data, and a scheduling plugin (scraped waiting count only), get none."""
    from .conftest import CORPUS

    for name in ("a03_openevolve_tenant_fair_share.py", "s01_slo_aging_scheduler.go"):
        _, _, tr = translate_path(CORPUS / name, dictionary)
        code = "\n".join(t for p, t in tr.files.items() if p.endswith(".go"))
        assert "ProducerName" not in code and "dataKeys" not in code, name
