"""The harness's request carries a sampling plan, not states; its states are split between processes.

A request is data that crosses jobs in the GitHub home, so it stays small: ``run_plan`` says how to
sample, ``with_states`` samples (while Go compiles). The harness then runs one process per core on
contiguous slices of the states (``split``/``merge``). Neither may change an answer: these tests hold
the sampled input to the plan and the sharded answer to the one-process answer.
"""

from __future__ import annotations

import json
import os

import pytest

from bot.execution import DirectExecutor
from bot.golang import harness_build, harness_run
from bot.golang import harness_views as hv
from bot.golang import harness_world as world
from bot.golang.analyze import analyze
from bot.golang.differential import ALL_OFF, AS_DEPLOYED
from bot.golang.source import load_evolved_source

from .conftest import CORPUS, EXAMPLE


class _Capture:
    def run(self, request):
        self.request = request
        return DirectExecutor().run(request)


def _request(path, dictionary, states=None):
    from bot.golang.translate import translate

    src = load_evolved_source(path)
    capture = _Capture()
    translate(src, analyze(src, dictionary), dictionary, plugin_type="t-shards", executor=capture, states=states)
    return capture.request


def test_a_spec_survives_the_trip_through_json_and_a_bad_one_is_named():
    spec = world.Spec("admission", frozenset({"QueueDepth", "InputTokens"}), [world.Threshold("QueueDepth", 5)], True)
    again = world.Spec.from_json(json.loads(json.dumps(spec.to_json())))
    assert again == world.Spec(spec.kind, spec.reads, [world.Threshold("QueueDepth", 5.0)], True)
    for bad in ({}, {**spec.to_json(), "kind": "scheduling"}, {**spec.to_json(), "reads": [1]}):
        with pytest.raises(ValueError, match="sampling spec"):
            world.Spec.from_json(bad)


def _plan(kind="routing", n=40, runs=None):
    spec = world.Spec(kind, frozenset({"QueueDepth", "KVUtilization", "InFlightRequests"}), [], False)
    runs = runs or [
        {"name": AS_DEPLOYED, "off": [], "bypass": []},
        {"name": "metric-staleness", "off": ["metric-staleness"], "bypass": [], "markSameBlis": True},
        {"name": "signal:QueueDepth", "bypass": ["snapshot:QueueDepth"], "like": AS_DEPLOYED},
        {"name": ALL_OFF, "off": ["metric-staleness", "in-flight-counting"], "bypass": []},
    ]
    return {"sample": {"spec": spec.to_json(), "states": n, "seed": 7, "runs": runs}, "kind": kind}


def test_the_sampled_runs_are_the_plans_states_under_each_runs_mappings():
    inp = harness_build.with_states(_plan())
    assert "sample" not in inp and inp["kind"] == "routing"
    spec = world.Spec.from_json(_plan()["sample"]["spec"])
    states = world.sample(spec, 40, 7)
    by_name = {r["name"]: r for r in inp["runs"]}
    assert [r["name"] for r in inp["runs"]] == [AS_DEPLOYED, "metric-staleness", "signal:QueueDepth", ALL_OFF]
    assert by_name[AS_DEPLOYED]["states"] == [hv.views(s) for s in states]
    assert by_name[ALL_OFF]["states"] == [
        hv.views(s, frozenset({"metric-staleness", "in-flight-counting"})) for s in states
    ]
    base = by_name[AS_DEPLOYED]["states"]
    off = [hv.views(s, frozenset({"metric-staleness"})) for s in states]
    assert by_name["metric-staleness"]["states"] == [
        harness_build._mark_same_blis(v, b) for v, b in zip(off, base, strict=True)
    ]
    assert by_name["signal:QueueDepth"] == {
        "name": "signal:QueueDepth",
        "bypass": ["snapshot:QueueDepth"],
        "states": [],
        "like": AS_DEPLOYED,
    }
    assert harness_build.with_states(_plan()) == inp  # the same plan, the same states
    assert harness_build.with_states(inp) is inp  # an input with its runs is read as it is


def test_a_history_the_as_deployed_run_already_sends_is_sent_once():
    spec = world.Spec("admission", frozenset({"QueueDepth", "InputTokens", "InFlightRequests"}), [], True)
    runs = [
        {"name": AS_DEPLOYED, "off": [], "bypass": []},
        *({"name": m, "off": [m], "bypass": []} for m in world.applicable_mappings(spec)),
    ]
    inp = harness_build.with_states({"sample": {"spec": spec.to_json(), "states": 60, "seed": 3, "runs": runs}})
    states = world.sample(spec, 60, 3)
    shared = kept = 0
    for run in inp["runs"][1:]:
        for state, view in zip(states, run["states"], strict=True):
            full = hv.views(state, frozenset({run["name"]}))
            assert view | {"history": full["history"]} == full | (
                {"historyLike": True} if view.get("historyLike") else {}
            )
            if view.get("historyLike"):
                assert view["history"] == [] and full["history"] == hv.views(state)["history"] != []
                shared += 1
            else:
                kept += bool(full["history"])
    assert shared > 60 and kept > 0  # most are shared; a mapping that changes a history keeps its own


