"""Every signal a program can read is either varied by the differential harness or named as held constant.

Found by a new contributor (contrib-findings item 3): the harness never set ResidentAdapters or Adapter, so an
adapter-affinity program tied on every sampled state, and the report blamed "score composition" and told the
author to fix a mapping that was correct. A signal the world holds at one value now has to be listed, with a
reason, in ``harness_world.HELD_CONSTANT``, and a program reading one is told so by name.
"""

from __future__ import annotations

import json

from bot.cli import main
from bot.dictionary import load_dictionary
from bot.golang import harness_views as hv
from bot.golang import harness_world as world


def _blis_values(states: list[world.TrueState]) -> dict[tuple[str, str], set[str]]:
    """(scope, signal) -> the distinct values BLIS's view gave it over ``states``."""
    seen: dict[tuple[str, str], set[str]] = {}
    for state in states:
        blis = hv.views(state)["blis"]
        for snap in blis["snapshots"]:
            for k, v in snap.items():
                seen.setdefault(("snapshot", k), set()).add(json.dumps(v, sort_keys=True))
        for k, v in blis["request"].items():
            seen.setdefault(("request", k), set()).add(json.dumps(v, sort_keys=True))
        seen.setdefault(("state", "Clock"), set()).add(str(blis["clock"]))
        seen.setdefault(("state", "Snapshots"), set()).add(str(len(blis["snapshots"])))
    return seen


def test_every_signal_a_program_can_read_is_varied_or_held_constant_with_a_reason():
    d = load_dictionary()
    spec = world.Spec(kind="routing", reads=frozenset(s.name for s in d.signals))
    seen = _blis_values(world.sample(spec, 300))
    varied = {s.name for s in d.signals if len(seen.get((s.scope, s.name), ())) > 1}
    readable = {s.name for s in d.signals if s.scope != "method"}  # a method's parts are signals of their own
    unlisted = readable - varied - set(world.HELD_CONSTANT)
    assert not unlisted, f"the harness never varies {sorted(unlisted)}: vary them or list them in HELD_CONSTANT"
    stale = varied & set(world.HELD_CONSTANT)
    assert not stale, f"HELD_CONSTANT lists {sorted(stale)}, which the harness varies"
    assert all(reason.strip() for reason in world.HELD_CONSTANT.values())
    mapped_constant = {s.name for s in d.signals if s.llmd is not None and s.name in world.HELD_CONSTANT}
    assert mapped_constant == {"Model"}  # the one mapped signal held constant on purpose


def test_adapters_vary_on_both_sides_and_only_for_a_program_that_reads_them():
    reads = frozenset({"QueueDepth", "ResidentAdapters", "Adapter"})
    with_adapters = world.sample(world.Spec(kind="routing", reads=reads), 200)
    without = world.sample(world.Spec(kind="routing", reads=reads - world.ADAPTER_SIGNALS), 200)
    views = [hv.views(s) for s in with_adapters]
    active = {
        json.dumps(e["metrics"].get("ActiveModels"), sort_keys=True) for v in views for e in v["llmd"]["endpoints"]
    }
    targets = {v["llmd"]["request"]["TargetModel"] for v in views}
    assert len(active) > 5 and targets == {world.BASE_MODEL, *world.ADAPTERS}
    assert any("Adapter" not in v["blis"]["request"] for v in views)  # a base-model request: BLIS's Adapter is ""
    # A program reading no adapter gets the states (and so the figures) it got before adapters were drawn.
    assert all(not i.adapters for s in without for i in s.instances)
    for a, b in zip(with_adapters, without, strict=True):
        for inst in a.instances:
            inst.adapters = inst.idle = frozenset()
        a.request.adapter = ""
        assert a == b


def test_switching_the_adapter_mappings_off_makes_the_views_agree():
    state = world.sample(world.Spec(kind="routing", reads=world.ADAPTER_SIGNALS), 50)
    for s in state:
        view = hv.views(s, frozenset({"lora-residency", "adapter-target-model"}))
        target = view["llmd"]["request"]["TargetModel"]
        assert view["blis"]["request"].get("Adapter") == target == view["blis"]["request"]["Model"]
        for snap, ep in zip(view["blis"]["snapshots"], view["llmd"]["endpoints"], strict=True):
            assert set(snap.get("ResidentAdapters") or {}) == set(ep["metrics"].get("ActiveModels") or {})


LORA = """package sim
type AdapterAffinity struct{}
func (p *AdapterAffinity) Route(req *Request, state *RouterState) RoutingDecision {
	scores := map[string]float64{}; best, bestScore := "", -1.0
	for _, snap := range state.Snapshots { s := 0.1; if snap.ResidentAdapters[req.Adapter] { s = 1.0 }
		scores[snap.ID] = s; if s > bestScore { best, bestScore = snap.ID, s } }
	return NewRoutingDecisionWithScores(best, "adapter-affinity", scores)
}
"""

MODEL = LORA.replace("AdapterAffinity", "ModelMatch").replace("adapter-affinity", "model-match")
MODEL = MODEL.replace("snap.ResidentAdapters[req.Adapter]", "snap.Model == req.Model")


def _translate(tmp_path, name: str, text: str) -> tuple[dict, str, list[dict]]:
    src = tmp_path / f"{name}.go"
    src.write_text(text)
    out = tmp_path / name
    assert main(["translate", str(src), "--out", str(out), "--kind", "routing", "--no-check"]) in (0, 1)
    fidelity = json.loads((out / "translation.json").read_text())["summary"]["fidelity"]
    return fidelity, (out / "translation-report.md").read_text(), json.loads((out / "findings.json").read_text())


def test_an_adapter_affinity_program_is_measured_with_adapters_varied(tmp_path):
    """Before: 26.6%, every state a tie on adapters nobody set. Now the resident sets and the request's adapter
    vary (48.5% at the default seed: the rest are BLIS taking the first of several warm endpoints where llm-d's
    picker shuffles them), and the idle adapters ActiveModels cannot show are a cause of their own."""
    fidelity, report, _ = _translate(tmp_path, "lora", LORA)
    assert fidelity["agreement"] > 0.4 and fidelity["held_constant"] == []
    assert "lora-residency" in [c["mapping"] for c in fidelity["causes"]]
    assert "Not exercised" not in report and "ResidentAdapters={" in report and "ActiveModels={" in report


def test_a_program_reading_a_signal_held_constant_is_told_so_by_name(tmp_path):
    """Every state ties on `Model` (held constant). The plugin once left those ties to the picker, which shuffled
    where BLIS took the first, and a below-floor finding blamed the constant; it now puts the evolved choice alone
    on top (``endpointScores``), so the two agree, and the report still says the figure never exercised `Model`."""
    fidelity, report, findings = _translate(tmp_path, "model", MODEL)
    assert fidelity["held_constant"] == ["Model"]
    section = report.split("## Fidelity", 1)[1].split("\n## ", 1)[0]
    assert "**Not exercised**: the program reads `Model`" in section and "score composition" not in section
    assert fidelity["agreement"] == 1.0
    assert not [f for f in findings if f["check"] == "translate.fidelity-below-floor"]
