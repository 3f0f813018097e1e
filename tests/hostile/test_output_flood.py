"""An evolved program that prints on every call: the bot keeps a bounded part of it, stops it, and says so.

Printing is only an IMPORTANT safety finding, so such a program is built and run. The differential harness
calls it for every sampled state, and the bot reads what it prints outside the sandbox: unbounded, a few
bytes per call became gigabytes in the bot itself. Here a real evolved program prints 16 kB per call, and
the limits are small so that the test stays fast.
"""

from __future__ import annotations

import re
import shutil

import orjson
import pytest

from bot import PROJECT_ROOT, sandbox
from bot.dictionary import load_dictionary
from bot.execution import DirectExecutor
from bot.golang import harness_build, harness_run, toolchain
from bot.golang.analyze import analyze
from bot.golang.harness_failed import CHECK_OUTPUT_FLOOD
from bot.golang.safety import check_evolved_text
from bot.golang.source import parse_evolved_source
from bot.golang.translate import CHECK_NOT_MEASURED, translate
from bot.sandbox import Limits, Mounts

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap cannot start on this machine"),
]

PRINT = 16 << 10
KEPT = 4 << 10
#: Room for the line that says how much was not kept.
GAP = 200


def _printing_program() -> str:
    base = (PROJECT_ROOT / "tests" / "hostile" / "corpus" / "h08_go_generate.go").read_text()
    body = f'\tfmt.Printf("%0{PRINT}d\\n", len(snapshots))\n'
    return re.sub(r"(?m)^//go:generate.*\n", "", base).replace("\t// EVOLVE-BLOCK-END", body + "\t// EVOLVE-BLOCK-END")


class _Keep:
    """The executor translate uses (the real one), remembering the harness request it ran."""

    def run(self, request):
        self.request = request
        return DirectExecutor().run(request)


@pytest.fixture(scope="module")
def printing(tmp_path_factory):
    """(translation, harness binary, harness input) for the printing program, with the default limits."""
    text = _printing_program()
    assert [(f.check, f.severity.value) for f in check_evolved_text(text, "p.go")] == [("safety.print", "IMPORTANT")]
    dictionary, src, keep = load_dictionary(), parse_evolved_source(text, "prints.go"), _Keep()
    tr = translate(src, analyze(src, dictionary), dictionary, plugin_type="t-prints", executor=keep, states=50)
    binary, log = harness_run.build(keep.request.files)
    assert binary is not None, log
    return tr, binary, harness_build.with_states(keep.request.args["input"])


def test_what_the_harness_prints_is_kept_bounded_and_counted(printing, tmp_path):
    _, binary, inp = printing
    shutil.copy2(binary, tmp_path / harness_run.BINARY)
    (tmp_path / "input.json").write_bytes(orjson.dumps(inp))
    res = sandbox.run(
        [str(tmp_path / harness_run.BINARY), "input.json", "output.json"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        mounts=Mounts(read_write=(tmp_path,)),
        limits=Limits(wall_seconds=120, kept_bytes=KEPT),
    )
    assert res.returncode == 0 and res.limit is None, res.stderr
    assert res.dropped > 100 * PRINT  # it printed on every one of hundreds of calls...
    assert len(res.stdout) <= 2 * KEPT + GAP  # ...and the bot holds only the first and last 4 kB of it
    assert f"[... {res.dropped} bytes not kept" in res.stdout


def test_a_harness_that_prints_past_the_output_limit_is_stopped_and_the_translation_says_why(printing, monkeypatch):
    _, binary, inp = printing
    small = Limits(wall_seconds=120, cpu_seconds=120, output_bytes=1 << 20, kept_bytes=KEPT)
    out, log = harness_run.run(binary, inp, limits=small)
    assert out is None
    assert log.startswith("the harness was stopped by the sandbox's output limit (1 MiB written to standard output")
    assert "prints on every call" in log and "\n" not in log

    monkeypatch.setattr(harness_run, "RUN_LIMITS", small)
    text = _printing_program()
    dictionary, src = load_dictionary(), parse_evolved_source(text, "prints.go")
    tr = translate(src, analyze(src, dictionary), dictionary, plugin_type="t-prints", states=50)
    # Found by a red-team pass: this was IMPORTANT only (fidelity unknown), though in the EPP the plugin would
    # write to its standard output on every request. Now CRITICAL, beside the static print warning.
    flood = [f for f in tr.findings if f.check == CHECK_OUTPUT_FLOOD]
    assert [f.severity.value for f in flood] == ["CRITICAL"]
    assert "prints on every call: the harness was stopped by the sandbox's output limit (1 MiB" in flood[0].message
    assert "standard output on every request" in flood[0].message and "delete" in flood[0].fix
    assert "print" in flood[0].fix and flood[0].file and flood[0].line
    assert [f.severity.value for f in tr.findings if f.check == "safety.print"] == ["IMPORTANT"]
    assert not [f for f in tr.findings if f.check == CHECK_NOT_MEASURED]  # the CRITICAL says it, once
    assert tr.summary.fidelity is not None and not tr.summary.fidelity.measured


def test_an_answer_larger_than_its_bound_is_refused_unread(printing):
    """What the evolved code returns goes into the answer; one past its bound is never parsed by the bot."""
    _, binary, inp = printing
    out, log = harness_run.run(binary, inp, limits=Limits(wall_seconds=120, cpu_seconds=120, file_bytes=4 << 10))
    assert out is None
    assert log.startswith("the harness's answer was larger than 4 kB, far more than an answer about these states")
    assert "returns huge values" in log


def test_go_test_of_a_plugin_that_prints_ends_at_the_output_limit_with_a_finding(printing, go_cache):
    tr, _, _ = printing
    # The plugin's own tests print ~10 kB of JSON; each call of this plugin prints 16 kB more.
    limits = Limits(wall_seconds=600, output_bytes=64 << 10)
    report = toolchain.check_plugin(
        tr.files,
        registration_import=tr.registration_import,
        registration_line=tr.registration_line,
        cache_dir=go_cache,
        limits=limits,
        require_sandbox=True,
    )
    assert not report.test_ok
    limit = [f for f in report.findings if f.check == toolchain.CHECK_LIMIT]
    assert [(f.severity.value, f.message) for f in limit] == [
        ("CRITICAL", "go test: stopped by the sandbox's output limit (64 kB written to standard output and error)")
    ]
    assert "fmt.Print*" in limit[0].fix and "must not print" in limit[0].fix


def test_go_test_output_cut_in_the_middle_is_said_to_be_partial(printing, go_cache):
    tr, _, _ = printing
    report = toolchain.check_plugin(
        tr.files,
        registration_import=tr.registration_import,
        registration_line=tr.registration_line,
        cache_dir=go_cache,
        limits=Limits(wall_seconds=600, kept_bytes=2 << 10),
        require_sandbox=True,
    )
    partial = [f for f in report.findings if f.check == toolchain.CHECK_LIMIT]
    assert len(partial) == 1 and partial[0].severity.value == "IMPORTANT"
    assert "go test: printed" in partial[0].message and "may be short" in partial[0].message
    assert len(report.output) < 64 << 10
    # Found by a red-team pass: a result lost in the cut read as "test ok (4 passed)" when 5 tests ran. The tests
    # the files declare are counted, and those without a surviving result are said to be unknown.
    declared = toolchain.declared_tests(tr.files)
    assert declared >= 3
    assert report.tests_lost > 0 and report.tests_passed + report.tests_failed + report.tests_lost == declared
    assert report.test_counts.endswith("unknown (the go test output was cut and lost their results)")
