"""A stateful admitter's generated test stays readable, and the report accounts for every parameter once.

A trial's per-tenant class-budget admitter (fixture ``admission_class_budget.go``: a refilling token budget per
tenant and SLO class, and a floor on free KV blocks) got a test file with one 7,427-character line, the 48
warm-up requests of a burst spelled out, and endpoint rows of 300 characters. Its report said "none: no
parameter could be exercised" while four parameters decided its burst rows, and named those four nowhere.
"""

from __future__ import annotations

import re

import pytest

from bot.golang.golines import WIDTH, width, wrap

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
    """Every line of the generated Go files (plugin and test) past WIDTH, a subtest's name aside, and the evolved
    logic's own statements in evolved.go (indented: inside the source's functions), which keep the layout the
    source gave them with the parameters' names put in (the example's KV-pressure line)."""
    return [
        f"{path.rsplit('/', 1)[-1]}: {ln[:160]}"
        for path, text in tr.files.items()
        if path.endswith(".go")
        for ln in text.splitlines()
        if width(ln) > WIDTH and not _NAME_LINE.match(ln) and not (path.endswith("/evolved.go") and ln[:1] == "\t")
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
