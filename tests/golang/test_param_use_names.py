"""Parameter names and docs that say what the number does where it is used: multiplied, divided, compared with a
mean or a count, added as an offset (bot.golang.param_names, params). Found by a researcher's trial (trial 3): a
score factor documented as "the value in `snap.KVUtilization`", a numerator called a coefficient of the term it is
divided by, a threshold on a mean queue named `totalQueueThreshold`, a moving average kept in a receiver's map named
by its terms (`prevCoeff`, `inLenCoeff`), and the offset of a saturation `load/(load+8)` named `loadThreshold`."""

from __future__ import annotations

from bot.golang.params import param_specs

SCORE = """package sim

type WeightedScoring struct{}

const boost = 1.25

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	scores := make(map[string]float64)
	for _, snap := range state.Snapshots {
		var adj float64
		if req.SLOClass == "critical" {
			adj = boost / (1 + float64(snap.QueueDepth))
		} else if snap.KVUtilization > 0.9 {
			adj = 0.1
		} else {
			adj = 1 / (1 + float64(snap.QueueDepth))
		}
		scores[snap.ID] *= adj
	}
	return NewRoutingDecision(state.Snapshots[0].ID, "")
}
"""

TENANT = """package sim

type Fair struct {
	arrivals map[string][]int64
	tokenEMA map[string]float64
}

func (a *Fair) Admit(req *Request, state *RouterState) (bool, string) {
	now := state.Clock
	tenant := req.TenantID
	kept := a.arrivals[tenant][:0]
	for _, t := range a.arrivals[tenant] {
		if now-t <= 5_000_000 {
			kept = append(kept, t)
		}
	}
	kept = append(kept, now)
	a.arrivals[tenant] = kept
	inLen := float64(len(req.InputTokens))
	prev, seen := a.tokenEMA[tenant]
	if !seen {
		prev = inLen
	}
	a.tokenEMA[tenant] = 0.8*prev + 0.2*inLen
	totalQueue := 0
	for _, snap := range state.Snapshots {
		totalQueue += snap.QueueDepth
	}
	if n := len(state.Snapshots); n > 0 && float64(totalQueue)/float64(n) > 6 {
		if len(kept) > 4 && a.tokenEMA[tenant] > 900 {
			return false, "over"
		}
	}
	return true, ""
}
"""

SATURATION = """package sim

type WeightedScoring struct{}

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	best, bestScore := "", -1.0
	for _, snap := range state.Snapshots {
		load := float64(snap.EffectiveLoad())
		score := 1 - 0.15*load/(load+8.0)
		if score > bestScore {
			best, bestScore = snap.ID, score
		}
	}
	return NewRoutingDecision(best, "")
}
"""


def _docs(analyze_text, text: str) -> dict[str, str]:
    an = analyze_text(text)
    return {s.name: " ".join(s.doc.split()) for s in param_specs(an, None, False)}


def test_a_value_set_on_a_local_that_multiplies_the_score_is_a_factor_said_as_such(analyze_text):
    """p1: `adj = 0.1` under `snap.KVUtilization > 0.9`, then `scores[snap.ID] *= adj`, was `adjValue`, "the value in
    `snap.KVUtilization`": the number is the factor the score is multiplied by when the condition holds."""
    docs = _docs(analyze_text, SCORE)
    assert "adjValue" not in docs and "adjFactor" in docs, docs
    doc = docs["adjFactor"]
    assert "the value in" not in doc, doc
    assert "`scores[snap.ID] *= adj` multiplies `scores[snap.ID]` by it" in doc, doc
    assert "when `snap.KVUtilization > kvUtilizationThreshold` holds" in doc, doc


def test_a_number_divided_by_a_term_is_its_numerator_not_its_coefficient(analyze_text):
    """p1: `criticalBoost / (1 + ws.pressure(...))` was "the coefficient of `(1 + ws.pressure(...))`" and named
    `criticalBoostCoeff`: the code divides by that term, so the number is the numerator of the quotient."""
    docs = _docs(analyze_text, SCORE)
    assert "boostCoeff" not in docs and "boost" in docs, docs
    doc = docs["boost"]
    assert "coefficient" not in doc, doc
    assert "the numerator of `boost / (1 + float64(snap.QueueDepth))`" in doc, doc
    assert "divides it by `(1 + float64(snap.QueueDepth))`" in doc, doc


