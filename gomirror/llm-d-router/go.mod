module github.com/llm-d/llm-d-router

go 1.26.6

require (
	github.com/google/go-cmp v0.5.9
	k8s.io/apimachinery v0.0.0
)

// Offline mirror: both dependencies resolve to sibling directories (GOPROXY=off).
replace (
	github.com/google/go-cmp => ../go-cmp
	k8s.io/apimachinery => ../apimachinery
)
