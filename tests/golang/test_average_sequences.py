"""A moving average of a request signal kept per tenant (fixtures/admission_tenant_ema.go, a researcher's trial-3
admitter: ``a.tokenEMA[tenant] = 0.8*prev + 0.2*inLen``, then a tenant over its fair share of the window's token
volume is rejected): its two weights, ``tokenEMADecay`` and ``tokenEMASampleWeight``, had no generated test. Every
probe tenant's earlier requests had one prompt length, so the average never moved off it and neither weight
changed a decision (``translate.untested-parameter``). ``average_sequences`` sends one tenant short prompts then
long ones, and the reverse."""

from __future__ import annotations

import pytest

from bot.golang import average_sequences, probes
from bot.golang.translate import CHECK_UNTESTED

from .conftest import FIXTURES, sandboxed_go, translate_path, write_module

EMA = FIXTURES / "admission_tenant_ema.go"
WEIGHTS = ("tokenEMADecay", "tokenEMASampleWeight")


def _specs(an) -> dict[str, dict]:
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, _ = probes.specs(an, defaults, "admission", stateful=True)
    return {s["name"]: s for s in specs}


def _decide(state: dict, decay: float = 0.8, sample: float = 0.2) -> bool:
    """The fixture's rule, in Python: whether its plugin admits ``state``'s request after its earlier requests."""
    events = [(h["blis"]["clock"], h["llmd"]["request"]) for h in state["history"]]
    now = state["blis"]["clock"]
    events.append((now, state["llmd"]["request"]))
    arrivals: dict[str, list[int]] = {}
    ema: dict[str, float] = {}
    for clock, request in events:
        tenant, tokens = request["FairnessID"], request["RequestSizeBytes"] / 4
        arrivals[tenant] = [t for t in arrivals.get(tenant, []) if clock - t <= 5_000_000] + [clock]
        ema[tenant] = decay * ema.get(tenant, tokens) + sample * tokens
    request = state["llmd"]["request"]
    if request["Priority"] > 0:
        return True
    metrics = [e["metrics"] for e in state["llmd"]["endpoints"]]
    mean_queue = sum(m["WaitingQueueSize"] for m in metrics) / len(metrics)
    if not any(m["KVCacheUsagePercent"] > 0.85 for m in metrics) and not mean_queue > 6:
        return True
    counts = {t: sum(now - x <= 5_000_000 for x in times) for t, times in arrivals.items()}
    active = [t for t, c in counts.items() if c > 0]
    fair = sum(counts[t] * ema[t] for t in active) / len(active)
    mine = len(arrivals[request["FairnessID"]]) * ema[request["FairnessID"]]
    return not (len(arrivals[request["FairnessID"]]) > 4 and mine > 1.5 * fair)


def test_the_weights_of_a_moving_average_of_the_prompt_length_get_prompts_of_more_than_one_length(analyze_text):
    """Before: every candidate's earlier requests of the decided request's tenant had one prompt length."""
    specs = _specs(analyze_text(EMA.read_text(encoding="utf-8")))
    for name in WEIGHTS:
        varied = [
            c
            for c in specs[name]["candidates"]
            if len(
                {
                    w["llmd"]["request"]["RequestSizeBytes"]
                    for w in c["history"]
                    if w["llmd"]["request"]["FairnessID"] == c["llmd"]["request"]["FairnessID"]
                }
            )
            > 1
        ]
        assert varied, f"no {name} candidate varies the prompt length of one tenant's earlier requests"


@pytest.mark.parametrize(
    ("param", "move"), [("tokenEMADecay", {"decay": 1.6}), ("tokenEMASampleWeight", {"sample": 0.4})]
)
def test_each_weight_gets_a_sequence_its_move_decides(analyze_text, param, move):
    """The live probe doubles the weight (``probes.live_move``): some candidate must be decided otherwise then."""
    cands = _specs(analyze_text(EMA.read_text(encoding="utf-8")))[param]["candidates"]
    assert any(_decide(c) != _decide(c, **move) for c in cands), f"no {param} candidate decides with {move}"


def test_the_sequences_follow_the_analysis_not_the_names(analyze_text):
    """Renamed receiver field and locals: both weights still get the sequences; the same update of a local (a blend
    made once, no average kept across calls) and a threshold get none."""
    text = EMA.read_text(encoding="utf-8")
    for old, new in (("tokenEMA", "sizeAvg"), ("prev", "old"), ("inLen", "size")):
        text = text.replace(old, new)
    an = analyze_text(text)
    got = {th.param for th in an.thresholds if th.param and average_sequences.candidates(an, th, "admission", True)}
    assert got == {"sizeAvgDecay", "sizeAvgSampleWeight"}, got
    blended = text.replace(
        "a.sizeAvg[tenant] = 0.8*old + 0.2*size", "old = 0.8*old + 0.2*size\n\ta.sizeAvg[tenant] = old"
    )
    an = analyze_text(blended)
    weights = [th for th in an.thresholds if th.blend is not None]
    assert weights and not [th for th in weights if average_sequences.candidates(an, th, "admission", True)]
    assert not [
        th for th in an.thresholds if th.role == "threshold" and average_sequences.candidates(an, th, "admission", True)
    ]


def test_a_moving_average_of_a_pool_signal_gets_no_prompt_sequences(analyze_text):
    """a01's ``a.typicalLoad`` averages the pool's in-flight requests: no request signal to vary, no sequences
    (its tests stay as they were)."""
    from .conftest import CORPUS

    an = analyze_text((CORPUS / "a01_pattern_c_adaptive_admission.go").read_text(encoding="utf-8"))
    weights = [th for th in an.thresholds if th.moving_average is not None]
    assert weights and not [th for th in weights if average_sequences.candidates(an, th, "admission", True)]


@pytest.mark.slow
def test_both_weights_of_the_moving_average_are_exercised_by_a_generated_test(dictionary):
    _, _, tr = translate_path(EMA, dictionary)
    untested = [f.message for f in tr.findings if f.check == CHECK_UNTESTED]
    assert not [m for m in untested if any(f"`{w}`" in m for w in WEIGHTS)], untested
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    for name in WEIGHTS:
        assert f'name: "{name} is live' in test, test


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a.params.TokenEMADecay*prev", "0.81*prev"),
        ("a.params.TokenEMASampleWeight*inLen", "0.21*inLen"),
    ],
)
def test_a_plugin_that_ignores_a_weight_fails_its_generated_test(dictionary, tmp_path, old, new):
    """Each weight hard-coded one step off its evolved value in the generated evolved.go: the parameter is then
    ignored, and the generated test that moves it fails."""
    _, _, tr = translate_path(EMA, dictionary)
    module = write_module(tr, tmp_path)
    evolved = module / tr.summary.package_dir / "evolved.go"
    original = evolved.read_text(encoding="utf-8")
    assert old in original, original
    evolved.write_text(original.replace(old, new), encoding="utf-8")
    res = sandboxed_go(module, tmp_path, ["test", "-count=1", "./" + tr.summary.package_dir])
    out = res.stdout + res.stderr
    assert "--- FAIL: TestThresholds" in out, out[-3000:]
    assert "build failed" not in out and "[setup failed]" not in out, out[-3000:]
