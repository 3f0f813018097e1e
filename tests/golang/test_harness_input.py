"""The differential harness's input: compact history events stand for exactly the full views.

A stateful program's history requests meet the state's own instances, so ``harness_views.views``
sends each as its request, clock and prefix-match total; the harness completes it from the state.
These tests hold both completions (``expand_event`` here, ``expand`` in the generated Go) to the
full views the harness was fed before, so the saving cannot change a decision.
"""

from __future__ import annotations

import json

import pytest

from bot.golang import harness_build, harness_run
from bot.golang import harness_views as hv
from bot.golang import harness_world as world
from bot.golang.analyze import analyze
from bot.golang.source import load_evolved_source, parse_evolved_source

from .conftest import CORPUS, FIXTURES


def _mapping_sets() -> list[frozenset[str]]:
    return [frozenset(), *(frozenset({m}) for m in world.MAPPINGS), frozenset(world.MAPPINGS)]


@pytest.mark.parametrize("kind", ["routing", "admission"])
def test_a_compact_history_event_expands_to_the_full_views_under_every_mapping(kind):
    reads = frozenset({"QueueDepth", "KVUtilization", "InFlightRequests", "CacheHitRate", "InputTokens"})
    spec = world.Spec(kind=kind, reads=reads, thresholds=[world.Threshold("QueueDepth", 5)], stateful=True)
    states = world.sample(spec, 80, seed=11)
    events = 0
    for off in _mapping_sets():
        for state in states:
            view = json.loads(json.dumps(hv.views(state, off)))  # as the harness reads it
            assert len(view["history"]) == len(state.history)
            for event, (req, clock) in zip(view["history"], state.history, strict=True):
                full = {"blis": hv._blis_view(state, req, clock, off), "llmd": hv._llmd_view(state, req, off)}
                assert hv.expand_event(view, event) == json.loads(json.dumps(full))
                assert "snapshots" not in event["blis"] and "endpoints" not in event["llmd"]
                events += 1
    assert events > 100  # the sample really has histories to compact


@pytest.mark.parametrize("kind", ["routing", "admission"])
def test_the_history_is_the_as_deployed_one_exactly_when_no_history_mapping_is_off(kind):
    """``with_states`` hands a run's views the as-deployed histories unless a mapping in ``HISTORY_MAPPINGS`` is off;
    a mapping that changes a history event but is not listed there would feed the harness a wrong history."""
    reads = frozenset({"QueueDepth", "KVUtilization", "InFlightRequests", "CacheHitRate", "InputTokens", "SLOClass"})
    spec = world.Spec(kind=kind, reads=reads, thresholds=[world.Threshold("QueueDepth", 5)], stateful=True)
    states = world.sample(spec, 80, seed=13)
    base = [hv.views(s)["history"] for s in states]
    assert sum(map(len, base)) > 100
    for m in world.MAPPINGS:
        changed = any(hv.views(s, frozenset({m}))["history"] != b for s, b in zip(states, base, strict=True))
        assert changed is (m in hv.HISTORY_MAPPINGS), m
    plan = {"spec": spec.to_json(), "states": 80, "seed": 13, "runs": [{"name": m, "off": [m]} for m in world.MAPPINGS]}
    runs = harness_build.with_states({"sample": plan})["runs"]
    for run in runs:  # a history the as-deployed run's is sent once (``historyLike``)
        sent = [b if v.get("historyLike") else v["history"] for v, b in zip(run["states"], base, strict=True)]
        assert sent == [hv.views(s, frozenset({run["name"]}))["history"] for s in states], run["name"]


def test_a_state_is_marked_same_for_blis_exactly_when_blis_is_handed_the_as_deployed_inputs():
    """The harness reuses BLIS's as-deployed decision for a state marked ``sameBlis``; the mark must
    not be set where switching a mapping off changed anything BLIS reads."""
    reads = frozenset({"QueueDepth", "KVUtilization", "InFlightRequests", "CacheHitRate", "InputTokens"})
    spec = world.Spec(kind="routing", reads=reads, thresholds=[world.Threshold("QueueDepth", 5)], stateful=True)
    states = world.sample(spec, 60, seed=5)
    base = [hv.views(s) for s in states]
    marked = unmarked = 0
    for m in world.MAPPINGS:
        for state, b in zip(states, base, strict=True):
            view = hv.views(state, frozenset({m}))
            out = harness_build._mark_same_blis(view, b)
            blis_same = view["blis"] == b["blis"] and [e["blis"] for e in view["history"]] == [
                e["blis"] for e in b["history"]
            ]
            assert out.get("sameBlis", False) is blis_same
            marked += blis_same
            unmarked += not blis_same
    assert marked and unmarked  # both cases occur in the sample


def test_an_event_written_out_in_full_is_read_as_it_is():
    event = {"blis": {"clock": 1, "request": {}, "snapshots": []}, "llmd": {"request": {}, "endpoints": []}}
    assert hv.expand_event({"blis": {}, "llmd": {}}, event) is event


class _Capture:
    def run(self, request):
        self.request = request
        from bot.execution import DirectExecutor

        return DirectExecutor().run(request)


