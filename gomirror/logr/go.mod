module github.com/go-logr/logr

go 1.16
