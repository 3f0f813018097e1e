"""A receiver flag set under one cut and cleared under another (fixtures/admission_shed_band.go, a researcher's
trial-4 hysteresis shedder, shortened: ``shedding`` set when the pool's pressure reaches 1.0, cleared only once it
falls below 0.7). Every generated history ran on one pool, so the pressure never fell after shedding started: the
lower cut got no test (``translate.untested-parameter``), and the one sequence row, "after 4 requests 0.2 s apart
(1 from tenant-b, 3 from tenant-a), ... is rejected", named tenants the program never reads and was decided as a
fresh plugin decides it. ``load_sequences`` sends histories whose pool load changes between requests."""

from __future__ import annotations

import re

import pytest

from bot.golang import load_sequences, probes, sequences
from bot.golang.translate import CHECK_UNTESTED

from .conftest import CORPUS, FIXTURES, sandboxed_go, translate_path, write_module

BAND = FIXTURES / "admission_shed_band.go"


def _pool(state_or_event: dict) -> list:
    return state_or_event["llmd"]["endpoints"]


def _changes_load(state: dict) -> bool:
    """Some earlier request met a pool other than the decided request's."""
    return any(h["llmd"].get("endpoints") not in (None, _pool(state)) for h in state["history"])


def _pressure(endpoints: list[dict]) -> float:
    metrics = [e["metrics"] for e in endpoints]
    kv = sum(m["KVCacheUsagePercent"] for m in metrics) / len(metrics) / 0.85
    return max(kv, sum(m["WaitingQueueSize"] for m in metrics) / len(metrics) / 6.0)


def _decide(state: dict, low: float = 0.7, mid: float = 1.0) -> bool:
    """The fixture's rule, in Python (a test's model only: the bot runs the compiled plugin)."""
    shedding = False
    steps = [(h["llmd"].get("endpoints") or _pool(state), h["llmd"]["request"]) for h in state["history"]]
    admitted = True
    for endpoints, request in [*steps, (_pool(state), state["llmd"]["request"])]:
        pressure = _pressure(endpoints)
        if shedding:
            shedding = not pressure < low
        elif pressure >= mid:
            shedding = True
        admitted = request["Priority"] >= 0 or not shedding
    return admitted


def _results(spec: dict, **cuts) -> list[dict]:
    cases = [
        {"candidate": i, "side": "observe", "default": {"admit": _decide(c, **cuts)}}
        for i, c in enumerate(spec["candidates"])
    ]
    return [{"name": spec["name"], "cases": cases}]


def _sequence_spec(an) -> dict:
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, _ = probes.specs(an, defaults, "admission", stateful=True)
    return sequences.sequence_specs("admission", True, an, defaults, specs)[0]


def test_a_flag_set_and_cleared_under_two_cuts_gets_histories_whose_pool_load_changes(analyze_text):
    """Before: every candidate's earlier requests met the decided request's own pool."""
    an = analyze_text(BAND.read_text(encoding="utf-8"))
    assert load_sequences.latched(an)
    assert any(_changes_load(c) for c in _sequence_spec(an)["candidates"])
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, _ = probes.specs(an, defaults, "admission", stateful=True)
    low = next(s for s in specs if s["param"] == "pressureLowThreshold")
    assert any(_changes_load(c) for c in low["candidates"])
    # Each walk starts on an overloaded pool and decides on a lower load: the flag set, then the load at the cut.
    walks = [c for c in low["candidates"] if _changes_load(c)]
    assert all(_pressure(c["history"][0]["llmd"]["endpoints"]) >= 1.0 for c in walks)
    assert {_decide(c) for c in walks} == {True, False}


def test_a_flag_never_cleared_or_no_flag_gets_no_walks(analyze_text):
    """A flag only ever set (a one-way latch) and a01 (a moving average, no flag): their tests stay as they were."""
    text = BAND.read_text(encoding="utf-8")
    assert not load_sequences.latched(analyze_text(text.replace("h.shedding = false", "_ = 0")))
    a01 = analyze_text((CORPUS / "a01_pattern_c_adaptive_admission.go").read_text(encoding="utf-8"))
    assert not load_sequences.latched(a01)
    assert not any(_changes_load(c) for c in _sequence_spec(a01)["candidates"])


def test_the_behaviour_rows_walk_the_load_down_through_the_band(analyze_text):
    """The rows asserted: after overload, a load between the cuts is still shed where a fresh plugin admits it, and
    below the lower cut the same history continued is admitted again. Moved a ladder step, either cut fails a row."""
    spec = _sequence_spec(analyze_text(BAND.read_text(encoding="utf-8")))
    results = _results(spec)
    chosen = sequences.choose([spec], results)
    states = [spec["candidates"][i] for i in chosen]
    shed = next(s for s in states if _changes_load(s) and not _decide(s))
    assert 0.7 <= _pressure(_pool(shed)) < 1.0 and _decide(shed | {"history": []})
    release = next(s for s in states if _changes_load(s) and s["history"][-1]["llmd"]["endpoints"] == _pool(shed))
    assert _decide(release) and _pressure(_pool(release)) < 0.7
    for cuts in ({"low": _pressure(_pool(shed)) + 0.01}, {"low": _pressure(_pool(release)) - 0.01}):
        assert any(_decide(s, **cuts) != _decide(s) for s in states), cuts


