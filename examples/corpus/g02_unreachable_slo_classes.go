func (a *ClassGateAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	load := 0
	for _, snap := range state.Snapshots {
		load += snap.QueueDepth
	}
	perInstance := float64(load) / float64(max(1, len(state.Snapshots)))
	if req.SLOClass == "batch" && perInstance > 2 {
		return false, "batch shed under load"
	}
	if req.SLOClass == "background" {
		return false, "background never admitted under this policy"
	}
	if req.SLOClass == "" && perInstance > 6 {
		return false, "unclassified shed under heavy load"
	}
	return true, ""
}
