package sim

// AdmissionPolicy admits or rejects a request before routing.
type AdmissionPolicy interface {
	Admit(req *Request, state *RouterState) (admitted bool, reason string)
}

// AlwaysAdmit admits every request (BLIS's default).
type AlwaysAdmit struct{}

// Admit implements AdmissionPolicy.
func (AlwaysAdmit) Admit(_ *Request, _ *RouterState) (bool, string) { return true, "" }

// RejectAll rejects every request.
type RejectAll struct{}

// Admit implements AdmissionPolicy.
func (RejectAll) Admit(_ *Request, _ *RouterState) (bool, string) { return false, "reject-all" }

// TokenBucket admits a request when the bucket holds as many tokens as its prompt; it refills per
// second of simulated time.
type TokenBucket struct {
	capacity    float64
	refillRate  float64
	tokens      float64
	lastRefill  int64
	initialized bool
}

// NewTokenBucket returns a full bucket.
func NewTokenBucket(capacity, refillRate float64) *TokenBucket {
	return &TokenBucket{capacity: capacity, refillRate: refillRate, tokens: capacity}
}

// Admit implements AdmissionPolicy.
func (tb *TokenBucket) Admit(req *Request, state *RouterState) (bool, string) {
	if tb.initialized {
		elapsed := float64(state.Clock-tb.lastRefill) / 1e6
		tb.tokens = min(tb.capacity, tb.tokens+elapsed*tb.refillRate)
	}
	tb.initialized, tb.lastRefill = true, state.Clock
	cost := float64(len(req.InputTokens))
	if tb.tokens < cost {
		return false, "insufficient tokens"
	}
	tb.tokens -= cost
	return true, ""
}

// SLOTierPriority is the class's priority under DefaultSLOPriorityMap (HEAD keeps it, deprecated, for older
// callers; before e8420fe9 it had its own scale, critical 4 ... background 0, which a copy of that era declares
// itself).
func SLOTierPriority(class string) int { return DefaultSLOPriorityMap().Priority(class) }

var validAdmissionPolicies = map[string]bool{
	"": true, "always-admit": true, "token-bucket": true, "reject-all": true, "tier-shed": true, "gaie-legacy": true,
}

// IsValidAdmissionPolicy reports whether name is an admission policy BLIS knows.
func IsValidAdmissionPolicy(name string) bool { return validAdmissionPolicies[name] }
