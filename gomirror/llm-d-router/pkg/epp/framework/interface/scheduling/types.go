/*
Copyright 2025 The Kubernetes Authors.
Copyright 2026 The llm-d Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// MIRROR of llm-d-router v0.10.0 (71f4f09) for offline compile/test; see gomirror/llm-d-router/README.md.

package scheduling

import (
	"context"
	"fmt"
	"reflect"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	fwkrh "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/requesthandling"
)

const nilString = "<nil>"

// RequestObjectives are the scheduling objectives of a request (from its InferenceObjective).
type RequestObjectives struct {
	// Priority: requests with Priority < 0 are sheddable.
	Priority int
}

// InferenceRequest is the parsed request the scheduler and request-control plugins see.
type InferenceRequest struct {
	// RequestID is the Envoy-generated request id.
	RequestID string
	// TargetModel is the model (or LoRA adapter) the request is routed for.
	TargetModel string
	// Body is the parsed request body (opaque in the mirror).
	Body *fwkrh.InferenceRequestBody
	// Headers are the request headers.
	Headers map[string]string
	// Objectives holds the request's priority.
	Objectives RequestObjectives
	// FairnessID identifies the flow for flow-control fairness.
	FairnessID string
	// RequestSizeBytes is the size of the request body in bytes.
	RequestSizeBytes int
	// SchedulingResult is set once scheduling has run.
	SchedulingResult *SchedulingResult
}

// String returns the identifying fields, for logs.
func (r *InferenceRequest) String() string {
	if r == nil {
		return nilString
	}
	return fmt.Sprintf("RequestID: %s, TargetModel: %s, Headers: %v", r.RequestID, r.TargetModel, r.Headers)
}

// Endpoint is a candidate model-server endpoint: metadata, a metrics snapshot and attributes.
// At v0.10.0 attributes are keyed by string (DataKey.String()).
type Endpoint interface {
	GetMetadata() *fwkdl.EndpointMetadata
	GetMetrics() *fwkdl.Metrics
	String() string
	Get(string) (fwkdl.Cloneable, bool)
	Put(string, fwkdl.Cloneable)
	Keys() []string
	Clone() fwkdl.AttributeMap
}

type endpoint struct {
	*fwkdl.EndpointMetadata
	*fwkdl.Metrics
	fwkdl.AttributeMap
}

func (ep *endpoint) String() string {
	if ep == nil {
		return nilString
	}
	return fmt.Sprintf("%+v", *ep)
}

func (ep *endpoint) GetMetadata() *fwkdl.EndpointMetadata { return ep.EndpointMetadata }

func (ep *endpoint) GetMetrics() *fwkdl.Metrics { return ep.Metrics }

func (ep *endpoint) Clone() fwkdl.AttributeMap { return ep.AttributeMap.Clone() }

// NewEndpoint builds an Endpoint from clones of its inputs; attr may be nil.
func NewEndpoint(meta *fwkdl.EndpointMetadata, metrics *fwkdl.Metrics, attr fwkdl.AttributeMap) Endpoint {
	if attr == nil {
		attr = fwkdl.NewAttributes()
	}
	return &endpoint{
		EndpointMetadata: meta.Clone(),
		Metrics:          metrics.Clone(),
		AttributeMap:     attr.Clone(),
	}
}

// EndpointComparer reports whether two endpoints built by NewEndpoint hold equal data
// (for cmp.Comparer in tests).
func EndpointComparer(a, b Endpoint) bool {
	aEp, aok := a.(*endpoint)
	bEp, bok := b.(*endpoint)
	if !aok || !bok {
		return a == b
	}
	if !reflect.DeepEqual(aEp.EndpointMetadata, bEp.EndpointMetadata) || !reflect.DeepEqual(aEp.Metrics, bEp.Metrics) {
		return false
	}
	aKeys, bKeys := aEp.Keys(), bEp.Keys()
	if len(aKeys) != len(bKeys) {
		return false
	}
	for _, k := range aKeys {
		v1, ok1 := aEp.Get(k)
		v2, ok2 := bEp.Get(k)
		if !ok1 || !ok2 || !reflect.DeepEqual(v1, v2) {
			return false
		}
	}
	return true
}

// ScoredEndpointComparer compares scored endpoints by score and endpoint data.
func ScoredEndpointComparer(a, b ScoredEndpoint) bool {
	return a.Score == b.Score && EndpointComparer(a.Endpoint, b.Endpoint)
}

// ScoredEndpoint is an endpoint with its weighted total score.
type ScoredEndpoint struct {
	Endpoint
	Score float64
}

// ProfileRunResult is the outcome of one scheduling profile.
type ProfileRunResult struct {
	TargetEndpoints []Endpoint
}

// SchedulingResult is the outcome of a scheduling cycle.
type SchedulingResult struct {
	ProfileResults     map[string]*ProfileRunResult
	PrimaryProfileName string
}

// SchedulerProfile runs filters, scorers and a picker over the candidates (no CycleState since v0.9, #1335).
type SchedulerProfile interface {
	Run(ctx context.Context, request *InferenceRequest, candidateEndpoints []Endpoint) (*ProfileRunResult, error)
}
