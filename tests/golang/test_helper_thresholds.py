"""A number passed to a helper that compares a signal with it is a threshold parameter (flow_args.py,
arg_thresholds.py): ``ws.overloaded(snap, 0.85)`` where ``overloaded`` tests ``s.KVUtilization > limit``, the same
helper given a constant (``ws.overloaded(snap, kvLimit)``), a plain function ``busy(snap.QueueDepth, 12)`` testing
``q >= max`` (fixtures/routing_helper_compare.go) and an admitter's ``g.saturated(snap, 8)`` on its queue
(admission_helper_compare.go). They once kept their literal with a finding (the branch they decide is in the
helper), so the plugin hard-coded the threshold an operator most wants to tune, with no test of its boundary. Each
is now read from its parameter at the call, named by the helper's parameter and the signal compared, documented
with the comparison's direction, and probed at the helper's comparison, where the harness watches it only for the
calls that pass it."""

from __future__ import annotations

import re

import pytest

from bot.golang import probes
from bot.golang.carry import GoNames, carry_function
from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.params import param_specs
from bot.golang.translate import CHECK_UNTESTED

from .conftest import FIXTURES, passes_with_test, translate_path

ROUTER = FIXTURES / "routing_helper_compare.go"
ADMITTER = FIXTURES / "admission_helper_compare.go"


def _params(an) -> dict:
    return {th.param: th for th in an.thresholds if th.param}


def _unlisted(an) -> list:
    return [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL]


@pytest.mark.parametrize(
    ("path", "want"),
    [
        (
            ROUTER,
            {
                # a literal passed to a method helper: its parameter's name after the signal compared
                "kvUtilizationLimit": (0.85, "float64", ["KVUtilization"], ">", "s.KVUtilization"),
                # a constant passed to the same helper: named by the constant, as everywhere
                "kvLimit": (0.92, "float64", ["KVUtilization"], ">", "s.KVUtilization"),
                # a plain function's parameter compared with another of its parameters: the argument passed there
                "maxQueueDepth": (12, "int", ["QueueDepth"], ">=", "snap.QueueDepth"),
            },
        ),
        (ADMITTER, {"queueDepthLimit": (8, "int", ["QueueDepth"], ">=", "snap.QueueDepth")}),
    ],
)
def test_a_number_passed_to_a_helper_that_compares_a_signal_with_it_is_a_threshold_parameter(analyze_text, path, want):
    an = analyze_text(path.read_text(encoding="utf-8"))
    params = _params(an)
    for name, (value, go_type, signals, op, subject) in want.items():
        th = params.get(name)
        assert th is not None, [(t.param, t.value, t.role, t.reason) for t in an.thresholds]
        assert (th.value, th.go_type, th.role, th.signals, th.subject) == (
            value,
            go_type,
            "threshold",
            signals,
            subject,
        )
        assert th.reason is None and [o.op for o in th.occurrences] == [op], th.occurrences
    assert not [f for f in _unlisted(an) if "is passed to" in f.message], an.findings


def test_its_lines_are_the_calls_that_pass_it(analyze_text):
    text = ROUTER.read_text(encoding="utf-8")
    an = analyze_text(text)
    lines = text.splitlines()
    for name, call in (
        ("kvUtilizationLimit", "ws.overloaded(snap, 0.85)"),
        ("kvLimit", "ws.overloaded(snap, kvLimit)"),
        ("maxQueueDepth", "busy(snap.QueueDepth, 12)"),
    ):
        th = _params(an)[name]
        assert th.lines and all(call in lines[n - 1] for n in th.lines), (name, th.lines)


def test_a_helper_called_with_two_numbers_gives_two_parameters_and_one_number_twice_one(analyze_text):
    text = ROUTER.read_text(encoding="utf-8").replace("ws.overloaded(snap, kvLimit)", "ws.overloaded(snap, 0.95)")
    an = analyze_text(text)
    limits = sorted((th.value, th.param) for th in an.thresholds if "KVUtilization" in th.signals and th.param)
    assert limits == [(0.85, "kvUtilizationLowLimit"), (0.95, "kvUtilizationHighLimit")], an.thresholds
    same = analyze_text(text.replace("ws.overloaded(snap, 0.95)", "ws.overloaded(snap, 0.85)"))
    limits = [th for th in same.thresholds if "KVUtilization" in th.signals and th.param]
    assert len(limits) == 1 and len(limits[0].occurrences) == 2, same.thresholds


@pytest.mark.parametrize(
    ("path", "name", "words"),
    [
        (ROUTER, "kvUtilizationLimit", ("`overloaded`", "as `limit`", "`s.KVUtilization > limit`", "is above it")),
        (ROUTER, "kvLimit", ("the evolved constant `kvLimit`", "`overloaded`", "is above it")),
        (ROUTER, "maxQueueDepth", ("`busy`", "as `max`", "`q >= max`", "is at or above it", "A deep queue halves")),
        (ADMITTER, "queueDepthLimit", ("`saturated`", "`snap.QueueDepth >= limit`", "is at or above it")),
    ],
)
def test_its_doc_names_the_helper_and_the_comparisons_direction(analyze_text, path, name, words):
    an = analyze_text(path.read_text(encoding="utf-8"))
    doc = next(s.doc for s in param_specs(an, None, False) if s.name == name)
    for w in words:
        assert w in doc, doc


