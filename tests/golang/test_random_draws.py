"""A router that draws at random has its unexplained disagreements named as random draws, not score composition.

A router that draws (power of two choices: two endpoints sampled with the rng, the less loaded taken) decides by
the numbers it draws even where the scores differ, and the plugin draws other numbers than the BLIS original: the
disagreements that survive every mapping switched off come from that, and "score composition" sent the reviewer to
the profile's weights. The harness runs the BLIS original a second time on each state with another seed: where its
own choice changes, a draw decides (a random pick among equal scores leaves the tied set as it was), and how often
it agrees with itself is what a plugin drawing its own numbers can be expected to reach.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot.cli import main
from bot.golang import differential, harness_build
from bot.golang import harness_world as world
from bot.golang.fidelity_unexplained import survivors_sentence, unexplained, unexplained_words
from bot.golang.harness_run import restore_non_finite
from bot.golang.report import fidelity_section
from bot.golang.translate import CHECK_BELOW_FLOOR, fidelity_findings
from bot.model import Fidelity, FidelityCause

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = Path(__file__).parents[2] / "examples" / "corpus"
STALE = FidelityCause(mapping="metric-staleness", title="scraped metrics", states=16, agreement_without=0.433)
#: What ``fidelity_findings`` reads of a Generated: a router alone in its profile, no flagged setup.
GEN = SimpleNamespace(
    request_fields={},
    stateful=False,
    state_fields=(),
    files={},
    findings=[],
    scorer_defaults=None,
    uses_scorers=False,
    params=[],
    weights={"evolved": 1.0},
    config_path="deploy/config/evolved-x-epp-config.yaml",
)


def _router(**over) -> Fidelity:
    fields = {
        "decision": differential.DECISIONS["routing"],
        "states": 1000,
        "seed": 1,
        "agreement": 0.43,
        "agreement_all_off": 0.426,
        "floor": 0.95,
        "causes": [STALE],
        "unattributed": 565,
    }
    return Fidelity(**(fields | over))


def _below(f: Fidelity):
    (found,) = [x for x in fidelity_findings(f, GEN) if x.check == CHECK_BELOW_FLOOR]
    return found


def test_a_router_whose_draws_decide_names_random_draws_in_the_report_the_finding_and_the_gate_note():
    f = _router(redrawn=540, redraw_agreement=0.452)
    assert unexplained(f).name == "random draws"
    said = survivors_sentence(f)
    assert "the two sides draw different random numbers" in said and "not evidence against a mapping" in said
    assert "45.2%" in said  # what agreement to expect: the original's with itself under another seed
    assert "score composition" not in said
    assert said in " ".join(fidelity_section(f).split())
    below = _below(f)
    assert "the largest cause is random draws: 565 disagreement(s) survive" in below.message
    assert "score composition" not in below.message
    assert "no mapping is at fault" in below.fix and "runs the plugin alone" not in below.fix  # not the weights
    assert "45.2%" in below.fix
    assert unexplained_words(f).startswith("random draws")  # the gate-1 note's words


@pytest.mark.parametrize("over", [{}, {"tied": 200, "redraw_agreement": 1.0}])
def test_a_deterministic_router_or_one_drawing_only_among_equal_scores_keeps_score_composition(over):
    f = _router(**over)
    assert unexplained(f).name == "score composition"
    assert "the largest cause is score composition" in _below(f).message


def _p2c_answer(redraw_target: str, scores: dict, redraw_scores: dict | None = None) -> tuple[dict, dict]:
    """Two routing states: BLIS picks pod-a; run again with another seed it picks ``redraw_target`` in the first,
    pod-a again in the second."""
    state = {"blis": {"request": {"ID": "r0"}, "snapshots": []}, "llmd": {"endpoints": []}}
    blis = {"target": "pod-a", "scores": scores, "randomTies": True}
    redraw = {"target": redraw_target, "scores": redraw_scores or scores, "randomTies": True}
    result = {"blis": blis, "llmd": {"best": ["pod-a"]}, "redraw": redraw}
    inp = {"kind": "routing", "runs": [{"name": differential.AS_DEPLOYED, "states": [state, state]}]}
    out = {"runs": [{"name": differential.AS_DEPLOYED, "results": [result, dict(result, redraw=blis)]}]}
    return inp, out


def test_the_originals_choice_changing_with_the_seed_counts_as_a_draw_a_tie_picked_otherwise_does_not():
    inp, out = _p2c_answer("pod-b", {"pod-a": 1, "pod-b": 0}, {"pod-a": 0, "pod-b": 1})
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    assert (f.redrawn, f.redraw_agreement) == (1, 0.5)
    inp, out = _p2c_answer("pod-b", {"pod-a": 2, "pod-b": 1, "pod-c": 3})  # drawn below the top score: not a tie
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    assert (f.redrawn, f.redraw_agreement) == (1, 0.5)
    inp, out = _p2c_answer("pod-b", {"pod-a": 1, "pod-b": 1})  # a random pick among equal scores: a tie
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    assert (f.redrawn, f.redraw_agreement) == (0, 1.0)


def test_a_target_drawn_below_the_top_score_is_what_the_original_picked_not_the_tie_above_it():
    blis = {"target": "pod-a", "scores": {"pod-a": 2, "pod-b": 3, "pod-c": 3}, "randomTies": True}
    assert differential.blis_best(blis) == {"pod-a"}
    assert differential.blis_best(dict(blis, target="pod-b")) == {"pod-b", "pod-c"}  # a tie broken at random


def test_no_redraw_in_the_answer_measures_nothing():
    inp, out = _p2c_answer("pod-b", {"pod-a": 1, "pod-b": 0})
    for r in out["runs"][0]["results"]:
        r.pop("redraw")
    f = differential.summarize(inp, out, floor=0.95, all_high=True, seed=1, mappings={})
    assert (f.redrawn, f.redraw_agreement) == (0, None)


def test_a_redraws_non_finite_scores_come_back():
    answer = {"runs": [{"results": [{"blis": {}, "llmd": {}, "redraw": {"scores": {}, "nonFinite": {"a": "NaN"}}}]}]}
    assert restore_non_finite(answer)["runs"][0]["results"][0]["redraw"]["scores"]["a"] != 0


def test_the_sampled_runs_keep_the_as_deployed_runs_redraw():
    plan = {
        "spec": world.Spec(kind="routing", reads=frozenset({"QueueDepth"})).to_json(),
        "states": 2,
        "seed": 1,
        "runs": [
            {"name": differential.AS_DEPLOYED, "off": [], "bypass": [], "redraw": True},
            {"name": differential.ALL_OFF, "off": [], "bypass": []},
        ],
    }
    runs = harness_build.with_states({"sample": plan})["runs"]
    assert [r.get("redraw", False) for r in runs] == [True, False]


@pytest.mark.slow
def test_the_power_of_two_fixtures_translation_names_random_draws(tmp_path):
    out = tmp_path / "out"
    assert main(["translate", str(FIXTURES / "router_power_of_two.go"), "--out", str(out), "--no-check"]) in (0, 1)
    f = Fidelity.model_validate(json.loads((out / "translation.json").read_text())["summary"]["fidelity"])
    assert f.redrawn > 0 and f.redraw_agreement is not None and f.redraw_agreement < 0.9
    assert f.unattributed and unexplained(f).name == "random draws"
    report = " ".join((out / "translation-report.md").read_text().split())
    assert survivors_sentence(f) in report and "(score composition)" not in report
    if f.below_floor:
        (below,) = [x for x in json.loads((out / "findings.json").read_text()) if x["check"] == CHECK_BELOW_FLOOR]
        assert "random draws" in below["message"] and "score composition" not in below["message"]


@pytest.mark.slow
def test_r02s_random_tie_break_is_no_draw(tmp_path):
    out = tmp_path / "out"
    assert main(["translate", str(CORPUS / "r02_pattern_b_prefix_decay.go"), "--out", str(out), "--no-check"]) in (0, 1)
    f = Fidelity.model_validate(json.loads((out / "translation.json").read_text())["summary"]["fidelity"])
    assert f.redrawn == 0 and f.redraw_agreement == 1.0  # its math/rand picks among equal scores only
    assert unexplained(f).name == "score composition"
