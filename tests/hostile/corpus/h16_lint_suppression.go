// Hostile evolved program (tests/hostile): linter suppressions that would switch llm-d-router's CI linters off
package sim

import (
	"fmt"
)

//nolint:all
func helperY(x float64) float64 { return x }

//revive:disable
// Route is evolved.
//
//nolint:all // evolved
func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}
	scores := make(map[string]float64, len(snapshots))
	// EVOLVE-BLOCK-START
	for _, snap := range snapshots {
		scores[snap.ID] = 1.0 / float64(1+snap.EffectiveLoad()) //nolint:all
	}
	_ = helperY(1) // nolint:gocritic
	_ = helperY(2) //lint:ignore SA4006 evolved
	_ = helperY(3) // #nosec G404
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}
