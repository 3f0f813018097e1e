package sim

import (
	"fmt"
	"math"
)

// AdmissionPolicy decides whether a request enters the cluster at all.
// Admission runs only in cluster mode, before routing.
type AdmissionPolicy interface {
	Admit(req *Request, state *RouterState) (admitted bool, reason string)
}

// AlwaysAdmit admits every request.
type AlwaysAdmit struct{}

// Admit always returns true.
func (AlwaysAdmit) Admit(req *Request, state *RouterState) (bool, string) {
	return true, ""
}

// TokenBucket admits a request when the bucket holds at least its input-token cost.
type TokenBucket struct {
	capacity   float64
	refillRate float64 // tokens per second
	tokens     float64
	lastRefill int64
}

// NewTokenBucket returns a full bucket.
func NewTokenBucket(capacity, refillRate float64) *TokenBucket {
	return &TokenBucket{capacity: capacity, refillRate: refillRate, tokens: capacity}
}

// Admit refills the bucket for the elapsed time and charges the input length.
func (tb *TokenBucket) Admit(req *Request, state *RouterState) (bool, string) {
	elapsed := float64(state.Clock-tb.lastRefill) / 1e6
	tb.tokens = math.Min(tb.capacity, tb.tokens+elapsed*tb.refillRate)
	tb.lastRefill = state.Clock
	cost := float64(len(req.InputTokens))
	if tb.tokens < cost {
		return false, "insufficient tokens"
	}
	tb.tokens -= cost
	return true, ""
}

// RejectAll rejects every request (used in tests).
type RejectAll struct{}

// Admit always returns false.
func (RejectAll) Admit(req *Request, state *RouterState) (bool, string) {
	return false, "reject-all"
}

// AdaptiveAdmission sheds low-priority classes when cluster load is high
// relative to the load it has learned to be typical.
type AdaptiveAdmission struct {
	tenantCounts  map[string]int
	classCounts   map[string]int
	totalSeen     int
	windowStart   int64
	windowLoadSum float64
	windowSamples int
	typicalLoad   float64
}

// NewAdaptiveAdmission returns a policy with empty counters.
func NewAdaptiveAdmission() *AdaptiveAdmission {
	return &AdaptiveAdmission{
		tenantCounts: make(map[string]int),
		classCounts:  make(map[string]int),
	}
}

// NewAdmissionPolicy maps a policy name to its implementation.
// The evolved program routes "always-admit" to AdaptiveAdmission.
func NewAdmissionPolicy(name string, capacity, refillRate float64) AdmissionPolicy {
	switch name {
	case "", "always-admit":
		return NewAdaptiveAdmission()
	case "token-bucket":
		return NewTokenBucket(capacity, refillRate)
	case "reject-all":
		return RejectAll{}
	default:
		panic(fmt.Sprintf("unknown admission policy %q", name))
	}
}

// Admit computes cluster-level signals, then applies the evolved shedding rule.
func (a *AdaptiveAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	snapshots := state.Snapshots
	numInstances := len(snapshots)
	totalInFlight := 0
	totalQueueDepth := 0
	maxKVUtil := 0.0
	avgKVUtil := 0.0
	minFreeKV := int64(math.MaxInt64)
	for _, snap := range snapshots {
		totalInFlight += snap.InFlightRequests
		totalQueueDepth += snap.QueueDepth
		if snap.KVUtilization > maxKVUtil {
			maxKVUtil = snap.KVUtilization
		}
		avgKVUtil += snap.KVUtilization
		if snap.FreeKVBlocks < minFreeKV {
			minFreeKV = snap.FreeKVBlocks
		}
	}
	if numInstances > 0 {
		avgKVUtil /= float64(numInstances)
	}
	inputLen := len(req.InputTokens)
	sloClass := req.SLOClass
	tenantID := req.TenantID
	clock := state.Clock

	a.tenantCounts[tenantID]++
	a.classCounts[sloClass]++
	a.totalSeen++

	// EVOLVE-BLOCK-START
	if sloClass == "critical" || sloClass == "standard" {
		return true, "protected class"
	}
	if numInstances == 0 {
		return true, "no instances"
	}

	// Learn the typical per-instance load over 10 s windows.
	perInstance := float64(totalInFlight) / float64(numInstances)
	if clock-a.windowStart > 10_000_000 {
		if a.windowSamples > 0 {
			a.typicalLoad = 0.7*a.typicalLoad + 0.3*(a.windowLoadSum/float64(a.windowSamples))
		}
		a.windowStart = clock
		a.windowLoadSum = 0
		a.windowSamples = 0
	}
	a.windowLoadSum += perInstance
	a.windowSamples++
	typical := a.typicalLoad
	if typical <= 0 {
		typical = 40
	}
	loadRatio := perInstance / typical

	// Tenants far above the average request count are shed earlier.
	batchLimit := 0.5
	shedLimit := 0.75
	avgPerTenant := float64(a.totalSeen) / float64(len(a.tenantCounts))
	if float64(a.tenantCounts[tenantID]) > 1.5*avgPerTenant {
		batchLimit *= 0.8
		shedLimit *= 0.9
	}

	queuePerInstance := float64(totalQueueDepth) / float64(numInstances)
	if maxKVUtil > 0.95 || (avgKVUtil > 0.85 && minFreeKV < 128) {
		loadRatio += 0.25
	}
	if inputLen > 4096 && queuePerInstance > 8 {
		loadRatio += 0.1
	}

	switch sloClass {
	case "batch":
		if loadRatio > batchLimit {
			return false, fmt.Sprintf("batch shed (load ratio %.2f)", loadRatio)
		}
	case "sheddable":
		if loadRatio > shedLimit {
			return false, fmt.Sprintf("sheddable shed (load ratio %.2f)", loadRatio)
		}
	}
	return true, "admitted"
	// EVOLVE-BLOCK-END
}
