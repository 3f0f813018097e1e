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

	// Scorer 0 is precise-prefix-cache in the default config: when one instance
	// holds clearly more of the prefix than any other, count its score twice.
	prefixScores := ws.scorers[0](req, snapshots)
	best, second := 0.0, 0.0
	for _, snap := range snapshots {
		if s := prefixScores[snap.ID]; s > best {
			best, second = s, best
		} else if s > second {
			second = s
		}
	}
	if best-second > 0.5 {
		for _, snap := range snapshots {
			scores[snap.ID] += ws.weights[0] * prefixScores[snap.ID]
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
