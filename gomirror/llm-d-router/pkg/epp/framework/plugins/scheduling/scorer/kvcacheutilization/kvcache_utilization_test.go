package kvcacheutilization

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
	"github.com/llm-d/llm-d-router/test/utils"
)

func TestKVCacheUtilizationScorer(t *testing.T) {
	podA := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-a"}}, &fwkdl.Metrics{KVCacheUsagePercent: 0.8}, nil)
	podB := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-b"}}, &fwkdl.Metrics{KVCacheUsagePercent: 0.1}, nil)
	podNoMetrics := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-c"}}, nil, nil)

	got := NewKVCacheUtilizationScorer().Score(utils.NewTestContext(t), nil, []scheduling.Endpoint{podA, podB, podNoMetrics})
	want := map[scheduling.Endpoint]float64{podA: 0.2, podB: 0.9}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Unexpected output (-want +got): %v", diff)
	}
}
