// Hostile evolved program (tests/hostile): a //go:generate directive
package sim

import (
	"fmt"
)

//go:generate touch @MARKER@

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}
	scores := make(map[string]float64, len(snapshots))
	// EVOLVE-BLOCK-START
	for _, snap := range snapshots {
		scores[snap.ID] = 1.0 / float64(1+snap.EffectiveLoad())
	}

	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}

