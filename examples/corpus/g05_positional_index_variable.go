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
	// The prefix scorer is the first one configured; boost the instance it likes best.
	prefixIdx := 0
	prefix := ws.scorers[prefixIdx](req, snapshots)
	for _, snap := range snapshots {
		if prefix[snap.ID] > 0.8 && snap.KVUtilization < 0.9 {
			scores[snap.ID] += ws.weights[prefixIdx] * prefix[snap.ID]
		}
	}
	bestIdx, bestScore := 0, -1.0
	for i, snap := range snapshots {
		if s := scores[snap.ID]; s > bestScore {
			bestIdx, bestScore = i, s
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, fmt.Sprintf("weighted (score=%.3f)", bestScore), scores)
}
