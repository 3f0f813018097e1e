// Hostile evolved program (tests/hostile): invisible characters (a Hangul-filler name, bidi controls, a ZWJ)
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
	limit := 1.0
	limitㅤ := 0.0
	for _, snap := range snapshots {
		scores[snap.ID] = 1.0 / float64(1+snap.EffectiveLoad())
		if scores[snap.ID] > limitㅤ {
			scores[snap.ID] = limit
		}
	}
	/* check ‮ } ⁦if limit > 0 {⁩ ⁦// */
	_ = "admin‍"
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}
