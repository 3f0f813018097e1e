module github.com/llm-d/llm-d-router

go 1.26.6

require (
	github.com/go-logr/logr v1.2.3
	github.com/google/go-cmp v0.5.9
	k8s.io/apimachinery v0.0.0
	sigs.k8s.io/controller-runtime v0.0.0
)

// Offline mirror: every dependency resolves to a sibling directory (GOPROXY=off).
replace (
	github.com/go-logr/logr => ../logr
	github.com/google/go-cmp => ../go-cmp
	k8s.io/apimachinery => ../apimachinery
	sigs.k8s.io/controller-runtime => ../controller-runtime
)
