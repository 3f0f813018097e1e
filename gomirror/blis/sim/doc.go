// Package sim is a MIRROR of the policy-facing part of BLIS (inference-sim) package sim, written for the
// promotion bot's differential harness: the types an evolved routing, admission or scheduling policy reads
// (RouterState, RoutingSnapshot, Request, RoutingDecision), the weighted-scoring scorers with BLIS's exact
// normalisation and edge cases, EffectiveLoad, the policy interfaces and the built-in policies an embedded
// copy of routing.go, admission.go or scheduler.go refers to. It is not the simulator: there is no event
// loop, no instance model and no workload generator. See ../README.md for what each file mirrors.
package sim
