package sim

import (
	"fmt"
	"math/rand"
)

// WeightedScoring as this copy declares it: the evolved logic reads two knobs that BLIS sets outside
// the evolved block (NewRoutingPolicy below, from the policy bundle in the real run).
type WeightedScoring struct {
	scorers    []scorerFunc
	weights    []float64
	observers  []observerFunc
	rng        *rand.Rand
	idleBonus  float64 // set by NewRoutingPolicy
	stickiness float64 // set from the policy bundle at run time; not in this file
}

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
	// EVOLVE-BLOCK-START
	for _, snap := range snapshots {
		if snap.QueueDepth == 0 {
			scores[snap.ID] += ws.idleBonus
		}
		if req.SessionID != "" && snap.CacheHitRate > 0.5 {
			scores[snap.ID] += ws.stickiness
		}
	}
	// EVOLVE-BLOCK-END
	bestIdx, bestScore := 0, -1.0
	for i, snap := range snapshots {
		if s := scores[snap.ID]; s > bestScore {
			bestIdx, bestScore = i, s
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("weighted (score=%.3f)", bestScore), scores)
}

func NewRoutingPolicy(name string, scorerConfigs []ScorerConfig, blockSize int64, rng *rand.Rand) RoutingPolicy {
	if len(scorerConfigs) == 0 {
		scorerConfigs = DefaultScorerConfigs()
	}
	ws := &WeightedScoring{weights: normalizeScorerWeights(scorerConfigs), rng: rng, idleBonus: 0.05}
	for _, cfg := range scorerConfigs {
		scorer, obs := newScorerWithObserver(cfg.Name, int(blockSize), nil)
		ws.scorers = append(ws.scorers, scorer)
		if obs != nil {
			ws.observers = append(ws.observers, obs)
		}
	}
	return ws
}
