func (c *CostAwareAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	if req.SLOClass == "critical" {
		return true, ""
	}
	// Expected cost of serving the request, in tokens.
	cost := len(req.InputTokens) + len(req.OutputTokens)

	load := 0
	for _, snap := range state.Snapshots {
		load += snap.EffectiveLoad()
	}
	if n := len(state.Snapshots); n > 0 {
		load /= n
	}
	if cost > 6000 && load > 12 {
		return false, "expensive request under load"
	}
	return true, ""
}
