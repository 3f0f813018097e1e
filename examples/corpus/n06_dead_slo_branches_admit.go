func (g *SLOGateAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	sloClass := req.SLOClass
	if sloClass == "realtime" || sloClass == "critical" {
		return true, "latency-critical"
	}

	maxQueue := 0
	for _, snap := range state.Snapshots {
		if snap.QueueDepth > maxQueue {
			maxQueue = snap.QueueDepth
		}
	}
	if sloClass == "interactive" && maxQueue < 10 {
		return true, "interactive headroom"
	}
	if sloClass == "standard" {
		return true, ""
	}
	if maxQueue > 6 {
		return false, "queue pressure"
	}
	return true, ""
}
