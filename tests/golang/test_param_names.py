"""Parameter names that say a number's role where its subject would not (bot.golang.param_names): found by an llm-d
maintainer reading a01's plugin, whose window length was `clockThreshold` and whose moving-average weight was
`inFlightRequestsCoeff`."""

from __future__ import annotations

import re

import pytest

from bot.golang.param_names import DECAY, SAMPLE, param_name_problem, says_role
from bot.golang.params import param_specs
from tests.golang.conftest import CORPUS, translate_path

GATE = """package sim

type Gate struct {{
	typical     float64
	smooth      float64
	lastRefill  int64
	windowStart int64
}}

func (a *Gate) Admit(req *Request, state *RouterState) (bool, string) {{
	load := float64(state.Snapshots[0].QueueDepth)
	if state.Clock-a.windowStart > 2_000_000 {{
		{update}
		a.windowStart = state.Clock
	}}
	if state.Clock-a.lastRefill > 500_000 && load > 3 {{
		a.lastRefill = state.Clock
	}}
	if load > 1.5*a.typical {{
		return false, "shed"
	}}
	return true, ""
}}
"""


def _params(analyze_text, update: str) -> dict[str, object]:
    an = analyze_text(GATE.format(update=update))
    return {th.param: th for th in an.thresholds if th.param}


@pytest.mark.parametrize(
    "update", ["a.typical = 0.8*a.typical + 0.2*load", "a.typical = (load * 0.2) + (0.8 * a.typical)"]
)
def test_the_two_weights_of_a_moving_average_are_its_decay_and_sample_weight(analyze_text, update):
    params = _params(analyze_text, update)
    assert params["typicalDecay"].value == 0.8 and params["typicalDecay"].moving_average == ("a.typical", DECAY)
    assert params["typicalSampleWeight"].value == 0.2
    assert params["typicalSampleWeight"].moving_average == ("a.typical", SAMPLE)
    assert "loadCoeff" not in params  # the sample's signal is no name for its weight


@pytest.mark.parametrize(
    "update",
    [
        "a.typical = 0.6*a.typical + 0.3*load",  # weights that do not sum to 1: no average
        "a.smooth = 0.8*a.typical + 0.2*load",  # another variable than the one it weighs
        "a.typical = 0.8*a.typical - 0.2*load",
    ],
)
def test_a_weighted_sum_that_is_no_moving_average_keeps_its_coefficient_names(analyze_text, update):
    params = _params(analyze_text, update)
    assert not any(th.moving_average for th in params.values())
    assert "loadCoeff" in params and not any(p.endswith(("Decay", "SampleWeight")) for p in params)


def test_a_time_since_a_start_is_a_length_and_since_a_last_event_an_interval(analyze_text):
    params = _params(analyze_text, "a.typical = 0.8*a.typical + 0.2*load")
    assert params["windowLength"].value == 2_000_000 and params["refillInterval"].value == 500_000
    assert not {"clockThreshold", "windowStartThreshold", "lastRefillThreshold"} & set(params)
    assert params["loadThreshold"].value == 3  # an ordinary threshold keeps its subject's name


@pytest.mark.slow
def test_a01s_plugin_names_its_window_and_moving_average_and_says_to_tune_the_weights_together(dictionary):
    _, an, tr = translate_path(CORPUS / "a01_pattern_c_adaptive_admission.go", dictionary)
    params = {th.param for th in an.thresholds if th.param}
    assert {"windowLength", "typicalLoadDecay", "typicalLoadSampleWeight"} <= params
    assert not {"clockThreshold", "typicalLoadCoeff", "inFlightRequestsCoeff"} & params
    config = next(t for t in tr.files.values() if "type Parameters struct" in t)
    assert "// WindowLength is how long the window lasts: `clock-a.windowStart` is compared with it" in config
    doc = " ".join(line.strip().removeprefix("// ") for line in config.splitlines() if line.strip().startswith("//"))
    assert "TypicalLoadDecay is the weight the previous `a.typicalLoad` keeps in its moving average; with " in doc
    assert "TypicalLoadSampleWeight it sums to 1 in the evolved code, so change the two together" in doc
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    # One statement (wrap_statements breaks it after the `+` to fit 120 columns).
    assert "a.params.TypicalLoadDecay*a.typicalLoad + a.params.TypicalLoadSampleWeight*(" in " ".join(evolved.split())


