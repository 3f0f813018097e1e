func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}

	// Critical traffic bypasses scoring: shortest queue, then lowest KV use.
	if req.SLOClass == "critical" {
		ordered := make([]RoutingSnapshot, len(snapshots))
		copy(ordered, snapshots)
		sort.Slice(ordered, func(i, j int) bool {
			if ordered[i].QueueDepth != ordered[j].QueueDepth {
				return ordered[i].QueueDepth < ordered[j].QueueDepth
			}
			return ordered[i].KVUtilization < ordered[j].KVUtilization
		})
		return NewRoutingDecision(ordered[0].ID, "critical-fast-path")
	}

	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dim := scorer(req, snapshots)
		for _, snap := range snapshots {
			scores[snap.ID] += math.Min(1, math.Max(0, dim[snap.ID])) * ws.weights[i]
		}
	}
	for _, snap := range snapshots {
		if snap.BatchSize > 12 {
			scores[snap.ID] -= 0.3
		}
		if len(req.InputTokens) > 2048 && snap.FreeKVBlocks < 500 {
			scores[snap.ID] -= 0.5
		}
	}

	bestIdx := 0
	bestScore := scores[snapshots[0].ID]
	for i := 1; i < len(snapshots); i++ {
		if sc := scores[snapshots[i].ID]; sc > bestScore {
			bestScore = sc
			bestIdx = i
		}
	}
	for _, observe := range ws.observers {
		observe(req, snapshots[bestIdx].ID)
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID,
		fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore), scores)
}
