package scheduling

import (
	"testing"

	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
)

type load struct{ requests int64 }

func (l *load) Clone() fwkdl.Cloneable { c := *l; return &c }

func TestNewEndpointClonesInputs(t *testing.T) {
	meta := &fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Namespace: "ns", Name: "pod-a"}, Labels: map[string]string{"role": "decode"}}
	metrics := &fwkdl.Metrics{WaitingQueueSize: 2, KVCacheUsagePercent: 0.5}
	attrs := fwkdl.NewAttributes()
	attrs.Put("load/producer", &load{requests: 3})

	ep := NewEndpoint(meta, metrics, attrs)
	meta.Labels["role"] = "prefill"
	metrics.WaitingQueueSize = 9

	if got := ep.GetMetadata().Labels["role"]; got != "decode" {
		t.Errorf("metadata not cloned: role = %q", got)
	}
	if got := ep.GetMetrics().WaitingQueueSize; got != 2 {
		t.Errorf("metrics not cloned: WaitingQueueSize = %d", got)
	}
	v, ok := ep.Get("load/producer")
	if !ok || v.(*load).requests != 3 {
		t.Errorf("attribute = %v, %v", v, ok)
	}
	if got := ep.GetMetadata().ID.String(); got != "ns/pod-a" {
		t.Errorf("ID.String() = %q", got)
	}
	if !EndpointComparer(ep, NewEndpoint(ep.GetMetadata(), ep.GetMetrics(), ep.Clone())) {
		t.Error("EndpointComparer: equal endpoints compare unequal")
	}
}
