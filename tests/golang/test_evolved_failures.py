"""An evolved program that panics on some states, through the real Go harness: never silently left out.

Found by a red-team pass: a program that panics whenever a pool has 3 endpoints was translated with 0
findings, "test ok" and 98.7% fidelity; the 148 states it panicked on were dropped from the denominator.
In llm-d the plugin recovers the panic, scores every endpoint 0 and logs the failure (at most one a minute).
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
    text = _panics_with_3_endpoints('"boom"')
    tr = _translate(text, dictionary)
    panic_line = next(i for i, ln in enumerate(text.splitlines(), 1) if 'panic("boom")' in ln)
    f = tr.summary.fidelity
    assert f is not None and f.measured and f.errors > 0
    [blis] = f.failures
    assert (blis.side, blis.message, blis.plugin_too) == ("blis", "boom", blis.states)  # the plugin fails there too
    assert blis.example.count(" BLIS q=") == 3 and blis.shapes == f"3 endpoints ({blis.states})"
    [found] = [x for x in tr.findings if x.check == CHECK_FAILS]
    assert found.severity.value == "CRITICAL"  # far more than the 5% the 95% floor lets disagree
    assert (
        f"the evolved program itself fails in BLIS at evolved line {panic_line} on {blis.states} of "
        f"{f.states + f.errors} sampled" in found.message
    ), found.message
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


def test_the_failure_points_at_the_evolved_line_that_panics_and_shows_the_inputs(dictionary):
    """Found by an llm-d maintainer: a program indexing an empty slice when a queue passes 30 got a CRITICAL finding
    anchored at the plugin's Score() with the example "request req-2 (12 tokens), 3 endpoints", which omits the
    queue depths that trigger it. The panic's stack names the evolved line; the example prints each endpoint."""
    base = (PROJECT_ROOT / "examples" / "corpus" / "r01_pattern_a_penalties.go").read_text()
    anchor = "\t\tif load > 7 {\n\t\t\tscores[snap.ID] *= 0.4"
    panics = (
        "\t\tif snap.QueueDepth > 30 {\n\t\t\tvar arr []float64\n\t\t\tscores[snap.ID] *= arr[snap.QueueDepth]\n\t\t}\n"
    )
    text = base.replace(anchor, panics + anchor, 1)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "arr[snap.QueueDepth]" in ln)
    src = parse_evolved_source(text, "r01_panic.go")
    tr = translate(src, analyze(src, dictionary), dictionary, plugin_type="t-r01-panic", states=300)
    [found] = [x for x in tr.findings if x.check == CHECK_FAILS]
    assert found.source_line == line and f"fails in BLIS at evolved line {line} on" in found.message
    assert (
        found.file.endswith("/evolved.go")
        and "arr[snap.QueueDepth]" in tr.files[found.file].splitlines()[found.line - 1]
    )
    assert re.search(r"e\.g\. request \S+ \(\d+ tokens\); \S+: BLIS q=\d+ b=\d+ inflight=\d+ kv=", found.message)


_LOGGED_TEXT_TEST = """package tpanics

import (
	"fmt"
	"testing"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

func TestAPanicsTextIsCutBeforeItIsLogged(t *testing.T) {
	s := NewTPanics(DefaultParameters())
	var eps []scheduling.Endpoint
	for i := 0; i < 3; i++ {
		eps = append(eps, testEndpoint(fmt.Sprintf("e%d", i), &fwkdl.Metrics{WaitingQueueSize: i}))
	}
	state, _ := newRouterState(eps, newDataKeys(DefaultParameters()))
	_, err := s.route(newBlisRequest(), state)
	if err == nil || len(err.Error()) > 600 {
		t.Fatalf("want a recovered panic of at most 600 bytes, got %d bytes", len(fmt.Sprint(err)))
	}
}
"""


def test_the_plugin_logs_a_panics_text_cut_short_not_megabytes_per_request(dictionary):
    """Found by a red-team pass: the plugin recovers the evolved panic and logs its text on every request that
    fails; a 4 MiB panic text was 4 MiB of log and 12 MB of allocation per request in the EPP."""
    from bot.golang.toolchain import check_plugin

    tr = _translate(_panics_with_3_endpoints('strings.Repeat("A", 4<<20)'), dictionary)
    files = dict(tr.files) | {f"{tr.summary.package_dir}/logged_text_test.go": _LOGGED_TEXT_TEST}
    report = check_plugin(files)
    assert "TestAPanicsTextIsCutBeforeItIsLogged" in report.output and "--- FAIL" not in report.output, report.output[
        -2000:
    ]


_SITE_TEST = """package tr01llmdpanic

import (
	"strings"
	"testing"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

func TestTheLoggedPanicNamesItsEvolvedLine(t *testing.T) {
	s := NewTR01LlmdPanic(DefaultParameters())
	req := &scheduling.InferenceRequest{RequestID: "r"}
	eps := []scheduling.Endpoint{testEndpoint("e0", &fwkdl.Metrics{})}
	state, _ := newRouterState(eps, newDataKeys(DefaultParameters()))
	_, err := s.route(newBlisRequest(req), state)
	if err == nil || !strings.Contains(err.Error(), "panicked at evolved.go:LINE: runtime error: integer divide by zero") {
		t.Fatalf("want the line of evolved.go in the error, got %v", err)
	}
}
"""