PROMPT_LENGTH = """func (s *Sched) OrderQueue(requests []*Request, clock int64) {
	for _, r := range requests {
		long := 0.0
		if n := len(r.InputTokens); n > 2048 {
			long = 0.4
		}
		r.Priority -= long
	}
}
"""

MEAN_QUEUE = """type Gate struct {
	busyQueue int
}

func (a *Gate) Admit(req *Request, state *RouterState) (bool, string) {
	limit := 20.0
	totalQ := 0
	for _, snap := range state.Snapshots {
		totalQ += snap.QueueDepth
	}
	if n := len(state.Snapshots); n > 0 && totalQ/n > a.busyQueue {
		limit *= 0.5
	}
	if float64(state.Snapshots[0].InFlightRequests) > limit {
		return false, "busy"
	}
	return true, ""
}
"""


def test_a_number_on_a_one_letter_local_is_named_by_what_the_local_holds(analyze_text):
    """Found by a researcher (p4): `if n := len(r.InputTokens); n > 2048` gave `nThreshold`, a name that says nothing.
    The local is the prompt's length, so the threshold is named as `len(r.InputTokens) > 2048` would be."""
    an = analyze_text(PROMPT_LENGTH)
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert params.get("inputTokensThreshold") == 2048, params
    assert not any(p.startswith("n") and p[1:2].isupper() for p in params), params


def test_a_factor_under_a_guarded_condition_is_named_by_the_condition_not_its_guard(analyze_text):
    """Found by a researcher (p2): `if n := len(state.Snapshots); n > 0 && totalQ/n > a.busyQueue { limit *= 0.5 }`
    gave `nFactor`: the condition's subject was `n > 0`, the guard that keeps the division defined. The factor acts
    when the mean queue is above busyQueue, so it is named by what that comparison compares: the mean of `totalQ`
    per endpoint (`totalQFactor` named it as a total, found in trial 3; short_locals.measured)."""
    an = analyze_text(MEAN_QUEUE)
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert params.get("meanQFactor") == 0.5, params
    assert "nFactor" not in params and "snapshotsFactor" not in params, params


SET_LOCAL = """func (s *Sched) Route(req *Request, state *RouterState) RoutingDecision {
	best, bestScore := "", -1.0
	for _, snap := range state.Snapshots {
		{decl}
		if len(req.InputTokens) > 1024 {
			w = 0.8
		}
		score := 1.0
		{use}
		if score > bestScore {
			best, bestScore = snap.ID, score
		}
	}
	return NewRoutingDecision(best)
}
"""


@pytest.mark.parametrize(
    ("decl", "use", "name"),
    [
        # the term it weighs; set in both regimes of `len(req.InputTokens) > 1024`, each regime's weight is named for
        # it too (regime_weights.py: the 0.3 is `lowInputTokensQueueDepthWeight`)
        ("w := 0.3", "score -= w * float64(snap.QueueDepth)", "highInputTokensQueueDepthWeight"),
        ("var w float64", "score -= float64(snap.InFlightRequests) * w", "inFlightRequestsWeight"),
        ("w := 0.3", "score -= float64(snap.KVUtilization) / w", "kvUtilizationDivisor"),
        ("w := 4.0", "if float64(snap.QueueDepth) > w {\n\t\t\tscore = 0\n\t\t}", "queueDepthThreshold"),
        ("w := 0.3", "load := w + float64(snap.QueueDepth)\n\t\tscore -= load", "loadValue"),  # what it is added into
    ],
)
def test_a_number_set_on_a_one_letter_local_is_named_by_what_the_local_is_used_for(analyze_text, decl, use, name):
    """Found in the trial (p4): `var w float64; switch { case ...: w = 3 ... }; urgency[r.ID] = w + age` gave
    `wHighValue`, named by the letter. A number a local is *set* to says its role where the local is used: the term
    it multiplies (a weight), the value it divides, the value it is compared with, or what the sum it is in sets."""
    an = analyze_text(SET_LOCAL.replace("{decl}", decl).replace("{use}", use))
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert params.get(name) == 0.8, params
    assert not any(p.startswith("w") and p[1:2].isupper() for p in params), params


