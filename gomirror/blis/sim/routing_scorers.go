package sim

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ScorerConfig is one weighted-scoring term: a scorer name and its (unnormalised) weight.
type ScorerConfig struct {
	Name   string  `yaml:"name"`
	Weight float64 `yaml:"weight"`
}

// scorerFunc scores every instance for one request, nominally in [0,1] (WeightedScoring clamps).
type scorerFunc func(req *Request, snapshots []RoutingSnapshot) map[string]float64

// observerFunc is told where a request went, so stateful scorers can update their index.
type observerFunc func(req *Request, targetInstance string)

// cacheQueryFn maps an instance ID to a function counting the request's consecutive cached blocks.
type cacheQueryFn map[string]func([]TokenID) int

// scorerFactory builds one named scorer (and its observer, for stateful scorers).
type scorerFactory func(blockSize int, cacheFn cacheQueryFn) (scorerFunc, observerFunc)

// scorerFactories holds every scorer the mirror implements; files register themselves in init.
var scorerFactories = map[string]scorerFactory{
	"queue-depth":      stateless(scoreQueueDepth),
	"kv-utilization":   stateless(scoreKVUtilization),
	"load-balance":     stateless(scoreLoadBalance),
	"active-requests":  stateless(scoreActiveRequests),
	"running-requests": stateless(scoreRunningRequests),
	"load-aware":       stateless(scoreLoadAware),
	"vllm-dp":          stateless(scoreVLLMDP),
}

func stateless(fn scorerFunc) scorerFactory {
	return func(int, cacheQueryFn) (scorerFunc, observerFunc) { return fn, nil }
}

// IsValidScorer reports whether name is a scorer the mirror implements.
func IsValidScorer(name string) bool {
	_, ok := scorerFactories[name]
	return ok
}

// ValidScorerNames returns the implemented scorer names, sorted.
func ValidScorerNames() []string {
	names := make([]string, 0, len(scorerFactories))
	for n := range scorerFactories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefaultScorerConfigs is BLIS's default weighted profile since #959 (2026-04-07); before it the
// default was prefix-affinity:3, queue-depth:2, kv-utilization:2.
func DefaultScorerConfigs() []ScorerConfig {
	return []ScorerConfig{
		{Name: "precise-prefix-cache", Weight: 2},
		{Name: "queue-depth", Weight: 1},
		{Name: "kv-utilization", Weight: 1},
	}
}

// ParseScorerConfigs parses "name:weight,name:weight"; it rejects unknown names, duplicates and
// weights that are not finite and positive. The empty string means nil.
func ParseScorerConfigs(s string) ([]ScorerConfig, error) {
	if s == "" {
		return nil, nil
	}
	var configs []ScorerConfig
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, weightText, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("invalid scorer config %q (expected name:weight)", strings.TrimSpace(part))
		}
		name = strings.TrimSpace(name)
		if !IsValidScorer(name) {
			return nil, fmt.Errorf("unknown scorer %q; valid: %s", name, strings.Join(ValidScorerNames(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("duplicate scorer %q", name)
		}
		seen[name] = true
		w, err := strconv.ParseFloat(strings.TrimSpace(weightText), 64)
		if err != nil {
			return nil, fmt.Errorf("invalid weight for scorer %q: %w", name, err)
		}
		if w <= 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("scorer %q weight must be a finite positive number, got %v", name, w)
		}
		configs = append(configs, ScorerConfig{Name: name, Weight: w})
	}
	return configs, nil
}

// normalizeScorerWeights divides every weight by their sum; a non-positive sum panics.
func normalizeScorerWeights(configs []ScorerConfig) []float64 {
	total := 0.0
	for _, c := range configs {
		total += c.Weight
	}
	if total <= 0 {
		panic(fmt.Sprintf("scorer weights sum to %f; must be positive", total))
	}
	weights := make([]float64, len(configs))
	for i, c := range configs {
		weights[i] = c.Weight / total
	}
	return weights
}

// queueDepthReadsEffectiveLoad is true for copies evolved before #960 (2026-04-08), when the
// queue-depth scorer ranked instances by EffectiveLoad instead of QueueDepth.
var queueDepthReadsEffectiveLoad = false

// invertedMinMax scores the lowest value 1 and the highest 0; all equal scores 1 everywhere.
func invertedMinMax(snapshots []RoutingSnapshot, value func(RoutingSnapshot) int) map[string]float64 {
	scores := make(map[string]float64, len(snapshots))
	lo, hi := math.MaxInt, math.MinInt
	for _, s := range snapshots {
		lo, hi = min(lo, value(s)), max(hi, value(s))
	}
	for _, s := range snapshots {
		if hi == lo {
			scores[s.ID] = 1
			continue
		}
		scores[s.ID] = float64(hi-value(s)) / float64(hi-lo)
	}
	return scores
}

// scoreQueueDepth is the inverted min-max of QueueDepth (EffectiveLoad before #960).
func scoreQueueDepth(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	if queueDepthReadsEffectiveLoad {
		return invertedMinMax(snapshots, func(s RoutingSnapshot) int { return s.EffectiveLoad() })
	}
	return invertedMinMax(snapshots, func(s RoutingSnapshot) int { return s.QueueDepth })
}

// scoreKVUtilization is 1 - KVUtilization.
func scoreKVUtilization(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	scores := make(map[string]float64, len(snapshots))
	for _, s := range snapshots {
		scores[s.ID] = 1 - s.KVUtilization
	}
	return scores
}

// scoreLoadBalance is 1 / (1 + EffectiveLoad).
func scoreLoadBalance(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	scores := make(map[string]float64, len(snapshots))
	for _, s := range snapshots {
		scores[s.ID] = 1 / (1 + float64(s.EffectiveLoad()))
	}
	return scores
}

// scoreActiveRequests is (max - n) / max over InFlightRequests; zero requests or a zero maximum score
// 1, and all equal and non-zero score 0.
func scoreActiveRequests(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	scores := make(map[string]float64, len(snapshots))
	maxCount := 0
	for _, s := range snapshots {
		maxCount = max(maxCount, s.InFlightRequests)
	}
	for _, s := range snapshots {
		if s.InFlightRequests == 0 || maxCount == 0 {
			scores[s.ID] = 1
			continue
		}
		scores[s.ID] = float64(maxCount-s.InFlightRequests) / float64(maxCount)
	}
	return scores
}

// scoreRunningRequests is the inverted min-max of BatchSize: the lowest batch scores 1.
func scoreRunningRequests(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	return invertedMinMax(snapshots, func(s RoutingSnapshot) int { return s.BatchSize })
}

// loadAwareQueueThreshold is the queue depth at which load-aware scores 0 (llm-d's default).
const loadAwareQueueThreshold = 128

// scoreLoadAware is 0.5 for an empty queue, else 0.5 * (1 - min(q, 128) / 128).
func scoreLoadAware(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	scores := make(map[string]float64, len(snapshots))
	for _, s := range snapshots {
		if s.QueueDepth == 0 {
			scores[s.ID] = 0.5
			continue
		}
		q := min(s.QueueDepth, loadAwareQueueThreshold)
		scores[s.ID] = 0.5 * (1 - float64(q)/float64(loadAwareQueueThreshold))
	}
	return scores
}

// scoreVLLMDP is the inverted min-max of 4 * QueueDepth + BatchSize (vLLM's data-parallel balancer).
func scoreVLLMDP(_ *Request, snapshots []RoutingSnapshot) map[string]float64 {
	return invertedMinMax(snapshots, func(s RoutingSnapshot) int { return 4*s.QueueDepth + s.BatchSize })
}
