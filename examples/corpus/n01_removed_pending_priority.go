package sim

import "fmt"

// RoutingSnapshot is the router's view of one routable instance at decision time.
type RoutingSnapshot struct {
	ID              string
	QueueDepth      int
	BatchSize       int
	KVUtilization   float64
	FreeKVBlocks    int64
	CacheHitRate    float64
	PendingRequests int
}

// EffectiveLoad is queued + running + routed-but-not-yet-queued work.
func (s RoutingSnapshot) EffectiveLoad() int {
	return s.QueueDepth + s.BatchSize + s.PendingRequests
}

// RoutingDecision is the outcome of one routing call. Priority is a one-shot
// hint for the instance scheduler (higher = more urgent); zero means none.
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

// shortPrompt reports whether the prompt fits in one prefix-cache block.
func shortPrompt(tokens []int) bool {
	return len(tokens) <= 16
}

// Route scores instances, steers away from instances with routed-but-unqueued
// work, and tags short critical prompts with a scheduling hint.
func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}

	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dim := scorer(req, snapshots)
		for _, snap := range snapshots {
			scores[snap.ID] += dim[snap.ID] * ws.weights[i]
		}
	}
	for _, snap := range snapshots {
		scores[snap.ID] -= 0.1 * float64(snap.PendingRequests)
	}

	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	target := snapshots[bestIdx]
	for _, observe := range ws.observers {
		observe(req, target.ID)
	}

	decision := NewRoutingDecisionWithScores(target.ID,
		fmt.Sprintf("weighted-scoring (score=%.3f)", scores[target.ID]), scores)
	if req.SLOClass == "critical" && shortPrompt(req.InputTokens) && target.PendingRequests < 2 {
		decision.Priority = 1.0
	}
	return decision
}