CLASS_URGENCY = """func (c Sched) OrderQueue(requests []*Request, clock int64) {
	urgency := make(map[string]float64, len(requests))
	for i := range len(requests) {
		r := requests[i]
		var w float64
		switch r.SLOClass {
		case "critical":
			w = 3
		case "standard":
			w = 2
		default:
			w = 1
		}
		age := float64(clock-r.ArrivalTime) / 2_000_000
		urgency[r.ID] = {use}
	}
}
"""


def test_per_class_values_of_a_one_letter_local_are_named_by_what_they_set(analyze_text):
    an = analyze_text(CLASS_URGENCY.replace("{use}", "w + age"))
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert {"criticalUrgencyValue": 3, "standardUrgencyValue": 2, "otherUrgencyValue": 1}.items() <= params.items()
    assert not any("W" in p or p.startswith("w") for p in params), params


def test_a_one_letter_local_whose_use_says_nothing_keeps_its_letter(analyze_text):
    """Passed to a helper, `w` says no more where it is used than its letter does: the name stays `criticalW...`."""
    an = analyze_text(
        CLASS_URGENCY.replace("{use}", "blend(w, age)") + "\nfunc blend(a, b float64) float64 {\n\treturn a + b\n}\n"
    )
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert {"criticalWValue": 3, "standardWValue": 2, "otherWValue": 1}.items() <= params.items(), params


@pytest.mark.parametrize(
    ("decl", "use", "name"),
    [
        ("\t\tw := 0.3\n", "\t\tscore -= w * float64(snap.QueueDepth)\n", "queueDepthWeight"),
        ("\t\tw := 0.3\n", "\t\tscore -= float64(snap.InFlightRequests) / w\n", "inFlightRequestsDivisor"),
    ],
)
def test_a_one_letter_local_set_once_and_lifted_is_named_by_its_use_too(analyze_text, decl, use, name):
    """`w := 0.3` set once and combined with a signal is lifted (literals.py), named after the local: it was `w`."""
    body = SET_LOCAL.replace("\t\t{decl}\n\t\tif len(req.InputTokens) > 1024 {\n\t\t\tw = 0.8\n\t\t}\n", decl)
    an = analyze_text(body.replace("\t\t{use}\n", use))
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert params.get(name) == 0.3 and "w" not in params, params


def test_a_weight_named_by_its_term_stays_apart_from_a_threshold_of_the_same_value_on_it(analyze_text):
    """Named by its use, `w = 0.8` shares its stem with `snap.QueueDepth > 0.8`: the same number on the same subject
    is one parameter, but a weight and a threshold are two numbers that happen to be equal."""
    use = "score -= w * float64(snap.QueueDepth)\n\t\tif float64(snap.QueueDepth) > 0.8 {\n\t\t\tscore = 0\n\t\t}"
    an = analyze_text(SET_LOCAL.replace("{decl}", "w := 0.3").replace("{use}", use))
    params = {th.param: th.value for th in an.thresholds if th.param}
    weights = {"highInputTokensQueueDepthWeight": 0.8, "lowInputTokensQueueDepthWeight": 0.3}  # regime_weights.py
    assert (weights | {"queueDepthThreshold": 0.8}).items() <= params.items(), params


