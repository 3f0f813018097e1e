"""The candidate search that picks an admitter's unit tests reaches every parameter that can decide in llm-d.

a01 (corpus) sheds sheddable requests on a learned load ratio: its parameters decide only at the edge of
that decision, through pool-wide aggregates (an average KV past 0.85 needs every pod there), with a
partner comparison holding (``inputLen > 4096 && queuePerInstance > 8``), after a window closes (the
moving average's coefficients) or for a tenant far above the average. Only the limits of the ``batch``
case cannot decide: llm-d never sends that class, and the report says so.
"""

from __future__ import annotations

import re

import pytest

from bot.golang import dead_branches, probe_inputs, probes
from bot.golang.translate import CHECK_UNTESTED

from .conftest import CORPUS, EXAMPLE, translate_path

A01 = CORPUS / "a01_pattern_c_adaptive_admission.go"
G02 = CORPUS / "g02_unreachable_slo_classes.go"


def _untested(tr) -> dict[str, str]:
    return {f.message.split("`")[1]: f.message for f in tr.findings if f.check == CHECK_UNTESTED}


@pytest.mark.slow
def test_every_a01_parameter_llmd_can_reach_gets_a_generated_test(dictionary):
    _, _, tr = translate_path(A01, dictionary)
    untested = _untested(tr)
    assert sorted(untested) == ["batchLimitEvolved", "batchLimitFactor"], sorted(untested)
    tested = {t.split("=")[0].split(" is live")[0] for t in tr.tests}
    for param in ("typicalLoadSampleWeight", "typicalLoadDecay", "shedLimitFactor", "minFreeKVThreshold"):
        assert param in tested, tr.tests
    for param in ("maxKVUtilStep", "inputLenThreshold", "queuePerInstanceThreshold", "inputLenStep"):
        assert param in tested, tr.tests
    # The two left say why: the batch case, which llm-d's priority never yields (so they are constants).
    for param in ("batchLimitEvolved", "batchLimitFactor"):
        assert 'case "batch"' in untested[param] and "never receives" in untested[param], untested[param]
    # A test found at the edge of the decision writes out the load the ramp added, and the spaced warm-ups.
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    assert re.search(r"spacing:\s+10200000,", test)


@pytest.mark.slow
def test_a_branch_on_a_class_llmd_never_sends_is_named_as_the_reason(dictionary):
    _, _, tr = translate_path(G02, dictionary)
    untested = _untested(tr)
    assert sorted(untested) == ["perInstanceHighThreshold", "perInstanceLowThreshold"]
    assert 'req.SLOClass == "batch" && perInstance > 2' in untested["perInstanceLowThreshold"]
    assert 'req.SLOClass == ""' in untested["perInstanceHighThreshold"]
    # Both are constants of evolved.go, each with the class it waits for, and no EndpointPickerConfig knob.
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    assert '// perInstanceLowThreshold acts only for SLO class "batch", which llm-d never sends' in evolved
    assert "// perInstanceHighThreshold acts only for the empty SLO class, which llm-d never sends" in evolved
    assert "perInstance > perInstanceHighThreshold {" in evolved and "perInstance" not in tr.epp_config


def test_a_factor_on_a_limit_only_a_dead_case_compares_is_dead_too(analyze_text):
    """Both are constants of the carried code, not parameters (dead_branches.demote); the limit's constant is not
    named like the local it initialises (`batchLimit := batchLimitEvolved`)."""
    an = analyze_text((CORPUS / "a01_pattern_c_adaptive_admission.go").read_text(encoding="utf-8"))
    assert dead_branches.unreachable_params(an) == {}  # no parameter is left in the batch case
    dead = {th.constant: th.dead_branch for th in an.thresholds if th.constant}
    assert dead == {"batchLimitEvolved": (167, 'case "batch"'), "batchLimitFactor": (167, 'case "batch"')}


def test_a_threshold_in_a_compound_condition_also_varies_its_partners_signals(analyze_text):
    an = analyze_text(A01.read_text(encoding="utf-8"))
    by = {th.param: th for th in an.thresholds}
    # inputLen > 4096 decides only when queuePerInstance > 8 holds: its candidates take queues either side of 8.
    assert probe_inputs.anchors(an, by["inputLenThreshold"], "admission") == {"queue": [0, 7, 9, 72]}
    # The step added under that condition takes prompt lengths either side of 4096, not around its own 0.1.
    step = probe_inputs.anchors(an, by["inputLenStep"], "admission")
    assert step["tokens"] == [0, 512, 4112] and step["queue"] == [0, 7, 9, 72]


def test_warmups_spread_past_a_learning_window_and_skew_one_tenant(analyze_text):
    an = analyze_text(A01.read_text(encoding="utf-8"))
    assert probe_inputs.warmup_spacings(an) == (probe_inputs.SPACING, 10_000_000 + probe_inputs.SPACING)
    warm = probe_inputs._warmups(4)
    assert [w["FairnessID"] for w in warm] == ["tenant-b", "tenant-a", "tenant-a", "tenant-a"]


