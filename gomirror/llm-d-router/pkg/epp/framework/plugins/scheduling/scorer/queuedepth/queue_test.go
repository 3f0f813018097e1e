package queuedepth_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/scorer/queuedepth"
	"github.com/llm-d/llm-d-router/test/utils"
)

func TestQueueScorer(t *testing.T) {
	podA := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-a"}}, &fwkdl.Metrics{WaitingQueueSize: 2}, nil)
	podB := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-b"}}, &fwkdl.Metrics{WaitingQueueSize: 10}, nil)
	podC := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-c"}}, &fwkdl.Metrics{WaitingQueueSize: 6}, nil)

	tests := []struct {
		name       string
		input      []scheduling.Endpoint
		wantScores map[scheduling.Endpoint]float64
	}{
		{
			name:       "min-max normalised",
			input:      []scheduling.Endpoint{podA, podB, podC},
			wantScores: map[scheduling.Endpoint]float64{podA: 1, podB: 0, podC: 0.5},
		},
		{
			name:       "equal queues score 1",
			input:      []scheduling.Endpoint{podB},
			wantScores: map[scheduling.Endpoint]float64{podB: 1},
		},
	}

	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			got := queuedepth.NewQueueScorer().Score(utils.NewTestContext(t), nil, test.input)
			if diff := cmp.Diff(test.wantScores, got); diff != "" {
				t.Errorf("Unexpected output (-want +got): %v", diff)
			}
		})
	}
}

func TestQueueScorerFactory(t *testing.T) {
	p, err := queuedepth.QueueScorerFactory("my-queue", fwkplugin.StrictDecoder(nil), fwkplugin.NewEppHandle(utils.NewTestContext(t), nil))
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	want := fwkplugin.TypedName{Type: queuedepth.QueueScorerType, Name: "my-queue"}
	if diff := cmp.Diff(want, p.TypedName()); diff != "" {
		t.Errorf("Unexpected output (-want +got): %v", diff)
	}
	if got := p.TypedName().String(); got != "my-queue/queue-scorer" {
		t.Errorf("TypedName().String() = %q, want %q", got, "my-queue/queue-scorer")
	}
	if _, ok := p.(scheduling.Scorer); !ok {
		t.Errorf("%T is not a scheduling.Scorer", p)
	}
}
