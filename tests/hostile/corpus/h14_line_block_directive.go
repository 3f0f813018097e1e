// Hostile evolved program (tests/hostile): block-comment line directives that move findings onto the bot's adapter
package sim

import (
	"fmt"
)

/*line adapter.go:40*/
func helperX(n int) string { return fmt.Sprintf("%d", "x") }

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}
	scores := make(map[string]float64, len(snapshots))
	// EVOLVE-BLOCK-START
	for _, snap := range snapshots {
		scores[snap.ID] = /*line register.go:12:3*/ 1.0 / float64(1+snap.EffectiveLoad())
	}
	_ = helperX(1)
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}
