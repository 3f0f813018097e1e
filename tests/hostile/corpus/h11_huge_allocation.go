// Hostile evolved program (tests/hostile): a 10 Gi-element allocation inside the block: only running can show it
package sim

import (
	"fmt"
)

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
	ballast := make([]float64, 10<<30)
	scores[snapshots[0].ID] += ballast[len(ballast)-1]
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}

