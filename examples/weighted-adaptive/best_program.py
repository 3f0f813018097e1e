"""
Best program: BLIS router, adaptive weighted scoring (bundled promotion example).

Written for the promotion bot as an example input in the shape OpenEvolve's
examples/blis_router run leaves behind (openevolve_output/best_program.py):
GO_ROUTING_CODE holds a full copy of a March-2026 inference-sim sim/routing.go
and only the code between the EVOLVE-BLOCK markers inside
WeightedScoring.Route was evolved. The block follows the evolved pattern
documented for sim2real routing/best_program.py (iteration 32).

Run: blis_router/routing, iteration 32, combined_score -3859.2 (baseline -4498.0).
"""

# Full routing.go file with EVOLVE-BLOCK markers (inference-sim, March 2026)
GO_ROUTING_CODE = """package sim

import (
	"fmt"
	"math"
	"math/rand"
)

// RoutingSnapshot is the per-instance view a routing or admission policy sees.
// ClusterSimulator fills it from the instance state when it builds RouterState.
// Freshness is the snapshot provider's business, so no timestamp is carried.
type RoutingSnapshot struct {
	ID               string
	QueueDepth       int
	BatchSize        int
	KVUtilization    float64
	FreeKVBlocks     int64
	CacheHitRate     float64
	InFlightRequests int // dispatched to this instance but not yet completed
}

// EffectiveLoad is QueueDepth + BatchSize + InFlightRequests, the one load
// figure shared by the routing policies and counterfactual scoring.
func (s RoutingSnapshot) EffectiveLoad() int {
	return s.QueueDepth + s.BatchSize + s.InFlightRequests
}

// NewRoutingSnapshot returns a zero-valued snapshot for the given instance.
func NewRoutingSnapshot(id string) RoutingSnapshot {
	if id == "" {
		panic("NewRoutingSnapshot: id must not be empty")
	}
	return RoutingSnapshot{ID: id}
}

// RoutingDecision is what a routing policy returns for one request.
type RoutingDecision struct {
	TargetInstance string             // must match a snapshot ID
	Reason         string             // human-readable explanation
	Scores         map[string]float64 // instance ID -> composite score; nil when the policy does not score
	// Priority is a one-shot hint applied to req.Priority before the request
	// enters the instance queue. Zero leaves priority to the instance-level
	// PriorityPolicy, which recomputes it every step anyway.
	Priority float64
}

// NewRoutingDecision builds a decision without per-instance scores.
func NewRoutingDecision(target string, reason string) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecision: target must not be empty")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason}
}

// NewRoutingDecisionWithScores builds a decision that also records the
// composite score of every instance (used by scoring policies).
func NewRoutingDecisionWithScores(target string, reason string, scores map[string]float64) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecisionWithScores: target must not be empty")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason, Scores: scores}
}

// RoutingPolicy picks the instance that serves a request.
type RoutingPolicy interface {
	Route(req *Request, state *RouterState) RoutingDecision
}

// RoundRobin cycles through the routable instances in snapshot order.
type RoundRobin struct {
	counter int
}

// Route implements RoutingPolicy for RoundRobin.
func (rr *RoundRobin) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("RoundRobin.Route: empty snapshots")
	}
	target := snapshots[rr.counter%len(snapshots)]
	rr.counter++
	return NewRoutingDecision(target.ID, fmt.Sprintf("round-robin[%d]", rr.counter-1))
}

// LeastLoaded sends each request to the instance with the lowest EffectiveLoad.
// Counting in-flight requests stops pile-on when many requests are routed at
// the same tick. Ties go to the lowest index.
type LeastLoaded struct{}

// Route implements RoutingPolicy for LeastLoaded.
func (ll *LeastLoaded) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("LeastLoaded.Route: empty snapshots")
	}
	minLoad := snapshots[0].EffectiveLoad()
	target := snapshots[0]
	for i := 1; i < len(snapshots); i++ {
		if load := snapshots[i].EffectiveLoad(); load < minLoad {
			minLoad = load
			target = snapshots[i]
		}
	}
	return NewRoutingDecision(target.ID, fmt.Sprintf("least-loaded (load=%d)", minLoad))
}

// scorerFunc scores every instance for one request on a [0,1] scale.
type scorerFunc func(req *Request, snapshots []RoutingSnapshot) map[string]float64

// observerFunc is told where each request went, so stateful scorers
// (prefix-affinity) can update their router-side index.
type observerFunc func(req *Request, targetInstance string)

// WeightedScoring combines a pipeline of scorers:
// composite = sum over scorers of clamp(score, 0, 1) * weight, then argmax.
//
// Scorers live in sim/routing_scorers.go and sim/routing_prefix_scorer.go
// (prefix-affinity, queue-depth, kv-utilization, load-balance). Observers run
// after the argmax. Ties are broken at random when rng is set, otherwise by
// the lowest snapshot index.
type WeightedScoring struct {
	scorers   []scorerFunc
	weights   []float64 // normalized to sum to 1.0
	observers []observerFunc
	rng       *rand.Rand
}

// Route implements RoutingPolicy for WeightedScoring.
func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: empty snapshots")
	}

	// EVOLVE-BLOCK-START
	// HYPOTHESIS-1: Under load-spikes, a cubic penalty on each instance's load excess over the least-loaded instance lowers tail latency
	// MECHANISM-1: prefix-affinity piles the heavy-hitter prefix group onto one warm instance during bursts; 1/(1+5*delta^3) ignores small imbalances but collapses the score of an instance that is several requests ahead, so the burst spills onto idle instances
	// EXPECT-1: e2e_p95_ms < 6500
	// HYPOTHESIS-2: Under multiturn, favouring cache-warm instances for session requests lowers time to first token
	// MECHANISM-2: follow-up turns that land where the accumulated context is cached skip most of the prefill; a (1+0.3*CacheHitRate) bonus above a 0.35 hit rate keeps sessions sticky without overriding the load penalties
	// EXPECT-2: ttft_mean_ms < 80

	// Composite score from the configured scorers, clamped per scorer.
	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dimScores := scorer(req, snapshots)
		for _, snap := range snapshots {
			s := dimScores[snap.ID]
			if s < 0 {
				s = 0
			}
			if s > 1 {
				s = 1
			}
			scores[snap.ID] += s * ws.weights[i]
		}
	}

	// Least effective load across the routable instances.
	minLoad := math.MaxFloat64
	for i := range snapshots {
		snap := snapshots[i]
		if load := float64(snap.EffectiveLoad()); load < minLoad {
			minLoad = load
		}
	}

	// Multiplicative adjustments per instance.
	for i := range snapshots {
		snap := snapshots[i]
		load := float64(snap.EffectiveLoad())
		adj := 1.0

		// Relative overload: cubic in the excess over the least-loaded instance.
		if delta := load - minLoad; delta > 0.2 {
			adj *= 1.0 / (1.0 + 5.0*delta*delta*delta)
		}

		// Session affinity: follow-up turns prefer instances whose cache is warm.
		if req.SessionID != "" && snap.CacheHitRate > 0.35 {
			adj *= 1.0 + 0.3*snap.CacheHitRate
		}

		// KV pressure: back off linearly above 82% utilization, floor at 0.3.
		if snap.KVUtilization > 0.82 {
			adj *= math.Max(0.3, 1.0-2.0*(snap.KVUtilization-0.82))
		}

		// Absolute load: hard cut above 7, linear taper above 4.5.
		if load > 7 {
			adj *= 0.4
		} else if load > 4.5 {
			adj *= 1.0 - 0.12*(load-4.5)
		}

		scores[snap.ID] *= adj
	}

	// Argmax; equal scores are sampled uniformly when rng is set.
	bestScore := -1.0
	bestIdx := 0
	ties := 0
	for i := range snapshots {
		snap := snapshots[i]
		s := scores[snap.ID]
		if s > bestScore {
			bestScore = s
			bestIdx = i
			ties = 1
		} else if s == bestScore && ws.rng != nil {
			ties++
			if ws.rng.Intn(ties) == 0 {
				bestIdx = i
			}
		}
	}
	// EVOLVE-BLOCK-END

	// Tell stateful scorers where the request went.
	for _, obs := range ws.observers {
		obs(req, snapshots[bestIdx].ID)
	}

	return NewRoutingDecisionWithScores(
		snapshots[bestIdx].ID,
		fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore),
		scores,
	)
}

// AlwaysBusiest sends every request to the most loaded instance. It is a
// pathological policy for testing load-imbalance detection.
type AlwaysBusiest struct{}

// Route implements RoutingPolicy for AlwaysBusiest.
func (ab *AlwaysBusiest) Route(_ *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("AlwaysBusiest.Route: empty snapshots")
	}
	maxLoad := snapshots[0].EffectiveLoad()
	target := snapshots[0]
	for i := 1; i < len(snapshots); i++ {
		if load := snapshots[i].EffectiveLoad(); load > maxLoad {
			maxLoad = load
			target = snapshots[i]
		}
	}
	return NewRoutingDecision(target.ID, fmt.Sprintf("always-busiest (load=%d)", maxLoad))
}

// NewRoutingPolicy builds a routing policy by name (names in bundle.go).
// The empty name means round-robin. For "weighted", scorerConfigs sets up the
// scorer pipeline (DefaultScorerConfigs() when empty) and rng, when non-nil,
// breaks ties. Other policies ignore both. Unknown names panic.
func NewRoutingPolicy(name string, scorerConfigs []ScorerConfig, blockSize int64, rng *rand.Rand) RoutingPolicy {
	if !IsValidRoutingPolicy(name) {
		panic(fmt.Sprintf("unknown routing policy %q", name))
	}
	switch name {
	case "", "round-robin":
		return &RoundRobin{}
	case "least-loaded":
		return &LeastLoaded{}
	case "weighted":
		if len(scorerConfigs) == 0 {
			scorerConfigs = DefaultScorerConfigs()
		}
		scorers := make([]scorerFunc, len(scorerConfigs))
		var observers []observerFunc
		for i, cfg := range scorerConfigs {
			scorer, obs := newScorerWithObserver(cfg.Name, int(blockSize))
			scorers[i] = scorer
			if obs != nil {
				observers = append(observers, obs)
			}
		}
		weights := normalizeScorerWeights(scorerConfigs)
		return &WeightedScoring{scorers: scorers, weights: weights, observers: observers, rng: rng}
	case "always-busiest":
		return &AlwaysBusiest{}
	default:
		panic(fmt.Sprintf("unhandled routing policy %q", name))
	}
}
"""

if __name__ == "__main__":
    print(GO_ROUTING_CODE)