@pytest.mark.slow
def test_the_harness_decides_the_same_on_compact_and_on_written_out_histories(dictionary):
    """The Go side's expansion: the same decisions and probe results as from the full views."""
    from bot.golang.translate import translate

    # Stateful, and its decisions depend on what the history's requests met: without the expansion
    # (or with a wrong one) its answers differ from those on the written-out histories.
    path = CORPUS / "a01_pattern_c_adaptive_admission.go"
    src = load_evolved_source(path)
    an = analyze(src, dictionary)
    capture = _Capture()
    translate(src, an, dictionary, plugin_type="t-a01", executor=capture, states=200)
    request = capture.request
    inp = harness_build.with_states(request.args["input"])
    written_out = json.loads(json.dumps(inp))
    states = [s for run in written_out["runs"] for s in run["states"]]
    candidates = [s for probe in written_out["probes"] for s in probe.get("candidates", [])]
    candidates += [s for shared in written_out.get("candidateSets", []) for s in shared]
    for state in states + candidates:
        state["history"] = [hv.expand_event(state, e) for e in state["history"]]
        # and BLIS decides every state afresh: reusing its as-deployed decision must change nothing
        state.pop("sameBlis", None)
    assert sum(len(s["history"]) for s in states) > 1000
    assert sum(1 for s in states if s.get("sameBlis")) == 0
    assert any(s.get("sameBlis") for run in inp["runs"] for s in run["states"])
    binary, log = harness_run.build(request.files)
    assert binary is not None, log
    compact, err1 = harness_run.run(binary, inp)
    full, err2 = harness_run.run(binary, written_out)
    assert compact is not None and full is not None, err1 + err2
    assert compact == full
    assert len(json.dumps(inp)) * 2 < len(json.dumps(written_out))


@pytest.mark.slow
def test_a_stateful_plugin_decides_each_state_as_if_it_were_the_first(dictionary):
    """BLIS's side replays a state's own history on a new policy; the plugin's side must too. Were one
    plugin instance kept across states, the histories of all earlier states would pile up in it and a
    state's decision would depend on the order the states come in (a03's agreement read 0.78, not 0.92)."""
    from bot.golang.translate import translate

    src = load_evolved_source(CORPUS / "a03_openevolve_tenant_fair_share.py")
    an = analyze(src, dictionary)
    capture = _Capture()
    tr = translate(src, an, dictionary, plugin_type="t-a03", executor=capture, states=150)
    assert tr.summary.fidelity is not None and tr.summary.fidelity.measured
    inp = harness_build.with_states(capture.request.args["input"])
    as_deployed = next(r for r in inp["runs"] if r["name"] == "as-deployed")
    reversed_inp = {**inp, "runs": [{**as_deployed, "states": as_deployed["states"][::-1]}], "probes": []}
    binary, log = harness_run.build(capture.request.files)
    assert binary is not None, log
    forward, err1 = harness_run.run(binary, {**inp, "runs": [as_deployed], "probes": []})
    backward, err2 = harness_run.run(binary, reversed_inp)
    assert forward is not None and backward is not None, err1 + err2
    decisions = [r["llmd"] for r in forward["runs"][0]["results"]]
    assert decisions == [r["llmd"] for r in backward["runs"][0]["results"]][::-1]
    assert len({json.dumps(d, sort_keys=True) for d in decisions}) > 1  # the decisions do vary by state


def _spread(text: str) -> str:
    """The session router with a second piece of state: a penalty on the instances it has routed to, so its
    decision on a state depends on what its history routed there."""
    text = text.replace(
        "\tsessionHome map[string]string\n}", "\tsessionHome map[string]string\n\trouted      map[string]int\n}"
    )
    text = text.replace(
        "\t\tws.sessionHome = make(map[string]string)\n\t}\n",
        "\t\tws.sessionHome = make(map[string]string)\n\t}\n\tif ws.routed == nil {\n\t\tws.routed = make(map[string]int)\n\t}\n",
    )
    text = text.replace(
        "\t\t// Session affinity", "\t\tscores[snap.ID] -= 0.05 * float64(ws.routed[snap.ID])\n\t\t// Session affinity"
    )
    return text.replace(
        "\t\tws.sessionHome[req.SessionID] = snapshots[bestIdx].ID\n\t}\n",
        "\t\tws.sessionHome[req.SessionID] = snapshots[bestIdx].ID\n\t}\n\tws.routed[snapshots[bestIdx].ID]++\n",
    )


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["session", "session-and-spread"])
def test_a_stateful_router_replays_its_history_on_both_sides_with_the_runs_bypass(dictionary, variant):
    """Found by a new user: BLIS's side routed each state on a new policy without its history while the plugin
    replayed it, and the plugin replayed it with no bypass, so a mapping switched off still acted on the
    history. A session router's bonus then counted as a disagreement on the plugin's side only, blamed on
    CacheHitRate or on score composition (17 survived every mapping switched off). With the history routed on
    both sides, and a switched-off mapping off for it too, switching every mapping off leaves no difference."""
    from bot.golang.translate import translate

    text = (FIXTURES / "routing_session_affinity.go").read_text()
    if variant == "session-and-spread":
        text = _spread(text)
        assert text.count("ws.routed") == 4
    src = parse_evolved_source(text, f"{variant}.go")
    tr = translate(src, analyze(src, dictionary), dictionary, plugin_type=f"t-{variant}", states=400)
    f = tr.summary.fidelity
    assert f is not None and f.measured and f.errors == 0, f
    assert f.agreement_all_off == 1.0 and f.unattributed == 0, f
    assert "survive every mapping switched off" not in tr.report_markdown