def _undelta(inp: dict) -> dict:
    """What the harness's ``expand`` rebuilds from ``delta_views``: every shared part copied back."""
    runs = inp["runs"]
    out = [runs[0]]
    for run in runs[1:]:
        states = []
        for i, st in enumerate(run["states"]):
            full = dict(st)
            for side in ("blis", "llmd"):
                for part in full.pop(f"{side}Same", []):
                    full[side] = full[side] | {part: runs[0]["states"][i][side][part]}
            states.append(full)
        out.append(run | {"states": states})
    return inp | {"runs": out}


@pytest.mark.parametrize("kind", ["routing", "scheduling"])
def test_a_later_run_sends_only_what_differs_from_the_first_runs_state(kind):
    if kind == "scheduling":
        spec = world.Spec(
            "scheduling", frozenset({"InputTokens", "SLOClass"}), incumbents=world.Incumbents("standard", 512, 50_000)
        )
        runs = [{"name": AS_DEPLOYED, "off": [], "bypass": []}]
        runs += [{"name": m, "off": [m], "bypass": [], "markSameBlis": True} for m in world.applicable_mappings(spec)]
        inp = harness_build.with_states({"sample": {"spec": spec.to_json(), "states": 30, "seed": 5, "runs": runs}})
    else:
        inp = harness_build.with_states(_plan())
    sent = harness_build.delta_views(inp)
    assert _undelta(sent) == inp
    assert sent["runs"][0] == inp["runs"][0]  # the first run is sent whole
    shared = [
        p for run in sent["runs"][1:] for st in run["states"] for p in st.get("blisSame", []) + st.get("llmdSame", [])
    ]
    assert shared and len(json.dumps(sent)) < len(json.dumps(inp))
    assert harness_build.delta_views({"runs": []}) == {"runs": []}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"states": 10**7}, "states must be"),
        ({"states": "40"}, "states must be"),
        ({"runs": [{"name": "x", "off": ["no-such-mapping"]}]}, "unknown mapping"),
    ],
)
def test_a_plan_from_another_job_that_asks_too_much_or_the_unknown_is_refused(change, message):
    inp = _plan()
    inp["sample"] |= change
    with pytest.raises(ValueError, match=message):
        harness_build.with_states(inp)


def test_split_gives_every_process_a_slice_of_every_runs_states_and_merge_puts_them_back():
    inp = harness_build.with_states(_plan(n=41)) | {"probes": [{"name": "p"}]}
    parts = harness_run.split(inp, 3)
    assert [len(p["runs"][0]["states"]) for p in parts] == [13, 14, 14]
    assert [p["probes"] for p in parts] == [[{"name": "p"}], [], []]
    for run_i, run in enumerate(inp["runs"]):
        assert [s for p in parts for s in p["runs"][run_i]["states"]] == run["states"]
    # each process answers one result per state it got (here: the state itself)
    outs = [
        {
            "runs": [{"name": r["name"], "results": list(r["states"])} for r in p["runs"]],
            "probes": ["answer"] if p["probes"] else [],
            "unsupported": ["b", "a"] if i else ["a"],
        }
        for i, p in enumerate(parts)
    ]
    merged = harness_run.merge(outs)
    assert [r["results"] for r in merged["runs"]] == [r["states"] for r in inp["runs"]]
    assert merged["probes"] == ["answer"] and merged["unsupported"] == ["a", "b"]
    assert harness_run.shards_for(inp, cores=2) == 2 and harness_run.shards_for(inp, cores=64) == 4
    assert harness_run.shards_for({"runs": []}, cores=8) == 1
    uneven = inp | {"runs": [inp["runs"][0], inp["runs"][1] | {"states": inp["runs"][1]["states"][:5]}]}
    assert harness_run.shards_for(uneven, cores=8) == 1  # a state would be dropped: decided in one process
    # by default, one per core this process may use: a pinned process (taskset, a container's cpuset) gets one
    if hasattr(os, "sched_setaffinity"):
        before = os.sched_getaffinity(0)
        try:
            os.sched_setaffinity(0, {min(before)})
            assert harness_run.shards_for(inp) == 1
        finally:
            os.sched_setaffinity(0, before)
    probes_only = {"kind": "scheduling", "probes": [{"name": "p"}]}  # a scheduling program has no runs
    assert harness_run.split(probes_only, 1) == [probes_only | {"runs": [], "candidateSets": []}]


