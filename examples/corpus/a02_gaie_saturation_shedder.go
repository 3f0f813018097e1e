package sim

import (
	"fmt"
	"hash/fnv"
	"math"
)

// AdmissionPolicy decides whether a request enters the cluster at all.
type AdmissionPolicy interface {
	Admit(req *Request, state *RouterState) (admitted bool, reason string)
}

// SaturationShedder sheds sheddable and batch requests with a probability that
// ramps with GAIE-style saturation: the mean over instances of
// max(QueueDepth/QDThreshold, KVUtilization/KVThreshold).
//
// The draw is a hash of the request ID rather than an RNG so that a request
// gets the same answer on every replay (and in unit tests).
type SaturationShedder struct {
	QDThreshold float64
	KVThreshold float64
	RampStart   float64
}

// NewSaturationShedder uses the gaie-legacy thresholds (QD 5, KV 0.8) and
// starts shedding at 60% saturation.
func NewSaturationShedder() *SaturationShedder {
	return &SaturationShedder{QDThreshold: 5, KVThreshold: 0.8, RampStart: 0.6}
}

func (s *SaturationShedder) saturation(snapshots []RoutingSnapshot) float64 {
	if len(snapshots) == 0 {
		return 0
	}
	total := 0.0
	for _, snap := range snapshots {
		total += math.Max(float64(snap.QueueDepth)/s.QDThreshold, snap.KVUtilization/s.KVThreshold)
	}
	return total / float64(len(snapshots))
}

// uniformFromID maps a request ID to [0, 1).
func uniformFromID(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / float64(uint64(1)<<53)
}

// Admit always admits protected classes; sheddable and batch requests are shed
// with probability rising linearly from 0 at RampStart to 1 at saturation 1.
func (s *SaturationShedder) Admit(req *Request, state *RouterState) (bool, string) {
	if req.SLOClass != "sheddable" && req.SLOClass != "batch" {
		return true, ""
	}
	sat := s.saturation(state.Snapshots)
	if sat <= s.RampStart {
		return true, ""
	}
	p := (sat - s.RampStart) / (1.0 - s.RampStart)
	if req.SLOClass == "batch" {
		p = math.Min(1, 1.25*p)
	}
	if p >= 1 || uniformFromID(req.ID) < p {
		return false, fmt.Sprintf("saturation shed (sat=%.2f p=%.2f)", sat, p)
	}
	return true, ""
}
