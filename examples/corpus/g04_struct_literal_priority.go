package sim

import "fmt"

// RoutingSnapshot of a March-2026 copy: seven fields.
type RoutingSnapshot struct {
	ID               string
	QueueDepth       int
	BatchSize        int
	KVUtilization    float64
	FreeKVBlocks     int64
	CacheHitRate     float64
	InFlightRequests int
}

// EffectiveLoad is QueueDepth + BatchSize + InFlightRequests.
func (s RoutingSnapshot) EffectiveLoad() int {
	return s.QueueDepth + s.BatchSize + s.InFlightRequests
}

// RoutingDecision still carries the one-shot Priority hint in this copy.
type RoutingDecision struct {
	TargetInstance string
	Reason         string
	Scores         map[string]float64
	Priority       float64
}

type LeastLoadedBoost struct{}

func (p *LeastLoadedBoost) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("LeastLoadedBoost.Route: no routable instances")
	}
	best := snapshots[0]
	for _, snap := range snapshots[1:] {
		if snap.EffectiveLoad() < best.EffectiveLoad() {
			best = snap
		}
	}
	boost := 0.0
	if req.SLOClass == "critical" && best.QueueDepth < 3 {
		boost = 1
	}
	return RoutingDecision{TargetInstance: best.ID, Reason: fmt.Sprintf("least-loaded (%d)", best.EffectiveLoad()), Priority: boost}
}
