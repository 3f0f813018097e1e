"""A stateful admitter's generated test stays readable, and the report accounts for every parameter once.

A trial's per-tenant class-budget admitter (fixture ``admission_class_budget.go``: a refilling token budget per
tenant and SLO class, and a floor on free KV blocks) got a test file with one 7,427-character line, the 48
warm-up requests of a burst spelled out, and endpoint rows of 300 characters. Its report said "none: no
parameter could be exercised" while four parameters decided its burst rows, and named those four nowhere.
"""

from __future__ import annotations

import re

import pytest

from bot.golang.golines import WIDTH, same_code, width, wrap, wrap_statements

from .conftest import CORPUS, EXAMPLE, FIXTURES, translate_path

CLASS_BUDGET = FIXTURES / "admission_class_budget.go"
S02 = CORPUS / "s02_sjf_starvation_guard.go"
#: A subtest's name stays one string: ``go test`` prints it, and the reader greps the file for it (a table row's
#: ``name:`` or a ``t.Run`` whose function opens on the next line).
_NAME_LINE = re.compile(r'^\t+(?:name:\s+|t\.Run\()"(?:[^"\\]|\\.)*",$')


@pytest.fixture(scope="module")
def budget(dictionary):
    return translate_path(CLASS_BUDGET, dictionary, "evolved-class-budget-admission")


@pytest.mark.slow
def test_a_burst_is_one_helper_call_and_no_generated_line_runs_past_the_width(budget):
    _, _, tr = budget
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    long = [ln for ln in test.splitlines() if width(ln) > WIDTH and not _NAME_LINE.match(ln)]
    assert not long, [ln[:160] for ln in long]
    assert re.search(r"warmups:\s+burst\(0, 48, scheduling\.InferenceRequest\{", test), test
    assert 'RequestID: "w-1"' not in test  # the burst numbers its copies, nothing spells them out
    assert "func burst(first, n int, r scheduling.InferenceRequest) []*scheduling.InferenceRequest {" in test


def _long_lines(tr) -> list[str]:
    """Every line of the generated Go files (plugin and test) past WIDTH, a subtest's name aside; the evolved
    logic's own statements too (the example's KV-pressure line ran to 145 columns with the parameters put in)."""
    return [
        f"{path.rsplit('/', 1)[-1]}: {ln[:160]}"
        for path, text in tr.files.items()
        if path.endswith(".go")
        for ln in text.splitlines()
        if width(ln) > WIDTH and not _NAME_LINE.match(ln)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "plugin_type"),
    [
        (EXAMPLE, "evolved-adaptive-scorer"),  # a router with a scorers list, as conftest.toolchain_run names it
        (S02, None),  # a scheduler: its queue helpers and TestQueueBehaviour
        (CLASS_BUDGET, "evolved-class-budget-admission"),
    ],
    ids=["example-router", "s02-scheduler", "class-budget-admitter"],
)
def test_no_generated_go_line_runs_past_the_width(dictionary, path, plugin_type):
    """The scorer and scheduler templates held fixed lines of 130 to 190 columns (the scorers default, scoreWith's
    signature, the newRouterState calls, the queue helpers' messages, Score's signature): each is broken where Go
    allows, in the test file and in the plugin's own files."""
    _, _, tr = translate_path(path, dictionary, plugin_type)
    assert not _long_lines(tr), _long_lines(tr)


@pytest.mark.slow
def test_the_report_names_every_evolved_parameter_once_as_tested_or_untested(budget):
    _, an, tr = budget
    section = tr.report_markdown.split("## Generated tests", 1)[1].split("\n## ", 1)[0]
    assert "none: no parameter could be exercised" not in section
    listed = re.findall(r"^- `(\w+)`: (.*)$", section, re.M)
    params = [th.param for th in an.thresholds if th.param]
    assert len(params) == 8, params
    assert sorted(p for p, _ in listed) == sorted(params), listed
    tested = section.split("Not exercised", 1)[0]
    # The burst rows' parameters are exercised by a named behaviour row, the others say why not.
    for param in ("otherCapacity", "otherRefillPerSec", "minFreeThreshold", "minFreeFactor"):
        assert re.search(rf'^- `{param}`: Test\w+ "', tested, re.M), section
    for param, why in listed:
        assert why.strip(), param


