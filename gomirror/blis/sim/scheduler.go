package sim

import "sort"

// InstanceScheduler orders an instance's wait queue in place; BLIS calls it every step.
type InstanceScheduler interface {
	OrderQueue(requests []*Request, clock int64)
}

// FCFSScheduler keeps arrival order.
type FCFSScheduler struct{}

// OrderQueue implements InstanceScheduler.
func (FCFSScheduler) OrderQueue(_ []*Request, _ int64) {}

// PriorityFCFSScheduler orders by ascending Priority (vLLM convention), then ArrivalTime, then ID.
type PriorityFCFSScheduler struct{}

// OrderQueue implements InstanceScheduler.
func (PriorityFCFSScheduler) OrderQueue(requests []*Request, _ int64) {
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

// SJFScheduler orders by ascending prompt length.
type SJFScheduler struct{}

// OrderQueue implements InstanceScheduler.
func (SJFScheduler) OrderQueue(requests []*Request, _ int64) {
	sort.SliceStable(requests, func(i, j int) bool { return requests[i].InputLen() < requests[j].InputLen() })
}

var validSchedulers = map[string]bool{"": true, "fcfs": true, "priority-fcfs": true, "sjf": true, "reverse-priority": true}

// IsValidScheduler reports whether name is a scheduler BLIS knows.
func IsValidScheduler(name string) bool { return validSchedulers[name] }
