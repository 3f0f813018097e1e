package sim

import (
	"fmt"
	"math/rand"
)

// WeightedScoring as this copy declares it: the evolved block reads a per-class load weight that the
// program's own constructor puts on the receiver.
type WeightedScoring struct {
	scorers     []scorerFunc
	weights     []float64
	observers   []observerFunc
	rng         *rand.Rand
	classWeight map[string]float64 // set by NewWeightedScoring
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
		scores[snap.ID] -= ws.classWeight[req.SLOClass] * float64(snap.InFlightRequests) / 16.0
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

// NewWeightedScoring sets how strongly in-flight requests penalise an instance, per SLO class.
func NewWeightedScoring() *WeightedScoring {
	return &WeightedScoring{classWeight: map[string]float64{"critical": 0.9, "standard": 0.5, "sheddable": 0.15}}
}
