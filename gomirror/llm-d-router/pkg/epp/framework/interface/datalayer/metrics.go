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

package datalayer

import (
	"fmt"
	"maps"
	"time"
)

// Metrics is the latest metrics snapshot scraped from a model server.
//
// Scales, as filled by the core-metrics-extractor for vLLM:
//   - WaitingQueueSize: requests waiting (vllm:num_requests_waiting)
//   - RunningRequestsSize: requests running (vllm:num_requests_running)
//   - KVCacheUsagePercent: a 0-1 fraction despite its name (vllm:kv_cache_usage_perc)
//   - ActiveModels / WaitingModels: LoRA adapter name -> count (vllm:lora_requests_info)
//   - CacheBlockSize / CacheNumBlocks: vllm:cache_config_info
type Metrics struct {
	// ActiveModels holds adapters with at least one running or queued request.
	ActiveModels map[string]int
	// WaitingModels holds adapters with queued requests.
	WaitingModels map[string]int
	// MaxActiveModels is the maximum number of adapters the server can load (max_lora).
	MaxActiveModels         int
	RunningRequestsSize     int
	WaitingQueueSize        int
	KVCacheUsagePercent     float64
	KvCacheMaxTokenCapacity int
	CacheBlockSize          int
	// CacheNumBlocks is the number of GPU blocks for the KV cache.
	CacheNumBlocks int

	// UpdateTime is when the metrics were last updated.
	UpdateTime time.Time
}

// NewMetrics returns empty Metrics with non-nil maps.
func NewMetrics() *Metrics {
	return &Metrics{
		ActiveModels:  make(map[string]int),
		WaitingModels: make(map[string]int),
	}
}

// String returns all fields, for logs.
func (m *Metrics) String() string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%+v", *m)
}

// Clone returns a deep copy, or nil for nil.
func (m *Metrics) Clone() *Metrics {
	if m == nil {
		return nil
	}
	activeModels := make(map[string]int, len(m.ActiveModels))
	maps.Copy(activeModels, m.ActiveModels)
	waitingModels := make(map[string]int, len(m.WaitingModels))
	maps.Copy(waitingModels, m.WaitingModels)
	return &Metrics{
		ActiveModels:            activeModels,
		WaitingModels:           waitingModels,
		MaxActiveModels:         m.MaxActiveModels,
		RunningRequestsSize:     m.RunningRequestsSize,
		WaitingQueueSize:        m.WaitingQueueSize,
		KVCacheUsagePercent:     m.KVCacheUsagePercent,
		KvCacheMaxTokenCapacity: m.KvCacheMaxTokenCapacity,
		CacheBlockSize:          m.CacheBlockSize,
		CacheNumBlocks:          m.CacheNumBlocks,
		UpdateTime:              m.UpdateTime,
	}
}
