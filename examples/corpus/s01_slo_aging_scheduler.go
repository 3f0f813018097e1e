package sim

import (
	"fmt"
	"sort"
)

// InstanceScheduler orders an instance's wait queue in place. The simulator
// calls it on every step before it forms the next batch.
type InstanceScheduler interface {
	OrderQueue(requests []*Request, clock int64)
}

// FCFSScheduler keeps arrival order.
type FCFSScheduler struct{}

// OrderQueue is a no-op: the queue is already in arrival order.
func (FCFSScheduler) OrderQueue(requests []*Request, clock int64) {}

// PriorityFCFSScheduler orders by ascending Priority (vLLM convention: lower is
// more urgent), then arrival time, then ID.
type PriorityFCFSScheduler struct{}

// OrderQueue sorts by priority, then FCFS.
func (PriorityFCFSScheduler) OrderQueue(requests []*Request, clock int64) {
	sort.SliceStable(requests, func(i, j int) bool {
		a, b := requests[i], requests[j]
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		if a.ArrivalTime != b.ArrivalTime {
			return a.ArrivalTime < b.ArrivalTime
		}
		return a.ID < b.ID
	})
}

// SJFScheduler orders by ascending input length.
type SJFScheduler struct{}

// OrderQueue sorts shortest prompt first.
func (SJFScheduler) OrderQueue(requests []*Request, clock int64) {
	sort.SliceStable(requests, func(i, j int) bool {
		return requests[i].InputLen() < requests[j].InputLen()
	})
}

// SLOAgingScheduler orders by SLO class weight plus an aging bonus so that low
// classes cannot starve.
type SLOAgingScheduler struct{}

// OrderQueue sorts by class weight + age, highest first.
func (SLOAgingScheduler) OrderQueue(requests []*Request, clock int64) {
	// EVOLVE-BLOCK-START
	classWeight := func(class string) float64 {
		switch class {
		case "critical":
			return 4
		case "standard", "":
			return 3
		case "batch":
			return 1
		case "sheddable":
			return 0.5
		default:
			return 0
		}
	}
	effective := func(r *Request) float64 {
		waitedMs := float64(clock-r.ArrivalTime) / 1000.0
		return classWeight(r.SLOClass) + 0.002*waitedMs
	}
	sort.SliceStable(requests, func(i, j int) bool {
		pi, pj := effective(requests[i]), effective(requests[j])
		if pi != pj {
			return pi > pj
		}
		return requests[i].ArrivalTime < requests[j].ArrivalTime
	})
	// EVOLVE-BLOCK-END
}

// NewScheduler maps a scheduler name to its implementation.
func NewScheduler(name string) InstanceScheduler {
	switch name {
	case "", "fcfs":
		return FCFSScheduler{}
	case "priority-fcfs":
		return PriorityFCFSScheduler{}
	case "sjf":
		return SJFScheduler{}
	case "slo-aging":
		return SLOAgingScheduler{}
	default:
		panic(fmt.Sprintf("unknown scheduler %q", name))
	}
}
