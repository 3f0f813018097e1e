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

// Package kvcacheutilization is the kv-cache-utilization-scorer: 1 - KVCacheUsagePercent.
package kvcacheutilization

import (
	"context"
	"encoding/json"

	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	fwksched "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

const (
	// KvCacheUtilizationScorerType is the registered plugin type.
	KvCacheUtilizationScorerType = "kv-cache-utilization-scorer"
)

// compile-time type assertion
var _ fwksched.Scorer = &KVCacheUtilizationScorer{}

// KvCacheUtilizationScorerFactory is the FactoryFunc of the scorer (no parameters).
func KvCacheUtilizationScorerFactory(name string, _ *json.Decoder, _ fwkplugin.Handle) (fwkplugin.Plugin, error) {
	return NewKVCacheUtilizationScorer().WithName(name), nil
}

// NewKVCacheUtilizationScorer returns a scorer named after its type.
func NewKVCacheUtilizationScorer() *KVCacheUtilizationScorer {
	return &KVCacheUtilizationScorer{
		typedName: fwkplugin.TypedName{Type: KvCacheUtilizationScorerType, Name: KvCacheUtilizationScorerType},
	}
}

// KVCacheUtilizationScorer prefers endpoints with free KV cache.
type KVCacheUtilizationScorer struct {
	typedName fwkplugin.TypedName
}

// TypedName returns the type and name tuple of this plugin instance.
func (s *KVCacheUtilizationScorer) TypedName() fwkplugin.TypedName {
	return s.typedName
}

// Category is Distribution: the scorer spreads load.
func (s *KVCacheUtilizationScorer) Category() fwksched.ScorerCategory {
	return fwksched.Distribution
}

// WithName sets the instance name.
func (s *KVCacheUtilizationScorer) WithName(name string) *KVCacheUtilizationScorer {
	s.typedName.Name = name
	return s
}

// Score is 1 - KVCacheUsagePercent (a 0-1 fraction). Endpoints without metrics are left unscored.
func (s *KVCacheUtilizationScorer) Score(_ context.Context, _ *fwksched.InferenceRequest, endpoints []fwksched.Endpoint) map[fwksched.Endpoint]float64 {
	scores := make(map[fwksched.Endpoint]float64, len(endpoints))
	for _, endpoint := range endpoints {
		m := endpoint.GetMetrics()
		if m == nil {
			continue
		}
		scores[endpoint] = 1 - m.KVCacheUsagePercent
	}
	return scores
}
