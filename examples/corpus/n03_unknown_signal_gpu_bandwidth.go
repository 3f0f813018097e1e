func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}

	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dim := scorer(req, snapshots)
		for _, snap := range snapshots {
			scores[snap.ID] += dim[snap.ID] * ws.weights[i]
		}
	}
	// Long decodes are memory-bound: prefer instances with bandwidth headroom.
	for _, snap := range snapshots {
		if req.MaxOutputLen > 1024 {
			scores[snap.ID] += 0.1 * (1.0 - snap.GPUMemoryBandwidth)
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
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID,
		fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore), scores)
}
