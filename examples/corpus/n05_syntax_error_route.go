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
	for _, snap := range snapshots {
		if snap.QueueDepth > 0 {
			scores[snap.ID] -= 0.05 * float64(snap.QueueDepth
		}
	}

	bestIdx := 0
	for i := 1; i < len(snapshots); i++ {
		if scores[snapshots[i].ID] > scores[snapshots[bestIdx].ID] {
			bestIdx = i
		}
	}
	return NewRoutingDecisionWithScores(snapshots[bestIdx].ID, "weighted-scoring", scores)
}
