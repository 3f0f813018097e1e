module github.com/inference-sim/inference-sim

go 1.24.0
