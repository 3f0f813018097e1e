"""Attribution of disagreements (bot.golang.differential), on hand-written harness answers: pure."""

from __future__ import annotations

from bot.golang import differential
from bot.golang.report import fidelity_section


def _state(i: int) -> dict:
    return {"blis": {"request": {"ID": f"r{i}", "InputTokens": 10}, "snapshots": []}, "llmd": {"endpoints": []}}


def _run(name: str, agree: list[bool]) -> dict:
    return {"name": name, "results": [{"blis": {"admit": True}, "llmd": {"admit": a}} for a in agree]}


def _fidelity():
    inp = {"kind": "admission", "runs": [{"name": differential.AS_DEPLOYED, "states": [_state(i) for i in range(4)]}]}
    out = {
        "runs": [
            _run(differential.AS_DEPLOYED, [True, False, False, True]),
            _run("a", [True, True, True, False]),  # explains r1 and r2, breaks r3
            _run("b", [True, True, False, True]),  # explains r1 as well
            _run(differential.ALL_OFF, [True, True, True, True]),
        ]
    }
    meaning = {"a": {"title": "mapping a", "why": "a differs"}, "b": {"title": "mapping b", "why": "b differs"}}
    return differential.summarize(inp, out, floor=0.99, all_high=True, seed=1, mappings=meaning)


def test_a_mapping_that_also_breaks_states_says_so():
    f = _fidelity()
    a, b = f.causes
    assert (a.mapping, a.states, a.breaks, a.agreement_without) == ("a", 2, 1, 0.75)
    assert (b.mapping, b.states, b.breaks, b.agreement_without) == ("b", 1, 0, 0.75)
    assert f.agreement == 0.5 and f.overlapping == 1


def test_each_example_state_is_shown_under_one_cause_only():
    a, b = _fidelity().causes
    assert [e.split(" ")[1] for e in a.examples] == ["r1", "r2"]
    assert b.examples == []  # r1 is a's example already


def test_the_report_explains_overlaps_and_broken_states():
    text = fidelity_section(_fidelity())
    assert "| Disagreements it explains | Agreements it breaks | Agreement without it |" in text
    assert "| `a` (mapping a) | 2 | 1 | 75.0% |" in text
    assert "1 disagreement(s) are explained by more than one mapping on its own" in text


def _snapshot_state() -> dict:
    snap = {"ID": "pod-a", "QueueDepth": 1, "BatchSize": 2, "InFlightRequests": 3, "KVUtilization": 0.5}
    ep = {"metrics": {"WaitingQueueSize": 1, "RunningRequestsSize": 2}, "prefix": {"match": 2, "total": 6}}
    return {"blis": {"request": {"ID": "r0", "InputTokens": 10}, "snapshots": [snap]}, "llmd": {"endpoints": [ep]}}


def test_an_admitters_example_states_and_fidelity_sentence_use_no_routing_words():
    # found by a new user: an admitter's example states listed "prefix 2/6" per pod (it never reads them) and the
    # fidelity sentence named "the picker's ties" (an admitter has no picker).
    admit = differential.describe("admission", _snapshot_state(), {"blis": {"admit": True}, "llmd": {"admit": False}})
    assert "prefix" not in admit and "BLIS admits, llm-d rejects" in admit
    route = differential.describe("routing", _snapshot_state(), {"blis": {"target": "pod-a"}, "llmd": {"best": []}})
    assert "prefix 2/6" in route
    assert "picker's ties" not in fidelity_section(_fidelity())
    assert "the admission path's signals" in fidelity_section(_fidelity())


def _pick(blis_best: list[str], llmd_best: list[str]) -> dict:
    scores = {name: (1.0 if name in blis_best else 0.0) for name in ("pod-a", "pod-b", "pod-c")}
    blis = {"target": blis_best[0], "scores": scores, "randomTies": True}
    return {"blis": blis, "llmd": {"best": llmd_best}}


def test_tied_endpoints_that_both_sides_share_count_as_deciding_alike():
    """Three empty queues on both sides: the same choice, though a coin picks among them (it was 1/3)."""
    three = ["pod-a", "pod-b", "pod-c"]
    assert differential.state_agreement("scheduling", _pick(three, three)) == 1.0
    assert differential.state_agreement("routing", _pick(["pod-a", "pod-b"], ["pod-a"])) == 0.5
    assert differential.state_agreement("routing", _pick(["pod-a"], ["pod-a", "pod-b"])) == 0.5
    assert differential.state_agreement("routing", _pick(["pod-a"], ["pod-b"])) == 0.0
    assert differential.state_agreement("routing", _pick(["pod-a"], ["pod-a"])) == 1.0


def _queue_state(i: int, waiting: dict[str, int]) -> dict:
    endpoints = [{"name": n, "metrics": {"WaitingQueueSize": q}} for n, q in waiting.items()]
    snapshots = [{"ID": n} for n in waiting]
    request = {"ID": f"r{i}", "InputTokens": 10, "SLOClass": "critical"}
    return {"blis": {"request": request, "snapshots": snapshots, "queues": {}}, "llmd": {"endpoints": endpoints}}


