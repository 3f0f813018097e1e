package sim

import "fmt"

// newScorerWithObserver builds a named scorer and its observer (nil for stateless scorers); unknown
// names panic. Two-argument form of copies evolved before 4e58a14f (no cache query argument).
func newScorerWithObserver(name string, blockSize int) (scorerFunc, observerFunc) {
	factory, ok := scorerFactories[name]
	if !ok {
		panic(fmt.Sprintf("unknown scorer %q", name))
	}
	return factory(blockSize, nil)
}
