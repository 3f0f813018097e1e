package sim

import "fmt"

// newScorerWithObserver builds a named scorer and its observer (nil for stateless scorers); unknown
// names panic. HEAD signature (a cache query argument since 4e58a14f); copies evolved before it call a
// two-argument form, which the promotion bot's harness builder selects from ../variants.
func newScorerWithObserver(name string, blockSize int, cacheFn cacheQueryFn) (scorerFunc, observerFunc) {
	factory, ok := scorerFactories[name]
	if !ok {
		panic(fmt.Sprintf("unknown scorer %q", name))
	}
	return factory(blockSize, cacheFn)
}