def test_probes_are_split_by_their_candidates_with_only_the_sets_they_name_and_merged_in_order():
    sets = [[{"seed": 1}] * 6, [{"seed": 2}] * 2]
    probes = [
        {"name": "a", "candidatesFrom": 0},
        {"name": "b", "candidates": [{"seed": 3}] * 4},
        {"name": "c", "candidatesFrom": 1},
        {"name": "d", "candidatesFrom": 0},
    ]
    inp = harness_build.with_states(_plan(n=10)) | {"probes": probes, "candidateSets": sets}
    parts = harness_run.split(inp, 2)
    # 18 candidates: a (6) and b (4) fill the first half, c and d the second; each part renumbers its sets
    assert [[p["name"] for p in part["probes"]] for part in parts] == [["a", "b"], ["c", "d"]]
    assert parts[0]["candidateSets"] == [sets[0]] and parts[0]["probes"][0]["candidatesFrom"] == 0
    assert parts[1]["candidateSets"] == [sets[1], sets[0]]
    assert [p["candidatesFrom"] for p in parts[1]["probes"]] == [0, 1]
    outs = [{"runs": [], "probes": [p["name"] for p in part["probes"]]} for part in parts]
    assert harness_run.merge(outs)["probes"] == ["a", "b", "c", "d"]


def test_a_candidate_list_more_than_one_probe_holds_is_sent_once():
    shared, own = [{"seed": 1, "history": []}], [{"seed": 2, "history": []}]
    specs = [
        {"name": "a", "candidates": shared},
        {"name": "b", "candidates": own},
        {"name": "c", "candidates": [*shared]},
    ]
    sent = harness_build.share_candidates(specs)
    assert sent == {
        "probes": [{"name": "a", "candidatesFrom": 0}, specs[1], {"name": "c", "candidatesFrom": 0}],
        "candidateSets": [shared],
    }
    assert harness_build.share_candidates(specs[1:2]) == {"probes": specs[1:2]}


@pytest.mark.slow
@pytest.mark.parametrize("path", [EXAMPLE, CORPUS / "a01_pattern_c_adaptive_admission.go"], ids=lambda p: p.stem)
def test_split_between_processes_the_harness_answers_as_one_process_does(path, dictionary):
    """A stateless routing program and a stateful admission one: the same decisions, probes and notes."""
    request = _request(path, dictionary, states=200)
    # the plan, not the states, crosses jobs
    assert "runs" not in request.args["input"] and len(json.dumps(request.args["input"]["sample"])) < 10_000
    inp = harness_build.with_states(request.args["input"])
    assert len(json.dumps(inp["runs"])) > 100 * len(json.dumps(request.args["input"]["sample"]))
    binary, log = harness_run.build(request.files)
    assert binary is not None, log
    one, err1 = harness_run.run(binary, harness_build.delta_views(inp), shards=1)
    three, err2 = harness_run.run(binary, harness_build.delta_views(inp), shards=3)
    assert one is not None and three is not None, err1 + err2
    assert three == one
    # every history sent once is read as if it were sent again
    unshared = json.loads(json.dumps(inp))
    base = unshared["runs"][0]["states"]
    for run in unshared["runs"][1:]:
        for i, state in enumerate(run["states"]):
            if state.pop("historyLike", False):
                state["history"] = base[i]["history"]
    assert unshared != inp or not any(s.get("historyLike") for r in inp["runs"] for s in r["states"])
    again, err3 = harness_run.run(binary, unshared, shards=1)
    assert again == one, err3
    # and every view part sent once (what the job sends) is read as the whole views are
    whole, err4 = harness_run.run(binary, inp, shards=1)
    assert whole == one, err4
    # and every probe's candidates sent with it are read as the candidate sets the probes share are
    assert inp.get("candidateSets"), "these probes share candidates"
    sets = inp["candidateSets"]
    own = [
        {k: v for k, v in p.items() if k != "candidatesFrom"} | {"candidates": sets[p["candidatesFrom"]]}
        if "candidatesFrom" in p
        else p
        for p in inp["probes"]
    ]
    unshared_probes = {k: v for k, v in inp.items() if k != "candidateSets"} | {"probes": own}
    assert len(json.dumps(unshared_probes)) > len(json.dumps(inp))
    alone, err5 = harness_run.run(binary, unshared_probes, shards=1)
    assert alone == one, err5
    assert sum(len(r["results"]) for r in one["runs"]) > 200 and one["probes"]


def test_a_harness_crash_is_named_by_its_first_panic_line_shortened_not_the_dumps_last_frame():
    """Found by a red-team pass: a 4 MiB panic made the reason `runtime/proc.go:462 +0xce fp=...`."""
    dump = "\n".join(
        [
            "panic: " + "A" * (4 << 20),
            "",
            "goroutine 1 gp=0x1a9bf8ee61e0 m=4 [running]:",
            "panic: a second one",
            "runtime.goexit({})",
            "\truntime/proc.go:462 +0xce fp=0x1cdb24e50fa8 sp=0x1cdb24e50f88 pc=0x47e9ae",
        ]
    )
    line = harness_run.crash_line(dump)
    assert line.startswith("panic: AAAA") and line.endswith(f"... ({len('panic: ') + (4 << 20):,} characters)")
    assert len(line) < 300
    assert harness_run.crash_line("runtime: out of memory: cannot allocate\nfatal error: out of memory\n") == (
        "fatal error: out of memory"
    )
    assert harness_run.crash_line("exit status 2") == ""
    # the harness's own error (it could not read its input or write its answer) is the reason, not "it exited 1"
    assert harness_run.crash_line("promotion-harness: write output.json: no space left on device\n") == (
        "promotion-harness: write output.json: no space left on device"
    )
