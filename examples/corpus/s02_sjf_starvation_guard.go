package sim

import "sort"

// InstanceScheduler orders an instance's wait queue in place.
type InstanceScheduler interface {
	OrderQueue(requests []*Request, clock int64)
}

// GuardedSJF serves the shortest prompt first, except that any request that has
// waited longer than MaxWaitUs jumps ahead of all non-starving ones (oldest first).
type GuardedSJF struct {
	MaxWaitUs int64
}

// OrderQueue sorts starving requests first, then shortest input first.
func (g GuardedSJF) OrderQueue(requests []*Request, clock int64) {
	maxWait := g.MaxWaitUs
	if maxWait <= 0 {
		maxWait = 2_000_000
	}
	starving := func(r *Request) bool {
		return clock-r.ArrivalTime >= maxWait
	}
	sort.SliceStable(requests, func(i, j int) bool {
		a, b := requests[i], requests[j]
		sa, sb := starving(a), starving(b)
		if sa != sb {
			return sa
		}
		if sa {
			return a.ArrivalTime < b.ArrivalTime
		}
		la, lb := len(a.InputTokens), len(b.InputTokens)
		if la != lb {
			return la < lb
		}
		return a.ArrivalTime < b.ArrivalTime
	})
}
