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

// Package queuedepth is the queue-scorer: min-max normalised waiting-queue depth.
package queuedepth

import (
	"context"
	"encoding/json"
	"math"

	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	fwksched "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

const (
	// QueueScorerType is the registered plugin type.
	QueueScorerType = "queue-scorer"
)

// compile-time type assertion
var _ fwksched.Scorer = &QueueScorer{}

// QueueScorerFactory is the FactoryFunc of the queue-scorer (no parameters).
func QueueScorerFactory(name string, _ *json.Decoder, _ fwkplugin.Handle) (fwkplugin.Plugin, error) {
	return NewQueueScorer().WithName(name), nil
}

// NewQueueScorer returns a queue-scorer named after its type.
func NewQueueScorer() *QueueScorer {
	return &QueueScorer{
		typedName: fwkplugin.TypedName{Type: QueueScorerType, Name: QueueScorerType},
	}
}

// QueueScorer prefers endpoints with shorter waiting queues.
type QueueScorer struct {
	typedName fwkplugin.TypedName
}

// TypedName returns the type and name tuple of this plugin instance.
func (s *QueueScorer) TypedName() fwkplugin.TypedName {
	return s.typedName
}

// Category is Distribution: the scorer spreads load.
func (s *QueueScorer) Category() fwksched.ScorerCategory {
	return fwksched.Distribution
}

// WithName sets the instance name.
func (s *QueueScorer) WithName(name string) *QueueScorer {
	s.typedName.Name = name
	return s
}

// Score maps the shortest queue to 1 and the longest to 0; equal queues all
// score 1. Endpoints without metrics are left unscored.
func (s *QueueScorer) Score(_ context.Context, _ *fwksched.InferenceRequest, endpoints []fwksched.Endpoint) map[fwksched.Endpoint]float64 {
	queues := make(map[fwksched.Endpoint]int, len(endpoints))
	minQueue, maxQueue := math.MaxInt, math.MinInt
	for _, endpoint := range endpoints {
		m := endpoint.GetMetrics()
		if m == nil {
			continue
		}
		queues[endpoint] = m.WaitingQueueSize
		minQueue = min(minQueue, m.WaitingQueueSize)
		maxQueue = max(maxQueue, m.WaitingQueueSize)
	}
	scores := make(map[fwksched.Endpoint]float64, len(queues))
	for endpoint, q := range queues {
		if maxQueue == minQueue {
			scores[endpoint] = 1.0
			continue
		}
		scores[endpoint] = float64(maxQueue-q) / float64(maxQueue-minQueue)
	}
	return scores
}
