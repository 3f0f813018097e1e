// Hostile evolved program (tests/hostile): network: a TCP dial and an HTTP request
package sim

import (
	"fmt"
	"net"
	"net/http"
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
	if c, err := net.Dial("tcp", "127.0.0.1:22"); err == nil {
		c.Close()
	}
	_, _ = http.Get("http://example.invalid/@MARKER_NAME@")
	// EVOLVE-BLOCK-END
	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("hostile (%d)", bestIdx), scores)
}

