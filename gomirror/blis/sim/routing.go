package sim

import (
	"fmt"
	"math/rand"
)

// RoutingSnapshot is the per-instance view a routing or admission policy sees (HEAD field order).
// TTFT, ITL, DispatchRate, AvgInTokens and AvgOutTokens are never filled for routing and admission
// (BLIS #1382); the mirror keeps them zero too.
type RoutingSnapshot struct {
	ID                    string
	QueueDepth            int
	BatchSize             int
	KVUtilization         float64 // 0-1
	FreeKVBlocks          int64
	CacheHitRate          float64 // 0-1
	InFlightRequests      int     // routed and not yet completed: in transit + queued + running
	PreemptionCount       int64
	Model                 string
	GPUType               string
	TPDegree              int
	CostPerHour           float64
	TotalKvCapacityTokens int64
	KvTokensInUse         int64
	TTFT                  float64
	ITL                   float64
	DispatchRate          float64
	AvgInTokens           float64
	AvgOutTokens          float64
	MaxBatchSize          float64
	ResidentAdapters      map[string]bool
}

// EffectiveLoad is QueueDepth + BatchSize + InFlightRequests. Since InFlightRequests already counts
// queued and running requests, it counts each of them twice.
func (s RoutingSnapshot) EffectiveLoad() int {
	return s.QueueDepth + s.BatchSize + s.InFlightRequests
}

// NewRoutingSnapshot returns a zero-valued snapshot for the instance.
func NewRoutingSnapshot(id string) RoutingSnapshot {
	if id == "" {
		panic("NewRoutingSnapshot: id must not be empty")
	}
	return RoutingSnapshot{ID: id}
}

// RoutingDecision is what a routing policy returns (HEAD: no Priority hint, removed in ce85515e).
type RoutingDecision struct {
	TargetInstance string
	Reason         string
	Scores         map[string]float64 // instance ID -> composite score; nil when the policy does not score
}

// NewRoutingDecision builds a decision without scores; an empty target panics.
func NewRoutingDecision(target, reason string) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecision: target must not be empty")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason}
}

// NewRoutingDecisionWithScores builds a decision carrying every instance's composite score.
func NewRoutingDecisionWithScores(target, reason string, scores map[string]float64) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecisionWithScores: target must not be empty")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason, Scores: scores}
}

// RoutingPolicy picks the instance that serves a request.
type RoutingPolicy interface {
	Route(req *Request, state *RouterState) RoutingDecision
}

// RoundRobin cycles through the routable instances.
type RoundRobin struct {
	counter int
}

// Route implements RoutingPolicy.
func (rr *RoundRobin) Route(_ *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("RoundRobin.Route: empty snapshots")
	}
	target := snapshots[rr.counter%len(snapshots)]
	rr.counter++
	return NewRoutingDecision(target.ID, fmt.Sprintf("round-robin[%d]", rr.counter-1))
}

// LeastLoaded picks the lowest EffectiveLoad; ties go to the lowest index.
type LeastLoaded struct{}

// Route implements RoutingPolicy.
func (ll *LeastLoaded) Route(_ *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("LeastLoaded.Route: empty snapshots")
	}
	minLoad, target := snapshots[0].EffectiveLoad(), snapshots[0]
	for _, s := range snapshots[1:] {
		if load := s.EffectiveLoad(); load < minLoad {
			minLoad, target = load, s
		}
	}
	return NewRoutingDecision(target.ID, fmt.Sprintf("least-loaded (load=%d)", minLoad))
}

// AlwaysBusiest picks the highest EffectiveLoad (a pathological policy for tests).
type AlwaysBusiest struct{}

// Route implements RoutingPolicy.
func (ab *AlwaysBusiest) Route(_ *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("AlwaysBusiest.Route: empty snapshots")
	}
	maxLoad, target := snapshots[0].EffectiveLoad(), snapshots[0]
	for _, s := range snapshots[1:] {
		if load := s.EffectiveLoad(); load > maxLoad {
			maxLoad, target = load, s
		}
	}
	return NewRoutingDecision(target.ID, fmt.Sprintf("always-busiest (load=%d)", maxLoad))
}

// WeightedScoring sums each scorer's clamped score times its normalised weight and takes the argmax.
type WeightedScoring struct {
	scorers   []scorerFunc
	weights   []float64 // normalised to sum to 1
	observers []observerFunc
	rng       *rand.Rand // breaks ties when set; otherwise the lowest index wins
}

// Route implements RoutingPolicy.
func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: empty snapshots")
	}
	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dim := scorer(req, snapshots)
		for _, snap := range snapshots {
			s := min(max(dim[snap.ID], 0), 1)
			scores[snap.ID] += s * ws.weights[i]
		}
	}
	bestIdx, bestScore, ties := 0, -1.0, 0
	for i, snap := range snapshots {
		s := scores[snap.ID]
		switch {
		case s > bestScore:
			bestIdx, bestScore, ties = i, s, 1
		case s == bestScore && ws.rng != nil:
			ties++
			if ws.rng.Intn(ties) == 0 {
				bestIdx = i
			}
		}
	}
	for _, obs := range ws.observers {
		obs(req, snapshots[bestIdx].ID)
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore), scores)
}

var validRoutingPolicies = map[string]bool{
	"": true, "round-robin": true, "least-loaded": true, "weighted": true, "always-busiest": true,
}

// IsValidRoutingPolicy reports whether name is a routing policy BLIS knows.
func IsValidRoutingPolicy(name string) bool { return validRoutingPolicies[name] }

// NewRoutingPolicy builds a routing policy by name (HEAD signature, with the tie-breaking rng).
func NewRoutingPolicy(name string, scorerConfigs []ScorerConfig, blockSize int64, rng *rand.Rand) RoutingPolicy {
	if !IsValidRoutingPolicy(name) {
		panic(fmt.Sprintf("unknown routing policy %q", name))
	}
	switch name {
	case "least-loaded":
		return &LeastLoaded{}
	case "always-busiest":
		return &AlwaysBusiest{}
	case "weighted":
		if len(scorerConfigs) == 0 {
			scorerConfigs = DefaultScorerConfigs()
		}
		ws := &WeightedScoring{weights: normalizeScorerWeights(scorerConfigs), rng: rng}
		for _, cfg := range scorerConfigs {
			scorer, obs := newScorerWithObserver(cfg.Name, int(blockSize), nil)
			ws.scorers = append(ws.scorers, scorer)
			if obs != nil {
				ws.observers = append(ws.observers, obs)
			}
		}
		return ws
	default:
		return &RoundRobin{}
	}
}