def test_ties_counted_as_disagreements_are_said_beside_a_figure_that_counts_them_in_part():
    """An llm-d maintainer read "310 disagreement(s) survive every mapping switched off" beside 77.0% agreement over
    1000 states (230 disagreements): a tie the picker breaks at random counted as a whole disagreement in the counts
    and as a part of an agreement in the figure, and nothing said so."""
    states = [_queue_state(i, {"pod-a": 0, "pod-b": 3}) for i in range(4)]
    blis = {"target": "pod-a", "scores": {"pod-a": 0.0, "pod-b": -2.0}}
    picks = [["pod-a"], ["pod-a", "pod-b"], ["pod-b"], ["pod-a"]]
    results = [{"blis": blis, "llmd": {"best": p}} for p in picks]
    inp = {"kind": "routing", "runs": [{"name": differential.AS_DEPLOYED, "states": states}]}
    out = {"runs": [{"name": differential.AS_DEPLOYED, "results": results}]}
    f = differential.summarize(inp, out, floor=0.95, all_high=False, seed=1, mappings={})
    assert (f.agreement, f.unattributed, f.tied) == (0.625, 2, 1)
    text = " ".join(fidelity_section(f).split())
    assert "Ties: in 1 state(s)" in text
    assert (
        "The counts above take each such state as a disagreement; the agreement figure takes it as the chance" in text
    )


def test_a_scheduling_plugin_is_held_against_queue_scorer_alone():
    """Found by an llm-d maintainer: the shortest queue decided like the evolved order more often than the plugin,
    and nothing said so. BLIS picks pod-a in both states; the plugin ties everything in the second."""
    states = [_queue_state(0, {"pod-a": 0, "pod-b": 3}), _queue_state(1, {"pod-a": 1, "pod-b": 4})]
    blis = {"target": "pod-a", "scores": {"pod-a": 0.0, "pod-b": -2.0}, "randomTies": True}
    results = [{"blis": blis, "llmd": {"best": ["pod-a"]}}, {"blis": blis, "llmd": {"best": ["pod-a", "pod-b"]}}]
    inp = {"kind": "scheduling", "runs": [{"name": differential.AS_DEPLOYED, "states": states}]}
    out = {"runs": [{"name": differential.AS_DEPLOYED, "results": results}]}
    f = differential.summarize(inp, out, floor=0.95, all_high=False, seed=1, mappings={})
    assert (f.agreement, f.reference_agreement) == (0.75, 1.0)
    assert "queue-scorer alone" in f.reference
    section = fidelity_section(f)
    assert "decides like the BLIS original in 100.0% of the same states: the plugin does worse" in section


def test_an_admitter_is_held_against_always_admit_not_queue_scorer():
    """DA4 item 2: an admitter's figure is set beside always-admit's, which agrees wherever the original admits."""
    f = _fidelity()  # the original admits all four states: always-admit would agree in every one
    assert f.reference == differential.ALWAYS_ADMIT and f.reference_agreement == 1.0
    section = fidelity_section(f)
    assert "For comparison" not in section and "queue-scorer" not in section
    assert "The BLIS original rejects 0 of the 4 states (0.0%), so always-admit" in section
    assert "100.0% of them: the plugin does worse than admitting everything." in section
    admits_half = f.model_copy(update={"agreement": 1.0})
    assert "at or above the 99% floor: the figure cannot tell this plugin" in fidelity_section(admits_half)


def test_a_scheduling_example_state_shows_each_waiting_requests_class_length_and_wait():
    state = _queue_state(0, {"pod-a": 1})
    state["blis"]["clock"] = 5_000_000
    state["blis"]["queues"] = {"pod-a": [{"SLOClass": "", "InputTokens": 512, "ArrivalTime": 3_500_000}]}
    line = differential.describe(
        "scheduling", state, {"blis": {"target": "pod-a", "scores": {"pod-a": -1.0}}, "llmd": {"best": ["pod-a"]}}
    )
    assert 'pod-a: BLIS queue 1 ("" (standard), 512 tokens, 1,500 ms), serves it at position 1' in line


def test_a_floor_is_shown_as_precisely_as_it_was_set():
    """Found by a new user: `--fidelity-floor 0.975` read "floor 98%", so 97.5% agreement looked below it."""
    f = _fidelity().model_copy(update={"floor": 0.975, "floor_default": 0.99})
    assert f.floor_pct == "97.5%" and _fidelity().floor_pct == "99%"
    assert "(floor 97.5%, set for this promotion (`fidelity_floor`); the bot's default is 99%" in fidelity_section(f)


def _routing_state(i: int, endpoints: int) -> dict:
    eps = [{"name": f"pod-{k}"} for k in range(endpoints)]
    return {"blis": {"request": {"ID": f"r{i}", "InputTokens": 10}, "snapshots": []}, "llmd": {"endpoints": eps}}


