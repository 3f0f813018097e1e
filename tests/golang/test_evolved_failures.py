"""An evolved program that panics on some states, through the real Go harness: never silently left out.

Found by a red-team pass: a program that panics whenever a pool has 3 endpoints was translated with 0
findings, "test ok" and 98.7% fidelity; the 148 states it panicked on were dropped from the denominator.
In llm-d the plugin recovers the panic, scores every endpoint 0 and logs an error on every such request.
"""

from __future__ import annotations

import re

from bot import PROJECT_ROOT
from bot.golang.analyze import analyze
from bot.golang.source import parse_evolved_source
from bot.golang.translate import CHECK_FAILS, translate


def _panics_with_3_endpoints(message: str) -> str:
    base = (PROJECT_ROOT / "tests" / "hostile" / "corpus" / "h08_go_generate.go").read_text()
    body = f"\tif len(snapshots) == 3 {{\n\t\tpanic({message})\n\t}}\n"
    text = re.sub(r"(?m)^//go:generate.*\n", "", base)
    text = text.replace("\t// EVOLVE-BLOCK-END", body + "\t// EVOLVE-BLOCK-END")
    return text.replace('"fmt"', '"fmt"\n\t"strings"') if "strings." in message else text


def _translate(text: str, dictionary):
    src = parse_evolved_source(text, "panics.go")
    return translate(src, analyze(src, dictionary), dictionary, plugin_type="t-panics", states=300)


def test_states_the_program_panics_on_are_a_blocking_finding_naming_the_shape_and_the_panic(dictionary):
    tr = _translate(_panics_with_3_endpoints('"boom"'), dictionary)
    f = tr.summary.fidelity
    assert f is not None and f.measured and f.errors > 0
    [blis] = f.failures
    assert (blis.side, blis.message, blis.plugin_too) == ("blis", "boom", blis.states)  # the plugin fails there too
    assert blis.example.endswith(", 3 endpoints") and blis.shapes == f"3 endpoints ({blis.states})"
    [found] = [x for x in tr.findings if x.check == CHECK_FAILS]
    assert found.severity.value == "CRITICAL"  # far more than the 5% the 95% floor lets disagree
    assert (
        f"the evolved program itself fails in BLIS on {blis.states} of {f.states + f.errors} sampled" in found.message
    )
    assert "3 endpoints" in found.message and ": boom; the plugin fails on" in found.message
    assert "left out" in tr.report_markdown and "The BLIS original itself failed on" in tr.report_markdown


def test_a_megabyte_panic_message_is_measured_and_quoted_short_not_a_harness_crash(dictionary):
    """The same with a 4 MiB panic text: it made the harness run out of memory, and fidelity was unknown."""
    tr = _translate(_panics_with_3_endpoints('strings.Repeat("A", 4<<20)'), dictionary)
    f = tr.summary.fidelity
    assert f is not None and f.measured, f
    [blis] = f.failures
    assert blis.message == "A" * 200 + f"... ({4 << 20} bytes)"
    [found] = [x for x in tr.findings if x.check == CHECK_FAILS]
    assert len(found.message) < 1000
