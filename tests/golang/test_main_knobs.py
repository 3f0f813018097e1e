"""A policy's main tuning numbers are parameters wherever the evolved code writes them (a researcher's trial found
them left out): a constant passed to a helper that weighs a signal with it (fixtures/routing_helper_arg_consts.go), a
fair-share multiplier on a figure computed from receiver state (admission_fair_share.go), and the sample count and
blend weights of a power-of-k router (routing_power_of_k.go)."""

from __future__ import annotations

import re

import pytest

from bot.golang.generate import generate
from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.source import load_evolved_source

from .conftest import FIXTURES, passes_with_test, translate_path

HELPER_ARGS = FIXTURES / "routing_helper_arg_consts.go"
FAIR_SHARE = FIXTURES / "admission_fair_share.go"
POWER_OF_K = FIXTURES / "routing_power_of_k.go"


def _params(an) -> dict:
    return {th.param: th for th in an.thresholds if th.param}


def _unlisted(an) -> list:
    return [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL]


def test_a_constant_passed_to_a_helper_that_weighs_a_signal_with_it_is_a_parameter(analyze_text):
    an = analyze_text(HELPER_ARGS.read_text(encoding="utf-8"))
    params = _params(an)
    for name, value in (("critQueueWeight", 0.35), ("stdQueueWeight", 0.2)):
        th = params.get(name)
        assert th is not None and th.value == value and th.role == "coefficient", an.thresholds
        assert th.signals == ["QueueDepth"] and th.const_decl == name, th
    # a literal passed so is a parameter too, named by the helper's parameter it is passed for
    literal = next(th for th in an.thresholds if th.value == 0.1)
    assert literal.param == "queueWeight" and literal.reason is None, literal
    assert not _unlisted(an), an.findings


def test_a_number_passed_to_a_helper_that_compares_a_signal_with_it_is_a_threshold_parameter(analyze_text):
    text = HELPER_ARGS.read_text(encoding="utf-8").replace(
        "p := queueWeight * float64(snap.QueueDepth)",
        "p := float64(snap.QueueDepth)\n\tif p > queueWeight {\n\t\tp++\n\t}",
    )
    an = analyze_text(text)
    passed = {th.value: th for th in an.thresholds if th.value in (0.35, 0.2, 0.1) and th.param}
    assert sorted(passed) == [0.1, 0.2, 0.35], an.thresholds  # one parameter per number passed (test_helper_thresholds)
    assert all(th.role == "threshold" and th.passed and th.passed[1] == "queueWeight" for th in passed.values())
    assert not [f for f in _unlisted(an) if "as `queueWeight`" in f.message], an.findings


def test_a_number_passed_as_a_type_no_parameter_carries_keeps_its_literal_with_a_finding(analyze_text):
    text = HELPER_ARGS.read_text(encoding="utf-8").replace(
        "p := queueWeight * float64(snap.QueueDepth)",
        "p := float64(snap.QueueDepth)\n\tif float32(p) > queueWeight {\n\t\tp++\n\t}",
    )
    text = text.replace("queueWeight float64) float64", "queueWeight float32) float64")
    an = analyze_text(text)
    assert not [th for th in an.thresholds if th.value in (0.35, 0.2, 0.1) and th.param], an.thresholds
    kept = [f for f in _unlisted(an) if "as `queueWeight`" in f.message]
    assert len(kept) == 3 and all("of type float32" in f.message for f in kept), an.findings


def _carried_const_block(an, path) -> str:
    src = load_evolved_source(path)
    from bot.dictionary import load_dictionary

    g = generate(src, an, load_dictionary(), "t-knobs")
    evolved = next(t for p, t in g.files.items() if p.endswith("/evolved.go"))
    return evolved[evolved.index("const (") :]


def test_a_lifted_constant_in_a_carried_group_reads_as_one_clean_comment(analyze_text, tmp_path):
    text = HELPER_ARGS.read_text(encoding="utf-8")
    text = text.replace(
        "\tcriticalBoost ", "\tfloorScore      = 0.05 // what a score never falls below\n\tcriticalBoost "
    )
    text = text.replace("\t\tscores[snap.ID] *= adj\n", "\t\tscores[snap.ID] = max(scores[snap.ID]*adj, floorScore)\n")
    path = tmp_path / HELPER_ARGS.name
    path.write_text(text, encoding="utf-8")
    an = analyze_text(text, name=HELPER_ARGS.name)
    block = _carried_const_block(an, path)
    assert re.search(r"\tfloorScore += 0\.05 // what a score never falls below\n", block), block  # kept as evolved
    knee = next(line for line in block.splitlines() if "kvPressureKnee" in line)
    assert knee.count("//") == 1, block
    assert "KV utilization past which pressure climbs steeply" in knee and "now the parameter" in knee, knee