def test_a_panic_only_the_llmd_mapping_causes_points_at_the_evolved_line_and_its_plugin_line(dictionary):
    """Found by a fresh-eyes pass: a panic in the plugin alone (BLIS never gives the value that triggers it) got
    ``translate.evolved-code-fails`` anchored at the plugin's Score() with no line: the plugin recovers it, and the
    harness saw only the logged text. Here llm-d's TotalKvCapacityTokens is 0 on an engine that does not publish
    its KV block counts (BLIS always has a capacity), so the evolved division by it panics in the plugin only.
    The plugin's own error (what the EPP logs) names the line of its evolved.go too."""
    from bot.golang.toolchain import check_plugin

    base = (PROJECT_ROOT / "examples" / "corpus" / "r01_pattern_a_penalties.go").read_text()
    anchor = "\t\tif load > 7 {\n\t\t\tscores[snap.ID] *= 0.4"
    panics = "\t\tscores[snap.ID] += float64(1000 / snap.TotalKvCapacityTokens)\n"
    text = base.replace(anchor, panics + anchor, 1)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "1000 / snap.TotalKvCapacityTokens" in ln)
    src = parse_evolved_source(text, "r01_llmd_panic.go")
    tr = translate(src, analyze(src, dictionary), dictionary, plugin_type="t-r01-llmd-panic", states=300)
    [plugin] = tr.summary.fidelity.failures
    assert plugin.side == "plugin" and plugin.message.endswith("panicked: runtime error: integer divide by zero")
    [found] = [x for x in tr.findings if x.check == CHECK_FAILS]
    assert found.source_line == line and f"the plugin fails at evolved line {line} " in found.message, found.message
    assert found.file.endswith("/evolved.go")
    assert "1000 / snap.TotalKvCapacityTokens" in tr.files[found.file].splitlines()[found.line - 1]
    assert f"(evolved.go:{found.line})" in found.message
    test = _SITE_TEST.replace("LINE", str(found.line))
    report = check_plugin(dict(tr.files) | {f"{tr.summary.package_dir}/site_test.go": test})
    # (the generated tests fail on this program: their endpoints publish no KV blocks either)
    assert "--- PASS: TestTheLoggedPanicNamesItsEvolvedLine" in report.output, report.output[-2000:]


def test_a_panic_text_is_inert_markdown_in_every_table_of_the_committed_report(dictionary):
    """Found by a red-team pass: the panic text went raw into the report's Findings table (only `|` and line breaks
    were escaped), so a program could put a working link, an image, raw HTML or a hidden comment into the gate-1
    document committed to the PR branch. The same text elsewhere in the report was already escaped."""
    payload = (
        "cc @octocat see [docs](https://evil.example/x) <img src=x> <!-- promotion-bot:state --> "
        "![i](https://evil.example/i.png) | cell"
    )
    tr = _translate(_panics_with_3_endpoints('"' + payload + '"'), dictionary)
    report = tr.report_markdown
    [row] = [ln for ln in report.splitlines() if ln.startswith(f"| CRITICAL | `{CHECK_FAILS}#")]
    for raw in ("[docs](", "![i](", "<img", "<!--", " @octocat", " | cell"):
        assert raw not in report, raw
    assert "`@octocat` see \\[docs\\](https://evil.example/x) &lt;img src=x> &lt;!-- promotion-bot:state -->" in row
    assert "!\\[i\\](https://evil.example/i.png) \\| cell" in row
    assert row.count(" | ") == 5  # the row still has its six cells


def test_a_score_that_is_not_a_number_is_measured_not_a_harness_crash(dictionary):
    """Found by a researcher: a router whose knee field was zero scored an idle endpoint 0/0, and fidelity read
    "unknown: promotion-harness: json: unsupported value: NaN", with a fix blaming a crash of the evolved code.
    JSON has no NaN or infinity; the harness names them and the bot reads them back as floats."""
    base = (PROJECT_ROOT / "tests" / "hostile" / "corpus" / "h08_go_generate.go").read_text()
    body = (
        "\tif len(snapshots) == 3 {\n\t\tzero := 0.0\n\t\tscores[snapshots[0].ID] = zero / zero\n"
        "\t\tscores[snapshots[1].ID] = 1 / zero\n\t}\n"
    )
    text = re.sub(r"(?m)^//go:generate.*\n", "", base).replace("\t// EVOLVE-BLOCK-END", body + "\t// EVOLVE-BLOCK-END")
    assert "scores[" in text and "zero / zero" in text
    tr = _translate(text, dictionary)
    f = tr.summary.fidelity
    assert f is not None and f.measured, f
    assert not [x for x in tr.findings if x.check == "translate.fidelity-not-measured"], tr.findings
    [note] = [n for n in f.notes if n.startswith("the BLIS original scored an endpoint NaN or infinite in ")]
    assert "a division by zero in the evolved code?" in note and "in the report" not in note
    assert note in tr.report_markdown