def test_the_stride_through_an_admitters_grid_visits_every_inner_value():
    # 12 inner combinations (class x warm-ups): a step of 18 would only ever see two of them.
    stride = probe_inputs._stride(18, [9, 3, 4], coprime=True)
    assert stride >= 18 and {(i * stride) % 12 for i in range(12)} == set(range(12))
    assert probe_inputs._stride(18, [9, 3, 4], coprime=False) == 18  # a scorer's grid keeps its step


def test_a_ramped_case_is_the_state_the_harness_decided():
    state = probe_inputs.make_state(
        [
            probe_inputs.make_endpoint("pod-a", probe_inputs.make_metrics(running=2)),
            probe_inputs.make_endpoint("pod-b", None),
        ],
        probe_inputs.make_request(),
    )
    out = probes.ramped(state, "running", 5)
    assert [e["metrics"] and e["metrics"]["RunningRequestsSize"] for e in out["llmd"]["endpoints"]] == [7, None]
    assert state["llmd"]["endpoints"][0]["metrics"]["RunningRequestsSize"] == 2  # the candidate is left as it was


G09 = CORPUS / "g09_class_weight_table.py"


def test_a_threshold_behind_a_guard_on_a_local_set_by_class_varies_the_priority(analyze_text):
    """newprog2 7: g09's `loadW` is set in a `switch req.SLOClass`, then `if loadW > 0.5 && snap.QueueDepth > 6`.
    The threshold reads only QueueDepth, so every candidate had priority 0 (loadW 0.5, the branch shut) and the
    IMPORTANT queueDepthThreshold, the one gate 1 asks to re-calibrate, got no test. Its candidates now take every
    priority; a threshold under no class-derived guard keeps the routing grid."""
    an = analyze_text(G09.read_text(encoding="utf-8"), G09.name)
    by = {th.param: th for th in an.thresholds}
    assert probe_inputs.class_guarded(an, by["queueDepthThreshold"])
    assert not probe_inputs.class_guarded(an, by["inFlightRequestsDivisor"])
    specs, _ = probes.specs(an, {p: th.value for p, th in by.items()}, "routing")
    priorities = {s["name"]: {c["llmd"]["request"]["Priority"] for c in s["candidates"]} for s in specs}
    assert priorities["queueDepthThreshold"] == {1, 0, -1} and priorities["inFlightRequestsDivisor"] == {0}
    # An `if` on the class sets the local just as well.
    body = G09.read_text(encoding="utf-8").replace(
        "switch req.SLOClass {", 'if req.SLOClass == "critical" {\n\t\tloadW = 0.9\n\t}\n\tswitch "x" {', 1
    )
    an = analyze_text(body, G09.name)
    assert probe_inputs.class_guarded(an, next(th for th in an.thresholds if th.param == "queueDepthThreshold"))


@pytest.mark.slow
def test_g09s_recalibrated_threshold_gets_a_test_on_both_sides(dictionary):
    _, _, tr = translate_path(G09, dictionary)
    assert "queueDepthThreshold" not in _untested(tr)
    sides = [t for t in tr.tests if t.startswith("queueDepthThreshold=6:")]
    assert len(sides) == 2 and any("is above it, so the branch applies" in t for t in sides), tr.tests


@pytest.mark.slow
def test_g09s_penalty_gets_a_live_test_against_a_busier_rival(dictionary):
    """`if loadW > 0.5 && snap.QueueDepth > 6 { scores -= loadWPenalty }` makes pod-a the lowest-scored endpoint
    whenever the grid opens the branch (critical, a long queue) beside an idle or lightly loaded pod-b: the plugin
    rescales the lowest score to 0 however large the penalty, so doubling it never moved pod-a's score and
    loadWPenalty had no test. A pod-b carrying more load (running, so its queue stays empty) keeps pod-a off the
    bottom, and the penalty decides."""
    _, _, tr = translate_path(G09, dictionary)
    assert "loadWPenalty" not in _untested(tr)
    assert any(t.startswith("loadWPenalty is live:") for t in tr.tests), tr.tests


def test_a_scorers_live_parameter_also_meets_a_busier_rival(analyze_text):
    """The rivals come after the grid (the harness keeps the first candidate that decides, so a test the grid found
    stays), hold pod-a and the request as the grid had them, give pod-b pod-a's load plus a few running requests
    and no queue, are capped, and are the same on every run. A threshold's candidates get none."""
    an = analyze_text(G09.read_text(encoding="utf-8"), G09.name)
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, _ = probes.specs(an, defaults, "routing")
    by = {s["name"]: s["candidates"] for s in specs}
    penalty = by["loadWPenalty"]
    grid = probe_inputs.candidates(
        next(th for th in an.thresholds if th.param == "loadWPenalty"), "routing", ("priority",)
    )
    assert penalty[: len(grid)] == grid
    added = penalty[len(grid) :]
    assert 0 < len(added) <= probe_inputs.MAX_RIVALS
    pods = [{e["name"]: e["metrics"] for e in c["llmd"]["endpoints"]} for c in added]
    assert all(p["pod-b"]["WaitingQueueSize"] == 0 for p in pods)
    extra = {
        p["pod-b"]["RunningRequestsSize"] - p["pod-a"]["WaitingQueueSize"] - p["pod-a"]["RunningRequestsSize"]
        for p in pods
    }
    assert extra == set(probe_inputs.RIVAL_EXTRA)
    # The one the branch needs: a critical request, pod-a's queue past 6, pod-b busier but with no queue.
    assert any(
        c["llmd"]["request"]["Priority"] == 1 and p["pod-a"]["WaitingQueueSize"] > 6
        for c, p in zip(added, pods, strict=True)
    )
    assert len(by["queueDepthThreshold"]) == len(
        probe_inputs.candidates(
            next(th for th in an.thresholds if th.param == "queueDepthThreshold"), "routing", ("priority",)
        )
    )
    assert probes.specs(an, defaults, "routing")[0] == specs


