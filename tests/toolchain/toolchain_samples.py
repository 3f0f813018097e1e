"""Sample plugin sources for the toolchain tests, in the llm-d-router v0.10.0 shape."""

from __future__ import annotations

PKG = "pkg/epp/framework/plugins/scheduling/scorer/evolvedtoy"
IMPORT = '"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/scorer/evolvedtoy"'
REGISTER = "fwkplugin.Register(evolvedtoy.EvolvedToyScorerType, fwkplugin.StabilityAlpha, evolvedtoy.Factory)"

PLUGIN_GO = """\
// Package evolvedtoy is a tiny scorer in the llm-d-router v0.10.0 plugin shape.
package evolvedtoy

import (
	"context"
	"encoding/json"
	"fmt"

	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

// EvolvedToyScorerType is the plugin type name.
const EvolvedToyScorerType = "evolved-toy-scorer"

// Parameters are the plugin parameters.
type Parameters struct {
	QueueWeight float64 `json:"queueWeight"`
}

var _ scheduling.Scorer = &Scorer{}

// Scorer mixes queue depth and KV-cache utilization.
type Scorer struct {
	typedName   fwkplugin.TypedName
	queueWeight float64
}

// Factory builds the scorer from its parameters.
func Factory(name string, parameters *json.Decoder, _ fwkplugin.Handle) (fwkplugin.Plugin, error) {
	params := Parameters{QueueWeight: 0.5}
	if parameters != nil {
		if err := parameters.Decode(&params); err != nil {
			return nil, fmt.Errorf("failed to parse parameters of '%s': %w", EvolvedToyScorerType, err)
		}
	}
	if params.QueueWeight < 0 || params.QueueWeight > 1 {
		return nil, fmt.Errorf("'%s': queueWeight must be in [0,1], got %g", EvolvedToyScorerType, params.QueueWeight)
	}
	return New(params.QueueWeight).WithName(name), nil
}

// New returns a scorer.
func New(queueWeight float64) *Scorer {
	return &Scorer{typedName: fwkplugin.TypedName{Type: EvolvedToyScorerType}, queueWeight: queueWeight}
}

// WithName sets the instance name.
func (s *Scorer) WithName(name string) *Scorer {
	s.typedName.Name = name
	return s
}

// TypedName returns the type and name.
func (s *Scorer) TypedName() fwkplugin.TypedName { return s.typedName }

// Category is Distribution.
func (s *Scorer) Category() scheduling.ScorerCategory { return scheduling.Distribution }

// Score prefers short queues and free KV cache.
func (s *Scorer) Score(_ context.Context, _ *scheduling.InferenceRequest, endpoints []scheduling.Endpoint) map[scheduling.Endpoint]float64 {
	scores := make(map[scheduling.Endpoint]float64, len(endpoints))
	for _, ep := range endpoints {
		m := ep.GetMetrics()
		if m == nil {
			continue
		}
		queue := 1 / (1 + float64(m.WaitingQueueSize))
		scores[ep] = s.queueWeight*queue + (1-s.queueWeight)*(1-m.KVCacheUsagePercent)
	}
	return scores
}
"""

PLUGIN_TEST_GO = """\
package evolvedtoy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
	"github.com/llm-d/llm-d-router/test/utils"
)

func TestScore(t *testing.T) {
	podA := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-a"}}, &fwkdl.Metrics{WaitingQueueSize: 0, KVCacheUsagePercent: 0.5}, nil)
	podB := scheduling.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-b"}}, &fwkdl.Metrics{WaitingQueueSize: 3, KVCacheUsagePercent: 1}, nil)
	got := New(0.5).Score(utils.NewTestContext(t), nil, []scheduling.Endpoint{podA, podB})
	want := map[scheduling.Endpoint]float64{podA: 0.75, podB: 0.125}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unexpected output (-want +got): %v", diff)
	}
}

func TestFactory(t *testing.T) {
	tests := []struct {
		name      string
		params    string
		expectErr bool
	}{
		{name: "defaults", params: ""},
		{name: "valid", params: `{"queueWeight": 0.2}`},
		{name: "unknown field", params: `{"queueWieght": 0.2}`, expectErr: true},
		{name: "out of range", params: `{"queueWeight": 2}`, expectErr: true},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			handle := fwkplugin.NewEppHandle(utils.NewTestContext(t), nil)
			p, err := Factory("toy", fwkplugin.StrictDecoder(json.RawMessage(test.params)), handle)
			if test.expectErr != (err != nil) {
				t.Fatalf("expectErr=%v, got err %v", test.expectErr, err)
			}
			if err == nil && p.TypedName().String() != "toy/"+EvolvedToyScorerType {
				t.Errorf("TypedName = %s", p.TypedName())
			}
		})
	}
}
"""


def plugin_files(plugin: str = PLUGIN_GO, test: str = PLUGIN_TEST_GO) -> dict[str, str]:
    return {
        f"{PKG}/evolved_toy.go": plugin,
        f"{PKG}/evolved_toy_test.go": test,
        f"{PKG}/README.md": "# evolved-toy-scorer\n",
    }


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing needle (so tests never hard-code line numbers)."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)
