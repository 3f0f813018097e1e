package sim

import "fmt"

// SLOPriorityMap gives each SLO class an integer priority: higher is more important, negative is sheddable
// (GAIE's IsSheddable contract). BLIS f90a1e3a shape: a struct with constructors and methods (since
// e8420fe9, 2026-04-10; declared in admission.go until ce85515e moved it here). The map is unexported so
// callers cannot change it after construction.
type SLOPriorityMap struct {
	priorities map[string]int
	defaultPri int
	maxPri     int // the highest priority, kept for InvertForVLLM
}

// DefaultSLOPriorityMap is the GAIE-compatible mapping: critical 4, standard 3, batch -1, sheddable -2,
// background -3; an empty or unknown class gets 3 (standard).
func DefaultSLOPriorityMap() *SLOPriorityMap {
	m := &SLOPriorityMap{
		priorities: map[string]int{"critical": 4, "standard": 3, "batch": -1, "sheddable": -2, "background": -3},
		defaultPri: 3,
	}
	m.recomputeMax()
	return m
}

// NewSLOPriorityMap starts from the defaults and applies overrides (nil or empty: the defaults). An override
// outside [-100, 100] panics, as BLIS validates at construction.
func NewSLOPriorityMap(overrides map[string]int) *SLOPriorityMap {
	m := DefaultSLOPriorityMap()
	for class, p := range overrides {
		if p < -100 || p > 100 {
			panic(fmt.Sprintf("NewSLOPriorityMap: override for %q value %d out of range [-100, 100]", class, p))
		}
		m.priorities[class] = p
	}
	m.recomputeMax()
	return m
}

func (m *SLOPriorityMap) recomputeMax() {
	m.maxPri = m.defaultPri
	for _, p := range m.priorities {
		m.maxPri = max(m.maxPri, p)
	}
}

// Priority is the class's priority; an empty or unknown class gets the default (3).
func (m *SLOPriorityMap) Priority(class string) int {
	if p, ok := m.priorities[class]; ok {
		return p
	}
	return m.defaultPri
}

// IsSheddable reports whether the class's priority is negative.
func (m *SLOPriorityMap) IsSheddable(class string) bool {
	return m.Priority(class) < 0
}

// InvertForVLLM is the class's priority in vLLM's convention (lower = more urgent): maxPri - Priority(class),
// so with the defaults critical 0, standard 1, batch 5, sheddable 6, background 7.
func (m *SLOPriorityMap) InvertForVLLM(class string) int {
	return m.maxPri - m.Priority(class)
}
