package sim

// SLOPriorityMap is the priority of each SLO class (higher = more important); negative = sheddable.
var SLOPriorityMap = map[string]int{
	"critical":   4,
	"standard":   3,
	"batch":      -1,
	"sheddable":  -2,
	"background": -3,
}

// SLOPriority returns the class's priority; unknown and empty classes count as standard (3).
func SLOPriority(class string) int {
	if p, ok := SLOPriorityMap[class]; ok {
		return p
	}
	return 3
}

// IsSheddable reports whether requests of the class may be shed under load.
func IsSheddable(class string) bool {
	return SLOPriority(class) < 0
}

// InvertForVLLM turns a class priority into the vLLM convention (lower = more urgent).
func InvertForVLLM(class string) float64 {
	return float64(4 - SLOPriority(class))
}
