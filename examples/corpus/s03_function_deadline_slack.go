func (d *DeadlineSlackScheduler) OrderQueue(requests []*Request, clock int64) {
	// Slack = time left before the deadline minus a rough prefill cost.
	slack := func(r *Request) int64 {
		deadline := r.Deadline
		if deadline == 0 {
			target := r.SLOTargetUs
			if target == 0 {
				switch r.SLOClass {
				case "critical":
					target = 500_000
				case "standard":
					target = 2_000_000
				default:
					target = 30_000_000
				}
			}
			deadline = r.ArrivalTime + target
		}
		return deadline - clock - int64(len(r.InputTokens))*50
	}
	// Requests of sheddable classes that can no longer make it go last.
	hopeless := func(r *Request) bool {
		return slack(r) < 0 && (r.SLOClass == "sheddable" || r.SLOClass == "batch")
	}
	sort.SliceStable(requests, func(i, j int) bool {
		a, b := requests[i], requests[j]
		ha, hb := hopeless(a), hopeless(b)
		if ha != hb {
			return hb
		}
		sa, sb := slack(a), slack(b)
		if sa != sb {
			return sa < sb
		}
		return a.ArrivalTime < b.ArrivalTime
	})
}
