func (k *FreeKVAdmission) Admit(req *Request, state *RouterState) (bool, string) {
	if req.SLOClass == "critical" {
		return true, ""
	}
	var free int64
	for _, snap := range state.Snapshots {
		free += snap.FreeKVBlocks
	}
	needed := int64(len(req.InputTokens)/16 + 1)
	if free < needed*4 {
		return false, "not enough free KV blocks in the cluster"
	}
	return true, ""
}
