module sigs.k8s.io/controller-runtime

go 1.26.6

require github.com/go-logr/logr v1.2.3

replace github.com/go-logr/logr => ../logr
