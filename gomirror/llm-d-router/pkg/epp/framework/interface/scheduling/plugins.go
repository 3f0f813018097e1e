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

	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
)

// ScorerCategory is the preference a scorer applies.
type ScorerCategory string

const (
	// Affinity scorers prefer endpoints with existing locality (kv-cache, session).
	Affinity ScorerCategory = "Affinity"
	// Distribution scorers spread requests evenly across endpoints.
	Distribution ScorerCategory = "Distribution"
	// Balance scorers sit between Affinity and Distribution.
	Balance ScorerCategory = "Balance"
)

// ProfileHandler picks the scheduling profiles to run and combines their results.
type ProfileHandler interface {
	plugin.Plugin
	Pick(ctx context.Context, request *InferenceRequest, profiles map[string]SchedulerProfile,
		profileResults map[string]*ProfileRunResult) map[string]SchedulerProfile
	ProcessResults(ctx context.Context, request *InferenceRequest,
		profileResults map[string]*ProfileRunResult) (*SchedulingResult, error)
}

// Filter removes candidate endpoints.
type Filter interface {
	plugin.Plugin
	Filter(ctx context.Context, request *InferenceRequest, pods []Endpoint) []Endpoint
}

// Scorer scores candidate endpoints in [0,1] (1 is best); the framework clamps
// values outside the range and sums score x weight over the profile's scorers.
type Scorer interface {
	plugin.Plugin
	Category() ScorerCategory
	Score(ctx context.Context, request *InferenceRequest, pods []Endpoint) map[Endpoint]float64
}

// Picker picks the final endpoint(s) from the scored candidates.
type Picker interface {
	plugin.Plugin
	Pick(ctx context.Context, scoredPods []*ScoredEndpoint) *ProfileRunResult
}