def _failing() -> tuple[dict, dict]:
    """Four routing states: two agree, the plugin alone fails on r1, both sides fail on r2."""
    ok = {"blis": {"target": "pod-0"}, "llmd": {"best": ["pod-0"]}}
    results = [
        ok,
        {"blis": {"target": "pod-0"}, "llmd": {"error": "evolved Route panicked: boom\ngoroutine 1 [running]:"}},
        {"blis": {"error": "boom"}, "llmd": {"error": "evolved Route panicked: boom"}},
        ok,
    ]
    states = [_routing_state(i, 3 if i in (1, 2) else 2) for i in range(4)]
    inp = {"kind": "routing", "runs": [{"name": differential.AS_DEPLOYED, "states": states}]}
    return inp, {"runs": [{"name": differential.AS_DEPLOYED, "results": results}]}


def test_a_plugin_failure_counts_as_a_disagreement_and_a_blis_failure_is_named_not_silently_dropped():
    """Found by a red-team pass: 148 of 1000 states where the program panicked vanished from the denominator."""
    inp, out = _failing()
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    assert (f.states, f.errors, f.agreement) == (3, 1, round(2 / 3, 4))  # r1 counts as 0; only r2 is left out
    assert f.causes == [] and f.unattributed == 0  # the failure explains r1, not score composition
    plugin, blis = f.failures
    assert (plugin.side, plugin.states, plugin.message) == ("plugin", 1, "evolved Route panicked: boom")
    assert plugin.example == "request r1 (10 tokens), 3 endpoints" and plugin.shapes == "3 endpoints (1)"
    assert (blis.side, blis.states, blis.plugin_too, blis.message) == ("blis", 1, 1, "boom")
    text = fidelity_section(f)
    assert "The plugin failed on 1 state(s) where the BLIS original decided (counted as disagreements" in text
    assert "The BLIS original itself failed on 1 state(s)" in text and text.count("left out") == 1


def test_failures_are_blocking_findings_critical_past_the_floors_share():
    from bot.golang.translate import CHECK_FAILS, failure_findings

    inp, out = _failing()
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    plugin, blis = failure_findings(f)
    assert plugin.check == blis.check == CHECK_FAILS
    assert plugin.severity.value == "CRITICAL"  # 1 of 4 sampled states is more than the 5% the floor allows
    assert plugin.message.startswith("the plugin fails on 1 of 4 sampled states (e.g. request r1 (10 tokens), 3 end")
    assert plugin.message.endswith(
        "where the BLIS original decides: evolved Route panicked: boom; they count as disagreements"
    )
    assert "the evolved program itself fails in BLIS on 1 of 4 sampled states" in blis.message
    assert ": boom; the plugin fails on 1 of them too; they are left out" in blis.message
    f.floor = 0.0  # any failure is still blocking
    assert {x.severity.value for x in failure_findings(f)} == {"IMPORTANT"}


def test_the_class_the_plugin_reads_from_a_priority_is_the_harness_worlds():
    """The per-class split says which class the mix's priorities reach; it must be the mapping the harness models."""
    from bot.golang.fidelity_classes import class_of_priority
    from bot.golang.harness_world import CLASS_PRIORITY, ROUND_TRIP

    assert {c: class_of_priority(p) for c, p in CLASS_PRIORITY.items()} == ROUND_TRIP
    assert [class_of_priority(p) for p in (100, 0, -10)] == ["critical", "standard", "sheddable"]


def _class_state(i: int, cls: str) -> dict:
    state = _state(i)
    state["blis"]["request"]["SLOClass"] = cls
    return state


def test_an_admitters_split_counts_each_direction_and_plugin_failures_and_bounds_examples():
    classes = ["batch", "batch", "batch", "batch", "", "critical"]
    results = [
        {"blis": {"admit": True}, "llmd": {"admit": False}},
        {"blis": {"admit": False}, "llmd": {"admit": True}},
        {"blis": {"admit": True}, "llmd": {"error": "evolved Admit panicked"}},
        {"blis": {"admit": True}, "llmd": {"admit": False}},
        {"blis": {"admit": True}, "llmd": {"admit": True}},
        {"blis": {"error": "boom"}, "llmd": {"admit": True}},  # left out: no BLIS decision
    ]
    inp = {
        "kind": "admission",
        "runs": [{"name": differential.AS_DEPLOYED, "states": [_class_state(i, c) for i, c in enumerate(classes)]}],
    }
    out = {"runs": [{"name": differential.AS_DEPLOYED, "results": results}]}
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    batch, empty = f.classes
    assert (batch.name, batch.states, batch.disagreements) == ("batch", 4, 4)
    assert (batch.blis_admits, batch.llmd_admits, batch.plugin_failed) == (2, 1, 1)
    assert len(batch.examples) == differential.CLASS_EXAMPLES  # one of each way first: r0 (BLIS admits), r1
    assert [e.split(" ")[1] for e in batch.examples] == ["r0", "r1"]
    assert (empty.name, empty.states, empty.disagreements, empty.examples) == ("", 1, 0, [])
    text = fidelity_section(f)
    assert "| `batch` | 4 | 4 (1 plugin failures) | 2 | 1 |" in text and "| the empty class | 1 | 0 | 0 | 0 |" in text