def test_a_sequence_a_fresh_plugin_decides_alike_is_not_asserted(analyze_text):
    """The overloaded pool rejects a sheddable request whatever came before: no row of that sequence."""
    spec = _sequence_spec(analyze_text(BAND.read_text(encoding="utf-8")))
    rows = sequences.rows([spec], _results(spec))
    for state, want in rows:
        if state["history"] and not _changes_load(state):
            assert _decide(state | {"history": []}) != (want == "admit"), sequences.describe(state, want)


def test_a_row_names_tenants_only_when_the_plugin_reads_them(analyze_text):
    spec = _sequence_spec(analyze_text(BAND.read_text(encoding="utf-8")))
    names = [sequences.describe(s, w, tenants=False) for s, w in sequences.rows([spec], _results(spec))]
    assert names and not [n for n in names if "tenant" in n], names
    assert [n for n in names if "overloaded pool" in n], names
    state = spec["candidates"][0]
    assert "tenant-a" in sequences.describe(state, "reject", tenants=True)


def test_a_ramped_walk_adds_the_load_to_every_pool_it_met(analyze_text):
    """The harness adds a ramp's load to every history event's endpoints (``withRamp``): the case the generated
    test replays must carry it on a walk's earlier pools too, not only on the decided request's."""
    from bot.golang.probe_inputs import ramped

    walk = load_sequences.walk_state([(load_sequences.pool(32), {"RequestID": "w-0"})], load_sequences.pool(3), {})
    got = ramped(walk, "queue", 2)
    assert got["llmd"]["endpoints"][0]["metrics"]["WaitingQueueSize"] == 5
    assert got["history"][0]["llmd"]["endpoints"][0]["metrics"]["WaitingQueueSize"] == 34


@pytest.mark.slow
def test_the_lower_cut_gets_a_generated_test_and_the_walk_passes_on_the_compiled_plugin(dictionary, tmp_path):
    _, _, tr = translate_path(BAND, dictionary)
    untested = [f.message for f in tr.findings if f.check == CHECK_UNTESTED]
    assert not [m for m in untested if "`pressureLowThreshold`" in m], untested
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    behaviour = test[test.index("func TestBehaviour") : test.index("func TestThresholds")]
    assert "tenant" not in behaviour, behaviour
    assert "before:" in behaviour and "admitted again" in behaviour, behaviour
    # Both sides of the lower cut, each a walk whose compared pressure sits within a hundredth of it.
    assert re.search(r'name: +"pressureLowThreshold=0\.7: the compared value 0\.69\d* is below it', test), test
    assert re.search(r'name: +"pressureLowThreshold=0\.7: the compared value 0\.70\d* is at or above', test), test
    module = write_module(tr, tmp_path)
    res = sandboxed_go(module, tmp_path, ["test", "-count=1", "./" + tr.summary.package_dir])
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new", "failing"),
    [
        ("pressure < h.params.PressureLowThreshold", "pressure < 0.71", "TestThresholds"),
        ("pressure >= h.params.PressureHighThreshold", "pressure >= 1.01", "TestThresholds"),
        ("pressure < h.params.PressureLowThreshold", "pressure < 0.84", "TestBehaviour"),
        ("pressure < h.params.PressureLowThreshold", "pressure < 0.66", "TestBehaviour"),
        ("pressure >= h.params.PressureHighThreshold", "pressure >= 0.83", "TestBehaviour"),
    ],
)
def test_a_plugin_with_a_cut_moved_fails_its_generated_test(dictionary, tmp_path, old, new, failing):
    """Each cut hard-coded one step off in the generated evolved.go: the threshold test that moves it fails; moved
    one step of the walk's load ladder (5 waiting per endpoint sits at pressure 0.83, 4 at 0.67, 6 at 1.0), the
    behaviour test's walk fails."""
    _, _, tr = translate_path(BAND, dictionary)
    module = write_module(tr, tmp_path)
    evolved = module / tr.summary.package_dir / "evolved.go"
    original = evolved.read_text(encoding="utf-8")
    assert old in original, original
    evolved.write_text(original.replace(old, new), encoding="utf-8")
    res = sandboxed_go(module, tmp_path, ["test", "-count=1", "./" + tr.summary.package_dir])
    out = res.stdout + res.stderr
    assert f"--- FAIL: {failing}" in out, out[-3000:]
    assert "build failed" not in out and "[setup failed]" not in out, out[-3000:]


def test_only_the_cuts_under_the_flag_try_the_walks_first(analyze_text):
    """The cut that clears the flag and the one that sets it (its ``else if``) sit under ``if h.shedding``; a cut on
    the class's branch after it does not, and keeps the grid's cases."""
    text = BAND.read_text(encoding="utf-8").replace(
        'return false, "shedding"\n\t}',
        'return false, "shedding"\n\t}\n\tif pressure > 1.4 {\n\t\treturn false, "severe"\n\t}',
    )
    an = analyze_text(text)
    under = {th.param for th in an.thresholds if th.param and load_sequences.guarded(an, th)}
    assert under == {"pressureLowThreshold", "pressureMidThreshold"}, under  # 1.4 is now the high cut
    assert {th.param for th in an.thresholds if th.param and th.value == 1.4} == {"pressureHighThreshold"}
