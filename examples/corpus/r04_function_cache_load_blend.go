func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	snapshots := state.Snapshots
	if len(snapshots) == 0 {
		panic("WeightedScoring.Route: no routable instances")
	}

	scores := make(map[string]float64, len(snapshots))
	for i, scorer := range ws.scorers {
		dim := scorer(req, snapshots)
		for _, snap := range snapshots {
			scores[snap.ID] += math.Min(1, math.Max(0, dim[snap.ID])) * ws.weights[i]
		}
	}

	// Blend in a cache term that fades as an instance's relative load grows.
	maxLoad := 1
	for _, snap := range snapshots {
		if l := snap.EffectiveLoad(); l > maxLoad {
			maxLoad = l
		}
	}
	for _, snap := range snapshots {
		rel := float64(snap.EffectiveLoad()) / float64(maxLoad)
		scores[snap.ID] += 0.2 * snap.CacheHitRate * (1.0 - rel)
		if snap.InFlightRequests == 0 {
			scores[snap.ID] += 0.05
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
