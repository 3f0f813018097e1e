package sim

import (
	"math/rand"
	"testing"
)

func snaps(values ...RoutingSnapshot) []RoutingSnapshot { return values }

func TestScorerEdgeCases(t *testing.T) {
	equal := snaps(RoutingSnapshot{ID: "a", QueueDepth: 3}, RoutingSnapshot{ID: "b", QueueDepth: 3})
	mixed := snaps(
		RoutingSnapshot{ID: "a", QueueDepth: 1, BatchSize: 4, InFlightRequests: 6, KVUtilization: 0.25},
		RoutingSnapshot{ID: "b", QueueDepth: 5, BatchSize: 2, InFlightRequests: 0, KVUtilization: 0.5},
	)
	tests := []struct {
		name  string
		score scorerFunc
		in    []RoutingSnapshot
		want  map[string]float64
	}{
		{"queue-depth: all equal scores 1", scoreQueueDepth, equal, map[string]float64{"a": 1, "b": 1}},
		{"queue-depth: inverted min-max", scoreQueueDepth, mixed, map[string]float64{"a": 1, "b": 0}},
		{"kv-utilization: 1 - KVU", scoreKVUtilization, mixed, map[string]float64{"a": 0.75, "b": 0.5}},
		{"load-balance: 1/(1+EffectiveLoad)", scoreLoadBalance, mixed, map[string]float64{"a": 1.0 / 12, "b": 1.0 / 8}},
		{"active-requests: zero in flight scores 1", scoreActiveRequests, mixed, map[string]float64{"a": 0, "b": 1}},
		{"active-requests: all equal and non-zero scores 0", scoreActiveRequests,
			snaps(RoutingSnapshot{ID: "a", InFlightRequests: 2}, RoutingSnapshot{ID: "b", InFlightRequests: 2}),
			map[string]float64{"a": 0, "b": 0}},
		{"running-requests: the lowest batch scores 1", scoreRunningRequests, mixed, map[string]float64{"a": 0, "b": 1}},
		{"load-aware: empty queue scores 0.5", scoreLoadAware,
			snaps(RoutingSnapshot{ID: "a"}, RoutingSnapshot{ID: "b", QueueDepth: 64}),
			map[string]float64{"a": 0.5, "b": 0.25}},
		{"vllm-dp: 4q + b", scoreVLLMDP, mixed, map[string]float64{"a": 1, "b": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.score(nil, tc.in)
			for id, want := range tc.want {
				if got[id] != want {
					t.Errorf("score[%s] = %v, want %v", id, got[id], want)
				}
			}
		})
	}
}

func TestQueueDepthBeforeNumber960ReadsEffectiveLoad(t *testing.T) {
	queueDepthReadsEffectiveLoad = true
	defer func() { queueDepthReadsEffectiveLoad = false }()
	got := scoreQueueDepth(nil, snaps(RoutingSnapshot{ID: "a", QueueDepth: 1, BatchSize: 9}, RoutingSnapshot{ID: "b", QueueDepth: 5}))
	if got["a"] != 0 || got["b"] != 1 {
		t.Errorf("pre-#960 queue-depth = %v, want a=0 b=1 (EffectiveLoad 10 vs 5)", got)
	}
}

func TestEffectiveLoadCountsQueuedAndRunningTwice(t *testing.T) {
	s := RoutingSnapshot{QueueDepth: 2, BatchSize: 3, InFlightRequests: 2 + 3 + 1}
	if got := s.EffectiveLoad(); got != 11 {
		t.Errorf("EffectiveLoad = %d, want 11", got)
	}
}

func TestPrefixScorers(t *testing.T) {
	idx := NewPrefixCacheIndex(4, defaultLRUCapacity)
	tokens := []TokenID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	idx.RecordBlocks(idx.ComputeBlockHashes(tokens[:8]), "a")
	scorer, _ := newPrefixAffinityScorerWithIndex(idx)
	both := snaps(RoutingSnapshot{ID: "a"}, RoutingSnapshot{ID: "b"})
	got := scorer(&Request{InputTokens: tokens}, both)
	if got["a"] != 2.0/3 || got["b"] != 0 {
		t.Errorf("prefix-affinity = %v, want a=2/3 b=0", got)
	}
	if short := scorer(&Request{InputTokens: tokens[:3]}, both); short["a"] != 0 {
		t.Errorf("a prompt shorter than one block must score 0, got %v", short)
	}
	precise, _ := newPrecisePrefixCacheScorer(cacheQueryFn{})
	if none := precise(&Request{InputTokens: tokens}, both); none["a"] != 1 || none["b"] != 1 {
		t.Errorf("precise-prefix-cache with no hit anywhere = %v, want 1 everywhere", none)
	}
}

func TestWeightedScoringArgmax(t *testing.T) {
	ws := &WeightedScoring{scorers: []scorerFunc{scoreQueueDepth}, weights: []float64{1}}
	tied := snaps(RoutingSnapshot{ID: "a"}, RoutingSnapshot{ID: "b"})
	if d := ws.Route(&Request{}, &RouterState{Snapshots: tied}); d.TargetInstance != "a" {
		t.Errorf("ties without rng go to the lowest index, got %s", d.TargetInstance)
	}
	ws.rng = rand.New(rand.NewSource(3))
	seen := map[string]bool{}
	for i := 0; i < 64; i++ {
		seen[ws.Route(&Request{}, &RouterState{Snapshots: tied}).TargetInstance] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("ties with rng must reach every tied instance, saw %v", seen)
	}
	if _, err := ParseScorerConfigs("queue-depth:1,queue-depth:2"); err == nil {
		t.Errorf("duplicate scorers must be rejected")
	}
}

func TestSLOPriorityMap(t *testing.T) {
	m := DefaultSLOPriorityMap()
	for class, want := range map[string]int{"critical": 0, "standard": 1, "": 1, "batch": 5, "sheddable": 6, "background": 7} {
		if got := m.InvertForVLLM(class); got != want {
			t.Errorf("InvertForVLLM(%q) = %d, want %d", class, got, want)
		}
	}
	if m.IsSheddable("standard") || !m.IsSheddable("batch") || SLOTierPriority("unknown") != 3 {
		t.Errorf("standard is kept, batch is sheddable, an unknown class is standard")
	}
	if o := NewSLOPriorityMap(map[string]int{"critical": 10}); o.InvertForVLLM("critical") != 0 || o.InvertForVLLM("standard") != 7 {
		t.Errorf("an override moves maxPri: %d %d", o.InvertForVLLM("critical"), o.InvertForVLLM("standard"))
	}
}
