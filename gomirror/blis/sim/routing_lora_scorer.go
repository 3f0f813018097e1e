package sim

// scoreLoRAAffinity gives 1 to instances holding the request's adapter and 0 to the others (min-max);
// no adapter on the request, or the same answer everywhere, scores 1 for all.
func scoreLoRAAffinity(req *Request, snapshots []RoutingSnapshot) map[string]float64 {
	scores := make(map[string]float64, len(snapshots))
	warm := 0
	for _, s := range snapshots {
		if req != nil && req.Adapter != "" && s.ResidentAdapters[req.Adapter] {
			warm++
		}
	}
	for _, s := range snapshots {
		switch {
		case req == nil || req.Adapter == "" || warm == 0 || warm == len(snapshots):
			scores[s.ID] = 1
		case s.ResidentAdapters[req.Adapter]:
			scores[s.ID] = 1
		default:
			scores[s.ID] = 0
		}
	}
	return scores
}

func init() {
	scorerFactories["lora-affinity"] = stateless(scoreLoRAAffinity)
}
