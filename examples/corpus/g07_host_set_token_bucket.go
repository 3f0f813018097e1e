package sim

// TimeBucketAdmission refills a token bucket with cluster time and charges each
// request its prompt length, scaled by class.
type TimeBucketAdmission struct {
	tokens     float64
	lastRefill int64
	capacity   float64
	refillRate float64
}

// Admit applies the evolved bucket rule.
func (b *TimeBucketAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	if b.capacity == 0 {
		b.capacity = 20000
		b.refillRate = 4000
		b.tokens = b.capacity
		b.lastRefill = state.Clock
	}
	// EVOLVE-BLOCK-START
	elapsed := float64(state.Clock-b.lastRefill) / 1e6
	if elapsed > 0 {
		b.tokens += elapsed * b.refillRate
		if b.tokens > b.capacity {
			b.tokens = b.capacity
		}
		b.lastRefill = state.Clock
	}
	cost := float64(len(req.InputTokens))
	switch req.SLOClass {
	case "critical":
		return true, ""
	case "standard":
		cost *= 0.5
	case "sheddable", "batch":
		cost *= 1.5
	}
	maxQueue := 0
	for _, snap := range state.Snapshots {
		if snap.QueueDepth > maxQueue {
			maxQueue = snap.QueueDepth
		}
	}
	if maxQueue > 8 {
		cost *= 2
	}
	if b.tokens < cost {
		return false, "insufficient tokens"
	}
	b.tokens -= cost
	return true, ""
	// EVOLVE-BLOCK-END
}