@pytest.mark.parametrize(
    ("const", "param"),
    [
        ("kvPressureKnee", "kvPressureKnee"),  # a knee is a threshold already
        ("criticalBoost", "criticalBoost"),  # a boost is a factor already
        ("critQueueWeight", "critQueueWeight"),
    ],
)
def test_a_constant_named_by_its_role_keeps_its_name(analyze_text, const, param):
    an = analyze_text(HELPER_ARGS.read_text(encoding="utf-8"))
    assert any(th.const_decl == const and th.param == param for th in an.thresholds), [
        (th.const_decl, th.param) for th in an.thresholds
    ]


def test_a_local_constant_named_by_its_role_keeps_its_name_too(analyze_text):
    text = (
        POWER_OF_K.read_text(encoding="utf-8")
        .replace("\tk := 3\n", "\tconst kvPenaltySlope = 0.25\n\tk := 3\n")
        .replace("- 0.25*snap.KVUtilization", "- kvPenaltySlope*snap.KVUtilization")
    )
    an = analyze_text(text)
    assert any(th.const_decl == "kvPenaltySlope" and th.param == "kvPenaltySlope" for th in an.thresholds), [
        (th.const_decl, th.param) for th in an.thresholds
    ]


def test_a_fair_share_multiplier_on_receiver_state_is_a_parameter_and_its_reason_copy_is_not_flagged(analyze_text):
    an = analyze_text(FAIR_SHARE.read_text(encoding="utf-8"))
    fair = [th for th in an.thresholds if th.value == 1.5]
    assert len(fair) == 1 and fair[0].param and fair[0].reason is None, an.thresholds
    assert "InputTokens" in fair[0].signals, fair[0]
    # the decision's line, and the copy in the rejection's reason, which decides nothing: it reads the same parameter,
    # so the reason prints the multiplier in force, and is no knob of its own
    assert fair[0].lines == [40, 41], fair[0].lines
    assert not [f for f in _unlisted(an) if "1.5" in f.message], an.findings


def test_a_number_that_only_formats_a_reason_is_neither_a_parameter_nor_flagged(analyze_text):
    text = FAIR_SHARE.read_text(encoding="utf-8").replace("mine > 1.5*fair", "mine > 1.4*fair")
    an = analyze_text(text)
    assert [th.value for th in an.thresholds if th.value in (1.4, 1.5)] == [1.4], an.thresholds
    assert not [f for f in _unlisted(an) if "1.5" in f.message], an.findings


def test_the_sample_count_and_every_blend_weight_of_a_power_of_k_router_are_parameters(analyze_text):
    an = analyze_text(POWER_OF_K.read_text(encoding="utf-8"))
    params = _params(an)
    count = params.get("sampleCount")
    assert count is not None and count.value == 3 and count.go_type == "int", an.thresholds
    blend = next((th for th in an.thresholds if th.value == 0.6), None)
    assert blend is not None and blend.param and blend.reason is None, an.thresholds
    assert not _unlisted(an), an.findings


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "reads"),
    [
        (HELPER_ARGS, ("ws.pressure(snap, ws.params.CritQueueWeight)", "ws.pressure(snap, ws.params.QueueWeight)")),
        (FAIR_SHARE, ("mine > a.params.",)),
        (POWER_OF_K, ("k := ws.params.SampleCount", "ws.params.ScoresCoeff*scores[snap.ID]")),
    ],
)
def test_the_plugin_reads_the_knobs_from_its_parameters_and_builds(dictionary, path, reads):
    _, _, tr = translate_path(path, dictionary)
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    for read in reads:
        assert read in evolved, evolved
    assert not re.search(r"\b(critQueueWeight|stdQueueWeight) += ", evolved), evolved
    assert not [f for f in tr.findings if f.check.startswith("toolchain.")], tr.findings
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")
