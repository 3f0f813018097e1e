"""The weights of a regime switch are parameters, one per regime, named for their regime (bot.golang.regime_weights).

Found by a researcher's trial (trial 4, route): ``wBase, wQueue, wKV := 0.6, 0.25, 0.15`` then ``if
congested(snapshots, 3.5) { wBase, wQueue, wKV = 0.2, 0.55, 0.25 }``. The plugin lifted only the congested set
(``WBase``, ``WQueueValue``, ``WKVValue``: names that say neither role nor regime), documented each as "the value in
`congested(snapshots, 3.5)`", gave the KV weight the signal QueueDepth, and kept the calm set literal with a
SUGGESTION that said a parameter "would stand for only one of its values" (fixtures/routing_regime_weights.go).
"""

from __future__ import annotations

import re

import pytest

from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.params import param_specs
from bot.golang.probe_inputs import anchors
from bot.model import Severity

from .conftest import FIXTURES, passes_with_test, translate_path

REGIME = FIXTURES / "routing_regime_weights.go"

WANTED = {
    "calmBaseWeight": 0.6,
    "calmQueueWeight": 0.25,
    "calmKVWeight": 0.15,
    "congestedBaseWeight": 0.2,
    "congestedQueueWeight": 0.55,
    "congestedKVWeight": 0.25,
}

IF_ELSE = (
    (
        "\twBase, wQueue, wKV := 0.6, 0.25, 0.15\n\tif congested(snapshots, 3.5) {\n"
        "\t\twBase, wQueue, wKV = 0.2, 0.55, 0.25\n\t}\n"
    ),
    (
        "\tvar wBase, wQueue, wKV float64\n\tif congested(snapshots, 3.5) {\n"
        "\t\twBase, wQueue, wKV = 0.2, 0.55, 0.25\n\t} else {\n\t\twBase, wQueue, wKV = 0.6, 0.25, 0.15\n\t}\n"
    ),
)


def _text(*edits: tuple[str, str]) -> str:
    text = REGIME.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def _params(an) -> dict:
    return {th.param: th for th in an.thresholds if th.param}


@pytest.mark.parametrize("form", ["declared-then-if", "if-else"])
def test_each_regime_of_a_switch_gives_each_weight_a_parameter_named_for_its_role_and_regime(analyze_text, form):
    an = analyze_text(_text(IF_ELSE) if form == "if-else" else _text())
    params = _params(an)
    assert {name: params[name].value for name in WANTED if name in params} == WANTED, sorted(params)
    assert not {"wBase", "wQueueValue", "wKVValue"} & set(params), sorted(params)
    for name in ("calmQueueWeight", "congestedQueueWeight"):
        assert params[name].signals == ["QueueDepth"], params[name]
    for name in ("calmKVWeight", "congestedKVWeight"):
        assert params[name].signals == ["KVUtilization"], params[name]
    unlisted = [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL]
    assert unlisted == [], unlisted
    assert params["queueDepthLimit"].value == 3.5  # the helper's limit (arg_thresholds), which the docs name


def test_each_weight_is_documented_as_the_weight_of_its_term_in_its_regime(analyze_text):
    an = analyze_text(_text())
    docs = {s.name: " ".join(s.doc.split()) for s in param_specs(an, None, False)}
    # the condition as the plugin runs it: its limit is the parameter queueDepthLimit (arg_thresholds), so the doc
    # stays true when an operator tunes it
    for name in WANTED:
        assert "the value in" not in docs[name], docs[name]
    assert (
        "the weight of `queueScore` when `congested(snapshots, queueDepthLimit)` holds" in docs["congestedQueueWeight"]
    )
    assert (
        "the weight of `queueScore` when `congested(snapshots, queueDepthLimit)` does not hold"
        in docs["calmQueueWeight"]
    )
    assert "the weight of `kvScore` when `congested(snapshots, queueDepthLimit)` holds" in docs["congestedKVWeight"]
    assert "KV" in docs["congestedKVWeight"] and "waiting requests" not in docs["congestedKVWeight"]
    # the scorers' composite has no signal of its own: the doc names the sum it is a term of, which reads signals
    assert (
        "the weight of `base[snap.ID]` when `congested(snapshots, queueDepthLimit)` does not hold"
        in docs["calmBaseWeight"]
    )
    assert "`scores[snap.ID]` is computed from" in docs["calmBaseWeight"], docs["calmBaseWeight"]


def test_a_regime_named_by_a_comparison_says_high_and_low(analyze_text):
    an = analyze_text(
        _text(
            (
                "if congested(snapshots, 3.5) {",
                (
                    "meanQueue := 0.0\n\tfor _, snap := range snapshots {\n"
                    "\t\tmeanQueue += float64(snap.QueueDepth)\n\t}\n\tif meanQueue > 14 {"
                ),
            ),
        )
    )
    params = _params(an)
    assert params.get("highMeanQueueQueueWeight") is not None, sorted(params)
    assert params.get("lowMeanQueueQueueWeight") is not None, sorted(params)


def test_a_switch_that_cannot_be_lifted_soundly_is_important_and_says_which_regime_keeps_its_value(analyze_text):
    """A third assignment (in the scoring loop) means a parameter per regime would not say what the code does."""
    an = analyze_text(
        _text(
            (
                "\t\tkvScore := 1.0 - snap.KVUtilization\n",
                "\t\tkvScore := 1.0 - snap.KVUtilization\n\t\tif kvScore < 0.1 {\n\t\t\twKV = 0.9\n\t\t}\n",
            )
        )
    )
    params = _params(an)
    assert "calmKVWeight" not in params and "congestedKVWeight" not in params, sorted(params)
    assert "calmQueueWeight" in params and "congestedQueueWeight" in params, sorted(params)  # the others still are
    found = [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL and "`wKV`" in f.message]
    assert len(found) == 1 and found[0].severity == Severity.IMPORTANT, found  # said once, as IMPORTANT
    message = found[0].message
    assert "set again" in message and "wKV = 0.9" in message, message
    assert "when `congested(snapshots, 3.5)` does not hold keeps the evolved 0.15" in message, message


def test_a_regimes_weight_is_probed_across_what_decides_the_regime(analyze_text):
    """congestedKVWeight weighs the KV term only under congestion: probes on KV alone never congest the pool, so it
    went untested until its candidates also varied the queues the condition reads."""
    an = analyze_text(_text())
    params = _params(an)
    assert "queue" in anchors(an, params["congestedKVWeight"], "routing"), params["congestedKVWeight"]
    assert params["congestedKVWeight"].regime[3] == ("QueueDepth",), params["congestedKVWeight"]


@pytest.mark.slow
def test_the_plugin_reads_each_regimes_weights_from_its_parameters_and_builds(dictionary):
    _, _, tr = translate_path(REGIME, dictionary)
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    assert (
        "wBase, wQueue, wKV := ws.params.CalmBaseWeight, ws.params.CalmQueueWeight, ws.params.CalmKVWeight" in evolved
    ), evolved
    assert re.search(
        r"wBase, wQueue, wKV = ws\.params\.CongestedBaseWeight, ws\.params\.CongestedQueueWeight, "
        r"ws\.params\.CongestedKVWeight",
        evolved,
    ), evolved
    assert not [f for f in tr.findings if f.check.startswith("toolchain.")], tr.findings
    tests = "".join(t for p, t in tr.files.items() if p.endswith("_test.go"))
    for name in WANTED:  # each regime's weight is exercised, as any single weight is
        assert f'"{name} is live: ' in tests, name
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")
