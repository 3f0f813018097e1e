# OpenEvolve program for a BLIS admission policy (evolved, hypothesis mode).
#
# Project convention, modelled on the blis_router example: the Go source is held in
# GO_ADMISSION_CODE (the router example uses GO_ROUTING_CODE) and the evaluator writes it
# over inference-sim/sim/admission.go. Only the EVOLVE block in TenantFairAdmission.Admit
# is mutated.

GO_ADMISSION_CODE = """package sim

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

// TenantFairAdmission keeps an exponentially decayed count of the input tokens
// admitted per tenant and refuses non-protected requests from tenants far above
// their fair share.
type TenantFairAdmission struct {
	tenantTokens map[string]float64
	totalTokens  float64
	lastDecay    int64
}

// Admit applies the evolved fair-share rule.
func (t *TenantFairAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	if t.tenantTokens == nil {
		t.tenantTokens = make(map[string]float64)
	}

	// EVOLVE-BLOCK-START
	// HYPOTHESIS-1: Capping each tenant's decayed token share at twice the fair share raises Jain fairness across tenants.
	// MECHANISM-1: A heavy tenant's burst is refused at the gate instead of queueing ahead of light tenants.
	// EXPECT-1: jain_fairness > 0.9
	dt := float64(state.Clock-t.lastDecay) / 1e6
	if dt > 0 {
		decay := math.Exp(-dt / 5.0)
		for tenant := range t.tenantTokens {
			t.tenantTokens[tenant] *= decay
		}
		t.totalTokens *= decay
		t.lastDecay = state.Clock
	}

	inputLen := float64(req.InputLen())
	if req.SLOClass == "critical" {
		t.tenantTokens[req.TenantID] += inputLen
		t.totalTokens += inputLen
		return true, ""
	}

	tenants := len(t.tenantTokens)
	if _, seen := t.tenantTokens[req.TenantID]; !seen {
		tenants++
	}
	fair := (t.totalTokens + inputLen) / float64(tenants)

	busy := 0
	for _, snap := range state.Snapshots {
		if snap.QueueDepth > 0 {
			busy++
		}
	}
	busyFraction := float64(busy) / float64(max(1, len(state.Snapshots)))
	limit := 2.0 * fair
	if busyFraction > 0.75 {
		limit = 1.25 * fair
	}
	if req.SLOClass != "standard" && t.totalTokens > 0 && t.tenantTokens[req.TenantID]+inputLen > limit {
		return false, "tenant over fair share"
	}
	t.tenantTokens[req.TenantID] += inputLen
	t.totalTokens += inputLen
	return true, ""
	// EVOLVE-BLOCK-END
}
"""


def get_admission_code() -> str:
    """Return the Go source the evaluator writes to sim/admission.go."""
    return GO_ADMISSION_CODE
