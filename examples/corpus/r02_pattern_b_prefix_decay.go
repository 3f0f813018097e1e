package sim

import (
	"fmt"
	"math"
	"math/rand"
)

// RoutingSnapshot is the router's view of one routable instance at decision time.
type RoutingSnapshot struct {
	ID               string
	QueueDepth       int
	BatchSize        int
	KVUtilization    float64
	FreeKVBlocks     int64
	CacheHitRate     float64
	InFlightRequests int
}

// EffectiveLoad is queued + running + dispatched-but-unfinished work.
func (s RoutingSnapshot) EffectiveLoad() int {
	return s.QueueDepth + s.BatchSize + s.InFlightRequests
}

// RoutingDecision is the outcome of one routing call. Priority is a one-shot
// hint the instance scheduler may use; zero means "no hint".
type RoutingDecision struct {
	TargetInstance string
	Reason         string
	Scores         map[string]float64
	Priority       float64
}

// NewRoutingDecision builds a decision without scores.
func NewRoutingDecision(target, reason string) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecision: empty target instance")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason}
}

// NewRoutingDecisionWithScores builds a decision that carries the composite scores.
func NewRoutingDecisionWithScores(target, reason string, scores map[string]float64) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecisionWithScores: empty target instance")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason, Scores: scores}
}

// RoutingPolicy picks the instance for one request.
type RoutingPolicy interface {
	Route(req *Request, state *RouterState) RoutingDecision
}

// RoundRobin cycles through the routable instances.
type RoundRobin struct {
	next int
}

// Route returns the next instance in order.
func (rr *RoundRobin) Route(req *Request, state *RouterState) RoutingDecision {
	if len(state.Snapshots) == 0 {
		panic("RoundRobin.Route: no routable instances")
	}
	target := state.Snapshots[rr.next%len(state.Snapshots)]
	rr.next++
	return NewRoutingDecision(target.ID, "round-robin")
}

// WeightedScoring combines several scorers with normalized weights.
type WeightedScoring struct {
	scorers   []scorerFunc
	weights   []float64
	observers []observerFunc
}

func clamp01(x float64) float64 {
	if x < 0 {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

// Route scores every instance, decays prefix affinity when the cache-warm
// instance is overloaded, and returns the argmax.
func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}

	// Keep each scorer's map; the tuned config lists prefix-affinity first.
	perScorer := make([]map[string]float64, len(ws.scorers))
	for i, scorer := range ws.scorers {
		perScorer[i] = scorer(req, snapshots)
	}
	prefix := perScorer[0]

	bestPrefixID := snapshots[0].ID
	minInFlight := snapshots[0].InFlightRequests
	for _, snap := range snapshots {
		if prefix[snap.ID] > prefix[bestPrefixID] {
			bestPrefixID = snap.ID
		}
		if snap.InFlightRequests < minInFlight {
			minInFlight = snap.InFlightRequests
		}
	}
	excess := 0.0
	for _, snap := range snapshots {
		if snap.ID == bestPrefixID {
			excess = float64(snap.InFlightRequests - minInFlight)
		}
	}

	// Prefix weight decays with the warm instance's in-flight excess.
	w0, w1 := ws.weights[0], ws.weights[1]
	if prefix[bestPrefixID] > 0.1 && excess > 0 {
		w0 = ws.weights[0] / (1.0 + 0.6*excess)
		w1 = 1.0 - w0
	}

	scores := make(map[string]float64, len(snapshots))
	for _, snap := range snapshots {
		scores[snap.ID] = w0*clamp01(prefix[snap.ID]) + w1*clamp01(perScorer[1][snap.ID])
		if snap.KVUtilization > 0.9 {
			scores[snap.ID] -= 0.5 * (snap.KVUtilization - 0.9) / 0.1
		}
		scores[snap.ID] += 0.01 / (1.0 + float64(snap.InFlightRequests))
	}

	// Argmax with random tie-breaking.
	bestScore := math.Inf(-1)
	var ties []int
	for i, snap := range snapshots {
		sc := scores[snap.ID]
		if sc > bestScore+1e-9 {
			bestScore = sc
			ties = []int{i}
		} else if math.Abs(sc-bestScore) <= 1e-9 {
			ties = append(ties, i)
		}
	}
	bestIdx := ties[0]
	if len(ties) > 1 {
		bestIdx = ties[rand.Intn(len(ties))]
	}

	for _, observe := range ws.observers {
		observe(req, snapshots[bestIdx].ID)
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID,
		fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore), scores)
}
