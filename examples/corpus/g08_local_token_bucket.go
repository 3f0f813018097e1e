package sim

import "math"

// AdmissionPolicy decides whether a request enters the cluster at all.
type AdmissionPolicy interface {
	Admit(req *Request, state *RouterState) (admitted bool, reason string)
}

// AlwaysAdmit admits every request.
type AlwaysAdmit struct{}

// Admit always returns true.
func (AlwaysAdmit) Admit(req *Request, state *RouterState) (bool, string) {
	return true, ""
}

// tenantBucket is one tenant's token bucket.
type tenantBucket struct {
	tokens float64
	last   int64
}

// TenantBucketAdmission keeps one token bucket per tenant, refilled with the
// time between the tenant's request arrivals.
type TenantBucketAdmission struct {
	buckets map[string]*tenantBucket
}

// Admit applies the evolved per-tenant bucket rule.
func (t *TenantBucketAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	if t.buckets == nil {
		t.buckets = make(map[string]*tenantBucket)
	}
	// EVOLVE-BLOCK-START
	capacity := 12000.0
	refillPerSec := 3000.0
	b, ok := t.buckets[req.TenantID]
	if !ok {
		b = &tenantBucket{tokens: capacity, last: req.ArrivalTime}
		t.buckets[req.TenantID] = b
	}
	if dt := req.ArrivalTime - b.last; dt > 0 {
		b.tokens = math.Min(capacity, b.tokens+float64(dt)/1e6*refillPerSec)
		b.last = req.ArrivalTime
	}
	cost := float64(req.InputLen())
	if req.SLOClass == "critical" {
		b.tokens -= 0.25 * cost
		return true, ""
	}
	maxKV := 0.0
	for _, snap := range state.Snapshots {
		maxKV = math.Max(maxKV, snap.KVUtilization)
	}
	if maxKV > 0.85 {
		cost *= 1.5
	}
	if b.tokens < cost {
		return false, "tenant bucket empty"
	}
	b.tokens -= cost
	return true, ""
	// EVOLVE-BLOCK-END
}
