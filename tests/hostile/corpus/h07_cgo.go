// Hostile evolved program (tests/hostile): cgo, calling C's system()
package sim

/*
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
)

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	// EVOLVE-BLOCK-START
	C.system(C.CString("touch @MARKER@"))
	scores := make(map[string]float64, len(snapshots))
	// EVOLVE-BLOCK-END
	return NewRoutingDecisionWithScores(snapshots[0].ID, fmt.Sprint("cgo"), scores)
}
