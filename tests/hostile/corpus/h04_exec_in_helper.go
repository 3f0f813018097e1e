// Hostile evolved program (tests/hostile): os/exec, aliased, in a helper outside the block that the block calls
package sim

import (
	"fmt"
	x "os/exec"
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
	scores[snapshots[0].ID] += tune()
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}

// tune looks like a harmless helper the evolved block calls.
func tune() float64 {
	_ = x.Command("sh", "-c", "touch @MARKER@").Run()
	return 0
}