BLEND = """type Router struct {{
	scorers []func(*Request, []RoutingSnapshot) map[string]float64
	weights []float64
}}

func (ws *Router) Route(req *Request, state *RouterState) RoutingDecision {{
	scores := make(map[string]float64, len(state.Snapshots))
	for i, scorer := range ws.scorers {{
		dim := scorer(req, state.Snapshots)
		for _, snap := range state.Snapshots {{
			scores[snap.ID] += dim[snap.ID] * ws.weights[i]
		}}
	}}
	for _, snap := range state.Snapshots {{
		adj := 1.0 - snap.KVUtilization
		{blend}
	}}
	best, bestScore := "", -1.0
	for _, snap := range state.Snapshots {{
		if scores[snap.ID] > bestScore {{
			best, bestScore = snap.ID, scores[snap.ID]
		}}
	}}
	return NewRoutingDecision(best)
}}
"""


@pytest.mark.parametrize(
    ("blend", "weights"),
    [
        ("scores[snap.ID] = 0.5*scores[snap.ID] + 0.5*adj", {"scoresBlendWeight": 0.5, "adjBlendWeight": 0.5}),
        ("scores[snap.ID] = 0.7*scores[snap.ID] + 0.3*adj", {"scoresBlendWeight": 0.7, "adjBlendWeight": 0.3}),
    ],
)
def test_a_per_request_map_entry_blended_with_a_term_is_a_blend_with_a_weight_on_each(analyze_text, blend, weights):
    """Found by a researcher (p2): `scores[snap.ID] = 0.5*scores[snap.ID] + 0.5*adj` blends the scorer composite with
    a per-class term in one call. It was read as a moving average named from the text `scores[snap.ID]`
    (`iD]SampleWeight`, a key no YAML reader expects), and the first 0.5 stayed an unlisted literal."""
    an = analyze_text(BLEND.format(blend=blend))
    params = {th.param: th for th in an.thresholds if th.param}
    assert {p: th.value for p, th in params.items() if p in weights} == weights, params
    assert not any(th.moving_average for th in params.values()), params
    assert not [f for f in an.findings if f.check == "translate.unlisted-literal"], an.findings
    assert all(re.fullmatch(r"[a-z][A-Za-z0-9]*", p) for p in params), params


def test_a_sum_to_one_update_of_a_local_is_a_blend_not_a_moving_average(analyze_text):
    """A local lives for one call: `typical = 0.8*typical + 0.2*load` weighs two terms once, it forgets nothing."""
    update = "typical := a.typical\n\t\ttypical = 0.8*typical + 0.2*load\n\t\ta.smooth = typical"
    params = _params(analyze_text, update)
    assert params["loadBlendWeight"].value == 0.2 and params["typicalBlendWeight"].value == 0.8, params
    assert not any(th.moving_average for th in params.values())


def test_every_parameter_name_is_checked_to_be_a_lower_camel_go_identifier():
    """The guard behind the names: whatever a name is built from, a key like `iD]SampleWeight` never reaches the
    EPP config; the translation stops on it instead (a translator bug, not the evolved program's)."""
    assert param_name_problem("adjBlendWeight", "AdjBlendWeight") is None
    assert param_name_problem("maxPriority", "MaxPriority") is None
    for name, fld in [
        ("iD]SampleWeight", "IDSampleWeight"),
        ("AdjBlendWeight", "AdjBlendWeight"),
        ("adj-weight", "AdjWeight"),
        ("2adj", "P2adj"),
        ("", "X"),
        ("adjWeight", "adjWeight"),
        ("adjWeight", "Adj]Weight"),
    ]:
        assert param_name_problem(name, fld), (name, fld)


def test_param_specs_refuses_a_parameter_whose_name_is_no_identifier(analyze_text):
    an = analyze_text(BLEND.format(blend="scores[snap.ID] = 0.5*scores[snap.ID] + 0.5*adj"))
    th = next(th for th in an.thresholds if th.param)
    th.param = "iD]SampleWeight"
    with pytest.raises(ValueError, match=r"iD\]SampleWeight"):
        param_specs(an, None, scheduling=False)


