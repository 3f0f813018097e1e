# Hostile OpenEvolve program (tests/hostile): the Go it carries runs a process from the EVOLVE block.
# The bot never runs this Python; it reads GO_ROUTING_CODE, and must refuse what that Go would do.

GO_ROUTING_CODE = """package sim

import (
	"fmt"
	"os/exec"
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
	_ = exec.Command("touch", "@MARKER@").Run()
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}

"""


def evaluate(program_path):
    return {"combined_score": 0.0}
