"""An evolved program that does not compile as BLIS Go is refused as CRITICAL, through the real Go harness.

Found by a researcher rehearsing their own program: a draft that left `"math"` imported and unused passed stages 1
and 2 with one IMPORTANT `translate.fidelity-not-measured` quoting the harness's build log, `promote translate`
exited 0, and seven `translate.untested-parameter` suggestions blamed the parameters though nothing had run. BLIS
could never have run that program (OpenEvolve scores it as a failure). A harness that fails to build for the bot's
own reasons (the generated plugin, the mirror) stays the IMPORTANT it was.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from bot.cli import main
from bot.execution import DirectExecutor
from bot.golang.analyze import analyze
from bot.golang.harness_failed import CHECK_DOES_NOT_COMPILE, HARNESS_DID_NOT_RUN
from bot.golang.source import parse_evolved_source
from bot.golang.translate import CHECK_NOT_MEASURED, CHECK_UNTESTED, translate

from .conftest import EXAMPLE

pytestmark = pytest.mark.slow


def _math_unused() -> str:
    """The bundled OpenEvolve program with both uses of `math` edited out, its import left behind."""
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("math.MaxFloat64", "1e308").replace(
        "math.Max(0.3, 1.0-2.0*(snap.KVUtilization-0.82))", "1.0-2.0*(snap.KVUtilization-0.82)"
    )
    assert "math." not in text and '\t"math"\n' in text
    return text


def test_a_program_with_an_unused_import_is_refused_naming_its_line_and_exits_2(tmp_path, capsys):
    text = _math_unused()
    line = text.splitlines().index('\t"math"') + 1
    src = tmp_path / "best_program.py"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["translate", str(src), "--out", str(out), "--no-check"]) == 2
    err = capsys.readouterr().err
    assert f"CRITICAL {CHECK_DOES_NOT_COMPILE} line {line}:" in err
    assert f'line {line}: "math" imported and not used' in err and "delete the import" in err
    findings = json.loads((out / "findings.json").read_text())
    [critical] = [f for f in findings if f["severity"] == "CRITICAL"]
    assert critical["check"] == CHECK_DOES_NOT_COMPILE and critical["source_line"] == line
    assert "does not compile as BLIS Go, so BLIS could not have run it" in critical["message"]
    # The one CRITICAL says it: no not-measured finding beside it, no parameter blamed for what never ran.
    assert not [f for f in findings if f["check"] in (CHECK_NOT_MEASURED, CHECK_UNTESTED)], findings
    report = (out / "translation-report.md").read_text()
    assert HARNESS_DID_NOT_RUN in report and "no llm-d input among the candidates" not in report


class _BreaksThePlugin:
    """The real harness, with the generated plugin broken the way a bot bug would break it."""

    def run(self, request):
        files = dict(request.files)
        [path] = [p for p in files if p.startswith("llm-d-router/") and p.endswith("/evolved.go")]
        files[path] += "\nvar _ = notDeclaredAnywhere\n"
        return DirectExecutor().run(dataclasses.replace(request, files=files))


def test_a_harness_that_fails_to_build_for_the_bot_s_reasons_stays_important_and_blames_no_parameter(dictionary):
    src = parse_evolved_source(EXAMPLE.read_text(encoding="utf-8"), "best_program.py")
    tr = translate(src, analyze(src, dictionary), dictionary, plugin_type="t-broken", executor=_BreaksThePlugin())
    assert not [f for f in tr.findings if f.check == CHECK_DOES_NOT_COMPILE]
    [unknown] = [f for f in tr.findings if f.check == CHECK_NOT_MEASURED]
    assert unknown.severity.value == "IMPORTANT" and "undefined: notDeclaredAnywhere" in unknown.message
    assert "no parameter got a generated test case either" in unknown.message
    assert "not the evolved program" in unknown.fix and "report the error above" in unknown.fix
    assert not [f for f in tr.findings if f.check == CHECK_UNTESTED]