def test_wrap_hugs_the_last_literal_and_leaves_what_fits():
    call = 'testEndpoint("pod-a", &fwkdl.Metrics{WaitingQueueSize: 32, RunningRequestsSize: 64, KVCacheUsagePercent: 0.97})'
    assert wrap(call, 1, 4) == call
    got = wrap("[]scheduling.Endpoint{" + call + ", " + call.replace("pod-a", "pod-b") + "}", 3, 23)
    assert got.splitlines()[:2] == ["[]scheduling.Endpoint{", '\t\t\t\ttestEndpoint("pod-a", &fwkdl.Metrics{'], got
    assert got.endswith("\t\t\t}") and all(width("\t\t\t" + ln) <= WIDTH for ln in got.splitlines()), got
    # A string literal is never split, whatever it holds.
    quoted = '&x.T{Name: "a, b {c}", Other: ' + '"' + "y" * 130 + '"}'
    assert '"a, b {c}"' in wrap(quoted, 0, 0) and ("y" * 130) in wrap(quoted, 0, 0)


#: The corpus's evolved statements that ran past WIDTH once their literals were parameters (indent, statement).
_CARRIED_LONG = [
    (
        3,
        (
            "adj *= math.Max(ws.params.KVUtilizationFloor, 1.0-ws.params.KVUtilizationCoeff*(snap.KVUtilization-"
            "ws.params.KVUtilizationThreshold))"
        ),
    ),
    (
        2,
        (
            "scores[snap.ID] -= ws.params.KVUtilizationCoeff * (snap.KVUtilization - ws.params.KVUtilizationThreshold) / "
            "ws.params.KVUtilizationDivisor"
        ),
    ),
    (
        3,
        (
            "a.typicalLoad = a.params.TypicalLoadDecay*a.typicalLoad + a.params.TypicalLoadSampleWeight*(a.windowLoadSum/"
            "float64(a.windowSamples))"
        ),
    ),
    (
        1,
        (
            "if maxKVUtil > a.params.MaxKVUtilThreshold || (avgKVUtil > a.params.AvgKVUtilThreshold && minFreeKV < "
            "a.params.MinFreeKVThreshold) {"
        ),
    ),
    (
        1,
        (
            'return routingDecision{TargetInstance: best.ID, Reason: fmt.Sprintf("least-loaded (%d)", '
            "best.EffectiveLoad()), Priority: boost}"
        ),
    ),
]


@pytest.mark.parametrize(("indent", "stmt"), _CARRIED_LONG)
def test_a_long_carried_statement_breaks_where_go_allows_and_stays_the_same_code(indent, stmt):
    line = "\t" * indent + stmt
    assert width(line) > WIDTH
    got = wrap_statements(line)
    assert all(width(ln) <= WIDTH for ln in got.splitlines()), got
    assert len(got.splitlines()) > 1 and same_code(line, got)
    for ln in got.splitlines()[:-1]:  # every break is one after which Go inserts no semicolon
        assert ln.rstrip().endswith(("(", "{", ",", "||", "&&", "+", "-", "*", "/")), got


def test_a_parenthesised_expression_a_comment_or_a_short_line_is_never_broken():
    paren = "\t\tx = " + "a" * 60 + " * (" + "b" * 40 + " - " + "c" * 40 + ")"
    got = wrap_statements(paren)
    assert ",)" not in got.replace("\n", "").replace("\t", "") and "(" + "b" * 40 in got, got
    assert same_code(paren, got)
    commented = "\t\tx := f(" + ", ".join(["arg"] * 30) + ") // why"
    assert wrap_statements(commented) == commented
    assert wrap_statements("\tx := f(a, b)") == "\tx := f(a, b)"
    assert (
        wrap_statements("func f(" + ", ".join(["a int"] * 30) + ") {") == "func f(" + ", ".join(["a int"] * 30) + ") {"
    )