def test_a_moving_average_kept_in_a_receivers_map_through_a_local_copy_is_a_decay_and_a_sample_weight(
    analyze_text,
):
    """p2: `prev, seen := a.tokenEMA[tenant]; ...; a.tokenEMA[tenant] = 0.8*prev + 0.2*inLen` is a moving average
    kept per tenant across calls (the map is the receiver's), so its weights are tokenEMADecay and
    tokenEMASampleWeight, not prevCoeff and inLenCoeff."""
    docs = _docs(analyze_text, TENANT)
    assert not {"prevCoeff", "inLenCoeff"} & set(docs), docs
    assert "the weight the previous `a.tokenEMA[tenant]` keeps in its moving average" in docs["tokenEMADecay"]
    assert "the new sample `inLen`" in docs["tokenEMASampleWeight"], docs


def test_a_threshold_on_a_sum_over_the_endpoint_count_is_on_the_mean(analyze_text):
    """p2: `float64(totalQueue)/float64(n) > 6` (n := len(state.Snapshots)) compares the MEAN queue per endpoint,
    not a total: `totalQueueThreshold` said the opposite."""
    docs = _docs(analyze_text, TENANT)
    assert "totalQueueThreshold" not in docs and "meanQueueThreshold" in docs, docs
    assert "the mean of `totalQueue` per endpoint" in docs["meanQueueThreshold"], docs


def test_a_threshold_on_the_length_of_a_local_is_on_a_count_of_what_it_holds(analyze_text):
    """p2: `len(kept) > 4`, where `kept` is stored back as `a.arrivals[tenant]`, is a count of the tenant's
    arrivals: `keptThreshold` said neither that it counts nor what."""
    docs = _docs(analyze_text, TENANT)
    assert "keptThreshold" not in docs and "arrivalsCountThreshold" in docs, docs
    doc = docs["arrivalsCountThreshold"]
    assert "the count `len(kept)`" in doc and "`kept` is stored as `a.arrivals[tenant]`" in doc, doc


def test_the_offset_of_a_saturation_is_its_half_saturation_point(analyze_text):
    """p3: the 8.0 of `load/(load+8.0)` was `loadThreshold`, though the report called it an offset: it is where the
    term reaches half its largest value, compared with nothing."""
    docs = _docs(analyze_text, SATURATION)
    assert "loadThreshold" not in docs and "loadHalfSaturation" in docs, docs
    doc = docs["loadHalfSaturation"]
    assert "the offset added to `load` in the saturation `loadCoeff*load/(load+loadHalfSaturation)`" in doc, doc
    assert "half its largest value when `load` equals it" in doc, doc


def test_the_behaviour_rows_keep_no_second_row_that_differs_from_another_only_by_rounding_noise():
    """Trial 3 (p2): TestBehaviour had "after 12 requests 0.2 s apart ... is rejected" and "after 12 requests
    0.200004 s apart ... is rejected": the spaced pair's rejected member was the search's near copy of the rejected
    row already asserted. The pair keeps the asserted row in its place (0.2 s against 2 s: the same time scale)."""
    from bot.golang import sequences

    labels = ["0:200000", "0:200004", "0:2000000", "0:alone"]
    admits = [False, False, True, True]
    spec = {"name": sequences.NAME, "labels": labels, "candidates": [{}] * len(labels)}
    result = {
        "name": sequences.NAME,
        "cases": [{"candidate": i, "default": {"admit": a}} for i, a in enumerate(admits)],
    }
    assert sequences.choose([spec], [result]) == [0, 3, 2]
    labels[1] = "0:300000"  # 0.3 s is another spacing, not noise: its pair row stays
    assert sequences.choose([spec], [result]) == [0, 3, 1, 2]