EXAMPLE_SCORER = "evolved-adaptive-scorer"


@pytest.mark.slow
def test_the_bundled_examples_load_factor_gets_a_live_test(dictionary):
    """`if load > loadHighThreshold { adj *= loadFactor }` scales any busy pod-a's score, but the live probe doubled
    0.4 to 0.8, and Validate() refuses that (the taper `loadCoeff*(loadHighThreshold-loadLowThreshold) <=
    1-loadFactor`: 0.3 > 0.2): no plugin was built with the moved value, so no candidate could decide and loadFactor
    was called untested. The move is now one Validate() accepts (``valid_move``), and the test row names it."""
    _, _, tr = translate_path(EXAMPLE, dictionary, EXAMPLE_SCORER)
    assert "loadFactor" not in _untested(tr)
    [row] = [t for t in tr.tests if t.startswith("loadFactor is live:")]
    assert row.startswith("loadFactor is live: moved to 0.6,"), row  # 0.8 refused, brought halfway back
    assert "doubled to 0.8" not in " ".join(tr.tests)


def test_a_live_probe_moves_its_parameter_only_where_validate_accepts(dictionary):
    """The harness builds the plugin with the probe's ``moved`` value, so it is one the plugin's checks accept:
    doubled when Validate() allows it, brought back towards the evolved value when a relation refuses the double,
    and no probe at all (with the reason) when no move is accepted."""
    from bot.golang.analyze import analyze
    from bot.golang.params import param_specs
    from bot.golang.source import load_evolved_source

    an = analyze(load_evolved_source(EXAMPLE), dictionary)
    params = param_specs(an, None, False)
    defaults = {p.name: p.json_default for p in params}
    checks = {p.name: p.checks for p in params}
    live = {
        s["param"]: s["moved"] for s in probes.specs(an, defaults, "routing", checks=checks)[0] if s["role"] == "live"
    }
    assert live["loadFactor"] == pytest.approx(0.6)  # 0.8 breaks the taper relation
    assert live["deltaCoeff"] == pytest.approx(2 * defaults["deltaCoeff"])  # nothing refuses the double
    # A parameter no accepted value moves is not probed, and the reason says Validate() is why.
    stuck = {**checks, "loadFactor": [*checks["loadFactor"], {"cond": "p.LoadFactor != 0.4", "message": "x", "bad": 1}]}
    out, skipped = probes.specs(an, defaults, "routing", checks=stuck)
    assert "loadFactor" not in {s["param"] for s in out}
    assert any(s.startswith("`loadFactor`:") and "Validate()" in s for s in skipped), skipped


@pytest.mark.parametrize(
    ("op", "side", "words"),
    [
        ("<=", "past", "the compared value 2200000 is at or below it, so the branch applies"),
        ("<=", "not-past", "the compared value 2200000 is above it, so the branch does not apply"),
        (">", "past", "the compared value 2200000 is above it, so the branch applies"),
        (">", "not-past", "the compared value 2200000 is at or below it, so the branch does not apply"),
        (">=", "past", "the compared value 2200000 is at or above it, so the branch applies"),
        ("<", "not-past", "the compared value 2200000 is at or above it, so the branch does not apply"),
    ],
)
def test_a_threshold_cases_name_follows_its_comparisons_direction(op, side, words):
    """Trial 3 (p2): `now-t <= windowUs` with t 2.2 s ago was described as "the compared value 2200000 is past it,
    so the branch applies": 2.2 s is inside the 5 s window. "Past" read every comparison as `>`; the harness's
    side says whether the comparison holds, so the words follow its operator."""
    spec = {"name": "windowLength", "param": "windowLength", "value": 5_000_000, "integer": True, "op": op}
    spec |= {"role": "threshold", "candidates": [{"endpoints": []}]}
    case = {"side": side, "x": 2_200_000, "moved": 2_199_999, "candidate": 0, "movedOut": {"admit": True}}
    an = type("An", (), {"thresholds": []})()
    (got,) = probes.select(an, [spec], [{"name": "windowLength", "cases": [case]}], "admission")
    assert got.name.startswith(f"windowLength=5000000: {words}"), got.name
