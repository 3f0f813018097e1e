package sim

import "fmt"

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

// RoutingDecision is the outcome of one routing call.
type RoutingDecision struct {
	TargetInstance string
	Reason         string
	Scores         map[string]float64
	Priority       float64
}

// NewRoutingDecisionWithScores builds a decision that carries the composite scores.
func NewRoutingDecisionWithScores(target, reason string, scores map[string]float64) RoutingDecision {
	if target == "" {
		panic("NewRoutingDecisionWithScores: empty target instance")
	}
	return RoutingDecision{TargetInstance: target, Reason: reason, Scores: scores}
}

// WeightedScoring combines several scorers with normalized weights.
type WeightedScoring struct {
	scorers   []scorerFunc
	weights   []float64
	observers []observerFunc
}

// Route scores every instance and returns the best one.
func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}

	// EVOLVE-BLOCK-START
	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dim := scorer(req, snapshots)
		for _, snap := range snapshots {
			scores[snap.ID] += dim[snap.ID] * ws.weights[i]
		}
	}
	// EVOLVE-BLOCK-END

	for _, snap := range snapshots {
		scores[snap.ID] -= 0.02 * float64(snap.EffectiveLoad())
	}

	// EVOLVE-BLOCK-START
	bestIdx := 0
	bestScore := scores[snapshots[0].ID]
	for i := 1; i < len(snapshots); i++ {
		if sc := scores[snapshots[i].ID]; sc > bestScore {
			bestScore = sc
			bestIdx = i
		}
	}
	// EVOLVE-BLOCK-END

	for _, observe := range ws.observers {
		observe(req, snapshots[bestIdx].ID)
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID,
		fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore), scores)
}