def test_the_harness_watches_the_helpers_comparison_only_for_the_calls_that_pass_each_parameter(analyze_text):
    text = ROUTER.read_text(encoding="utf-8")
    an = analyze_text(text)
    src = an.src
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, untested = probes.specs(an, defaults, "routing")
    by_name = {s["name"]: s for s in specs}
    helper = next(f for f in an.helpers if f.name == "overloaded")
    watched = carry_function(src, an, helper, GoNames(), instrument=True).text
    for name, value in (("kvUtilizationLimit", "0.85"), ("kvLimit", "0.92")):
        spec = by_name[name]
        assert spec["role"] == "threshold" and spec["op"] == ">", spec
        assert spec["candidates"], spec  # the probe varies the KV cache the helper compares
        assert f'promotionWatchIf("{spec["watch"]}", ' in watched and f"limit == {value})" in watched, watched
    plain = next(f for f in an.helpers if f.name == "busy")
    busy = carry_function(src, an, plain, GoNames(), instrument=True).text
    assert re.search(r'promotionWatchIf\("maxQueueDepth@\d+", q, max == 12\) >= max', busy), busy
    assert not [u for u in untested if "kvUtilizationLimit" in u or "maxQueueDepth" in u], untested


def test_a_helper_whose_parameter_is_set_again_is_not_followed(analyze_text):
    text = ROUTER.read_text(encoding="utf-8").replace(
        "\treturn s.KVUtilization > limit", "\tlimit = limit * 1.0\n\treturn s.KVUtilization > limit"
    )
    an = analyze_text(text)
    assert not [th for th in an.thresholds if th.value in (0.85, 0.92) and th.param], an.thresholds


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "reads", "tested"),
    [
        (
            ROUTER,
            ("ws.overloaded(snap, ws.params.KVLimit)", "ws.overloaded(snap, ws.params.KVUtilizationLimit)"),
            ("kvUtilizationLimit=0.85", "kvLimit=0.92", "maxQueueDepth=12"),
        ),
        (ADMITTER, ("g.saturated(snap, g.params.QueueDepthLimit)",), ("queueDepthLimit=8",)),
    ],
)
def test_the_plugin_reads_each_from_its_parameter_tests_its_boundary_and_builds(dictionary, path, reads, tested):
    _, _, tr = translate_path(path, dictionary)
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    for read in reads:
        assert read in evolved, evolved
    assert "promotionWatch" not in evolved and not re.search(r"\bkvLimit\b", evolved.split("package", 1)[1])
    if path == ROUTER:
        assert re.search(r"busy\(snap\.QueueDepth, ws\.params\.MaxQueueDepth\)", evolved), evolved
    untested = [f.message for f in tr.findings if f.check == CHECK_UNTESTED]
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go") and "zz_" not in p)
    for case in tested:  # a case each side of the helper's comparison, chosen on the compiled plugin
        name = case.split("=")[0]
        assert not [u for u in untested if f"`{name}`" in u], untested
        assert f'name: "{case}: ' in test, test
    assert not [f for f in tr.findings if f.check.startswith("toolchain.")], tr.findings
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")


@pytest.mark.parametrize(
    ("signature", "compare", "name"),
    [
        ("limit float64", "s.KVUtilization > limit", "kvUtilizationLimit"),  # a bare role word after the signal
        ("min float64", "s.KVUtilization < min", "minKVUtilization"),  # max and min before it
        ("kvCeiling float64", "s.KVUtilization > kvCeiling", "kvCeiling"),  # a name that says its role, kept
        ("t float64", "t < s.KVUtilization", "kvUtilizationThreshold"),  # a letter says nothing
        ("hot float64", "s.KVUtilization >= hot", "hotThreshold"),  # any other name, its threshold
    ],
)
def test_it_is_named_by_the_helpers_parameter_and_the_signal_compared(analyze_text, signature, compare, name):
    text = (
        ROUTER.read_text(encoding="utf-8")
        .replace("limit float64) bool", signature + ") bool")
        .replace("return s.KVUtilization > limit", "return " + compare)
    )
    an = analyze_text(text)
    th = next(th for th in an.thresholds if th.value == 0.85)
    assert th.param == name and th.role == "threshold", (th.param, th.role)


def test_a_number_passed_only_in_a_branch_for_a_class_llm_d_never_sends_acts_only_there(analyze_text):
    text = ROUTER.read_text(encoding="utf-8").replace(
        "\t\t} else if ws.overloaded(snap, 0.85) {",
        '\t\t} else if req.SLOClass == "batch" && ws.overloaded(snap, 0.85) {',
    )
    an = analyze_text(text)
    th = next(th for th in an.thresholds if th.value == 0.85)
    assert th.param is None and th.dead_branch is not None, th  # the call's branch, not the helper's line
    assert _params(an)["kvLimit"].dead_branch is None
