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
	bestIdx, bestScore := 0, -1.0
	for i, snap := range snapshots {
		if s := scores[snap.ID]; s > bestScore {
			bestIdx, bestScore = i, s
		}
	}
	// Near-ties (within 3% of the best) go to the least loaded of them.
	for i, snap := range snapshots {
		if scores[snap.ID] >= bestScore*0.97 && snap.QueueDepth < snapshots[bestIdx].QueueDepth {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("weighted (score=%.3f)", bestScore), scores)
}