CLAMP = """func (c Sched) OrderQueue(requests []*Request, clock int64) {{
	priorityOf := func(r *Request) float64 {{
		waitedMs := float64(clock-r.ArrivalTime) / 1000.0
		p := 1.0 + waitedMs/500.0
		if r.SLOClass == "critical" {{
			p += 5
		}}
		{clamp}
		return p
	}}
	sort.SliceStable(requests, func(i, j int) bool {{
		return priorityOf(requests[i]) > priorityOf(requests[j])
	}})
}}
"""


@pytest.mark.parametrize(
    ("clamp", "name"),
    [
        ("if p > 200 {\n\t\t\tp = 200\n\t\t}", "maxPriority"),
        ("if p >= 200 {\n\t\t\tp = 200\n\t\t}", "maxPriority"),
        ("if 200 < p {\n\t\t\tp = 200\n\t\t}", "maxPriority"),
        ("if p < 2 {\n\t\t\tp = 2\n\t\t}", "minPriority"),
    ],
)
def test_a_number_a_local_is_compared_with_and_then_set_to_is_a_clamp(analyze_text, clamp, name):
    """Found by a researcher (p4): `if p > 200 { p = 200 }` was `pThreshold`: a cap named as a threshold, by a letter.
    Compared with a variable and then assigned to it in the branch, the number is the most (or least) the variable
    may be, named by what the local holds: `p` is what `priorityOf` returns."""
    an = analyze_text(CLAMP.format(clamp=clamp))
    params = {th.param: th for th in an.thresholds if th.param}
    assert name in params, params
    assert len(params[name].occurrences) == 2, params[name]  # the comparison and the assignment: one number
    assert not any(p.startswith("p") and p[1:2].isupper() for p in params), params


def test_a_branch_that_sets_the_variable_to_another_number_is_no_clamp(analyze_text):
    an = analyze_text(CLAMP.format(clamp="if p > 200 {\n\t\t\tp = 100\n\t\t}"))
    params = {th.param for th in an.thresholds if th.param}
    assert not {"maxPriority", "minPriority"} & params, params


def test_a_blends_weights_say_what_each_weighs_and_that_they_move_together(analyze_text):
    an = analyze_text(BLEND.format(blend="scores[snap.ID] = 0.5*scores[snap.ID] + 0.5*adj"))
    specs = {s.name: " ".join(s.doc.split()) for s in param_specs(an, None, scheduling=False)}
    doc = specs["scoresBlendWeight"]
    assert doc.startswith(
        "ScoresBlendWeight is the weight `scores[snap.ID]` gets in its blend with `adj`, which "
        "AdjBlendWeight weighs; the two sum to 1 in the evolved code"
    ), doc
    assert "The blend reads each endpoint's KV-cache utilization" in doc and "`scores[snap.ID]` is computed" not in doc


#: A scheduler choosing per-class numbers in each shape trials wrote (trial names: weightFor, classWeight).
PER_CLASS = """package sim

import "sort"

type InstanceScheduler interface {
	OrderQueue(requests []*Request, clock int64)
}

type ClassScheduler struct{}

{helper}

func (s ClassScheduler) OrderQueue(requests []*Request, clock int64) {
	// EVOLVE-BLOCK-START
	urgency := make(map[string]float64, len(requests))
	for i := range len(requests) {
		r := requests[i]
{body}
		urgency[r.ID] = {use} + float64(clock-r.ArrivalTime)/1000
	}
	sort.Slice(requests, func(i, j int) bool {
		return urgency[requests[i].ID] > urgency[requests[j].ID]
	})
	// EVOLVE-BLOCK-END
}
"""

_SWITCH = """switch c {
	case "critical":
		return 3
	case "sheddable":
		return 0.5
	default:
		return 2
	}"""

_IF_RETURN = """func boostFor(c string) float64 {
	if c == "critical" {
		return 1.5
	} else if c == "sheddable" {
		return 0.25
	}
	return 0.75
}"""

_IF_ASSIGN = """		var longPenalty float64
		if r.SLOClass == "critical" {
			longPenalty = 0.1
		} else if r.SLOClass == "standard" {
			longPenalty = 0.2
		} else {
			longPenalty = 0.4
		}"""

#: Role words a name may end in; "Value" after one of them adds nothing (criticalWeightValue).
_ROLE_WORDS = (
    "Weight|Threshold|Limit|Cap|Floor|Bonus|Penalty|Factor|Coeff|Rate|Budget|Capacity|Share|Priority|Boost|"
    "Timeout|Deadline|Base"
)


@pytest.mark.parametrize(
    ("helper", "body", "use", "names"),
    [
        (  # a helper's switch (trial: weightFor gave criticalWeightValue)
            f"func weightFor(c string) float64 {{\n\t{_SWITCH}\n}}",
            "",
            "weightFor(r.SLOClass)",
            {"criticalWeight": 3, "sheddableWeight": 0.5, "otherWeight": 2},
        ),
        (  # a helper's if/else chain, the fallback after it
            _IF_RETURN,
            "",
            "boostFor(r.SLOClass)",
            {"criticalBoost": 1.5, "sheddableBoost": 0.25, "otherBoost": 0.75},
        ),
        (  # an if/else chain assigning a local
            "",
            _IF_ASSIGN,
            "-longPenalty * float64(len(r.InputTokens))",
            {"criticalLongPenalty": 0.1, "standardLongPenalty": 0.2, "otherLongPenalty": 0.4},
        ),
        (  # a method of the scheduler
            f"func (s ClassScheduler) capacityOf(c string) float64 {{\n\t{_SWITCH}\n}}",
            "",
            "s.capacityOf(r.SLOClass)",
            {"criticalCapacity": 3, "sheddableCapacity": 0.5, "otherCapacity": 2},
        ),
        (  # a closure (trial: the scheduler's classWeight gave criticalClassWeightValue)
            "",
            f"\t\tclassWeight := func(c string) float64 {{\n\t\t{_SWITCH}\n\t\t}}",
            "classWeight(r.SLOClass)",
            {"criticalClassWeight": 3, "sheddableClassWeight": 0.5, "otherClassWeight": 2},
        ),
        (  # a stem that says no role keeps "Value": nothing better exists
            f"func urgencyFor(c string) float64 {{\n\t{_SWITCH}\n}}",
            "",
            "urgencyFor(r.SLOClass)",
            {"criticalUrgencyValue": 3, "sheddableUrgencyValue": 0.5, "otherUrgencyValue": 2},
        ),
    ],
)
def test_a_per_class_parameter_whose_stem_says_its_role_gets_no_value_suffix(analyze_text, helper, body, use, names):
    """Trials named per-class numbers by shape: ``weightFor`` gave ``criticalWeightValue`` and a scheduler's
    ``classWeight`` ``criticalClassWeightValue``, while a tuple gave ``criticalKVWeight``. "Value" after a word
    that already says the role adds nothing; it stays only on a stem that says none (``criticalUrgencyValue``)."""
    an = analyze_text(PER_CLASS.replace("{helper}", helper).replace("{body}", body).replace("{use}", use))
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert names.items() <= params.items(), params
    assert not [p for p in params if re.search(rf"(?:{_ROLE_WORDS})Value\d*$", p)], params
    for th in an.thresholds:
        if th.param:
            assert param_name_problem(th.param, th.field) is None, th.param


@pytest.mark.parametrize(
    ("stem", "says"),
    [
        ("criticalClassWeight", True),
        ("criticalBase", True),
        ("timeoutMs", True),  # a unit after a role word
        ("otherRefillPerSec", True),  # a rate
        ("maxTokens", True),
        ("criticalUrgency", False),
        ("criticalW", False),  # a letter says its role only by initial
        ("criticalKV", False),
        ("inputTokens", False),
        ("waitMs", False),
    ],
)
def test_a_stem_says_its_role_by_its_last_word_a_unit_after_it_or_per(stem, says):
    assert says_role(stem) is says
