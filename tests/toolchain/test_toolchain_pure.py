"""The pure parts of the toolchain adapter: registration editing and output parsing."""

from __future__ import annotations

import json

import pytest

from bot import PROJECT_ROOT
from bot.golang import gooutput, toolchain
from bot.model import Severity

from .toolchain_samples import IMPORT, REGISTER

RUNNER = (PROJECT_ROOT / "gomirror" / "llm-d-router" / toolchain.RUNNER_GO).read_text()


def test_insert_registration_puts_a_scorer_with_the_scorers_and_its_import_in_sorted_place():
    """In the mirror, the scorer section (kv-cache, queue; Beta) gets the plugin under a new `// Alpha` heading, and
    the import goes, sorted, into llm-d-router's group (not a group of its own at the end)."""
    out = toolchain.insert_registration(RUNNER, IMPORT, REGISTER)
    body = out[out.index("registerInTreePlugins() {") :]
    body = body[: body.index("\n}\n")].splitlines()
    at = body.index("\t" + REGISTER)
    assert body[at - 2].endswith("queuedepth.QueueScorerFactory)") and body[at - 1] == "\t// Alpha"
    imports = out[out.index("import (") : out.index("\n)\n")].splitlines()
    i = imports.index("\t" + IMPORT)
    assert imports[i - 1].endswith('requestheader/agentidentity"') and imports[i + 1].endswith(
        'scorer/kvcacheutilization"'
    )


def test_insert_registration_with_no_section_of_its_kind_appends_at_the_end():
    imp = '"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/picker/evolvedpick"'
    reg = "fwkplugin.Register(evolvedpick.Type, fwkplugin.StabilityAlpha, evolvedpick.Factory)"
    out = toolchain.insert_registration(RUNNER, imp, reg)
    body = out[out.index("registerInTreePlugins() {") :]
    assert body[: body.index("\n}\n")].rstrip().splitlines()[-1] == "\t" + reg


def test_insert_registration_is_idempotent():
    once = toolchain.insert_registration(RUNNER, IMPORT, REGISTER)
    twice = toolchain.insert_registration(once, IMPORT, REGISTER)
    assert twice == once
    assert once.count(REGISTER) == 1 and once.count(IMPORT) == 1


def test_insert_registration_accepts_bare_and_aliased_imports():
    out = toolchain.insert_registration(
        RUNNER, "toy github.com/example/toy", "fwkplugin.Register(toy.Type, fwkplugin.StabilityAlpha, toy.Factory)"
    )
    assert '\t"github.com/example/toy"' in out  # the alias equal to the package's directory is dropped


def test_insert_registration_without_function_is_a_request_error():
    with pytest.raises(toolchain.RegistrationError, match="registerInTreePlugins"):
        toolchain.insert_registration("package runner\n\nfunc main() {}\n", IMPORT, REGISTER)


def test_insert_registration_rejects_empty_line():
    with pytest.raises(toolchain.RegistrationError):
        toolchain.insert_registration(RUNNER, IMPORT, "  ")


def test_parse_locations_splits_type_errors_from_vet_findings():
    out = (
        "# github.com/llm-d/llm-d-router/pkg/a\n"
        "vet: pkg/a/a.go:6:17: cannot use 3 (untyped int constant) as string value\n"
        './pkg/b/b.go:9:2: fmt.Printf format %d has arg "a" of wrong type string\n'
    )
    fs = gooutput.parse_locations(
        out, check="toolchain.vet", severity=Severity.IMPORTANT, type_error_check="toolchain.build"
    )
    assert [(f.check, f.severity, f.file, f.line) for f in fs] == [
        ("toolchain.build", Severity.CRITICAL, "pkg/a/a.go", 6),
        ("toolchain.vet", Severity.IMPORTANT, "pkg/b/b.go", 9),
    ]


def test_parse_test_json_counts_top_level_tests_only():
    pkg = "github.com/llm-d/llm-d-router/pkg/x"
    events = [
        {"Action": "run", "Package": pkg, "Test": "TestA"},
        {"Action": "output", "Package": pkg, "Test": "TestA/sub", "Output": "    x_test.go:12: got 1\n"},
        {"Action": "fail", "Package": pkg, "Test": "TestA/sub"},
        {"Action": "fail", "Package": pkg, "Test": "TestA"},
        {"Action": "pass", "Package": pkg, "Test": "TestB"},
        {"Action": "skip", "Package": pkg, "Test": "TestC"},
        {"Action": "fail", "Package": pkg},
    ]
    run = gooutput.parse_test_json("\n".join(json.dumps(e) for e in events))
    assert (run.passed, run.failed) == (1, 1)
    assert [(f.file, f.line) for f in run.findings] == [("pkg/x/x_test.go", 12)]


def test_first_changed_line():
    assert gooutput.first_changed_line("a\nb\nc\n", "a\nB\nc\n") == 2


def test_normalize_output_removes_run_specific_text():
    raw = "--- FAIL: TestA (0.01s)\nFAIL\tgithub.com/llm-d/llm-d-router/pkg/x\t0.004s\nvet: /tmp/promotion-go-ab12/llm-d-router/pkg/x/x.go:1:1: m"
    out = gooutput.normalize_output(raw)
    assert "0.01s" not in out and "0.004s" not in out and "promotion-go-ab12" not in out
    assert "$SCRATCH/llm-d-router/pkg/x/x.go:1:1: m" in out


def _slowest_ratio(fn, small: str, large: str) -> float:
    """How much longer ``fn`` takes on ``large`` than on ``small`` (best of five each): about their length ratio
    when ``fn`` is linear, its square when quadratic. A ratio, not a time, so a busy machine does not fail it."""
    import time

    def best(text: str) -> float:
        times = []
        for _ in range(5):
            start = time.perf_counter()
            fn(text)
            times.append(time.perf_counter() - start)
        return min(times)

    return best(large) / max(best(small), 1e-6)


def test_a_string_literal_of_100k_slashes_is_normalized_cut_and_fast():
    """go vet quotes an evolved string literal whole: 100,000 slashes took a quadratic regex over a minute."""
    literal = "/" * 100_000
    raw = (
        f'vet: /tmp/x/promotion-go-ab12/llm-d-router/pkg/x/x.go:3:9: fmt.Sprintf format %d has arg "{literal}" '
        "of wrong type string\n--- FAIL: TestA (0.01s)"
    )
    out = gooutput.normalize_output(raw)
    first, second = out.split("\n")
    assert first.startswith("vet: $SCRATCH/llm-d-router/pkg/x/x.go:3:9: fmt.Sprintf format %d has arg")
    assert first.endswith('" of wrong type string') and "characters cut]" in first
    assert len(first) < gooutput.LINE_CHARS + 50  # the line is bounded before any pattern reads it
    assert second == "--- FAIL: TestA (0s)"
    # The scratch-path rewrite itself is linear, even on a line nothing cut: 10x the slashes, about 10x the time.
    ratio = _slowest_ratio(gooutput.unscratch, "/" * 20_000 + "/promotion-go-x/y", "/" * 200_000 + "/promotion-go-x/y")
    assert ratio < 40, ratio
    assert gooutput.unscratch("/" * 200_000 + "/promotion-go-x/y") == "$SCRATCH/y"


def test_unscratch_replaces_what_the_old_pattern_did():
    """Every path through a scratch directory, from its first slash to the end of the last scratch name."""
    cases = {
        "a /tmp/promotion-go-ab12/llm-d-router/x.go:1 b": "a $SCRATCH/llm-d-router/x.go:1 b",
        "(/r/promotion-go-1/m/promotion-go-2/x.go)": "($SCRATCH/x.go)",
        "/promotion-go-only-one-slash": "/promotion-go-only-one-slash",
        "/tmp/promotion-go-/x /y/promotion-go-z": "/tmp/promotion-go-/x $SCRATCH",
        "x/tmp/promotion-go-q": "x$SCRATCH",
        "no scratch here /tmp/a": "no scratch here /tmp/a",
    }
    assert {raw: gooutput.unscratch(raw) for raw in cases} == cases


def test_a_stack_trace_location_is_found_in_linear_time():
    """The trace pattern starts only where a path starts: from every `/` of `a/a/a…` it was quadratic."""
    trace = "\t/tmp/promotion-go-1/llm-d-router/pkg/x/evolved.go:76 +0x1d"
    m = gooutput.TRACE_LOC.search(trace)
    assert m and m.group("file", "line") == ("tmp/promotion-go-1/llm-d-router/pkg/x/evolved.go", "76")
    assert gooutput.TRACE_LOC.search("see pkg/x/y.go:12, then").group("file") == "pkg/x/y.go"
    ratio = _slowest_ratio(gooutput.TRACE_LOC.search, "a/" * 5_000 + " x.go:1", "a/" * 50_000 + " x.go:1")
    assert ratio < 40, ratio


def test_a_long_vet_message_becomes_a_bounded_finding_with_its_head_and_end():
    """A finding is kept in the promotion state and quoted in reviews: a megabyte literal must not ride along."""
    literal = "ab" * 50_000
    out = f'pkg/x/x.go:3:9: fmt.Sprintf format %d has arg "{literal}" of wrong type string\n'
    [finding] = gooutput.parse_locations(out, check=gooutput.CHECK_VET, severity=Severity.IMPORTANT)
    assert (finding.file, finding.line) == ("pkg/x/x.go", 3)
    assert len(finding.message) < gooutput.MESSAGE_CHARS + 40
    assert finding.message.startswith('fmt.Sprintf format %d has arg "abab')
    assert finding.message.endswith('abab" of wrong type string')
    assert "characters cut]" in finding.message
    assert gooutput.parse_locations(out, check=gooutput.CHECK_VET, severity=Severity.IMPORTANT) == [finding]


def test_a_long_panic_in_go_test_output_becomes_a_bounded_finding():
    events = [
        {"Action": "run", "Package": gooutput.MODULE + "/pkg/x", "Test": "TestA"},
        {
            "Action": "output",
            "Package": gooutput.MODULE + "/pkg/x",
            "Test": "TestA",
            "Output": "panic: " + "z" * 300_000 + "\n",
        },
        {
            "Action": "output",
            "Package": gooutput.MODULE + "/pkg/x",
            "Test": "TestA",
            "Output": "\t" + gooutput.MODULE + "/pkg/x/evolved.go:9 +0x1\n",
        },
        {"Action": "fail", "Package": gooutput.MODULE + "/pkg/x", "Test": "TestA"},
    ]
    run = gooutput.parse_test_json("\n".join(json.dumps(e) for e in events))
    [finding] = run.findings
    assert (finding.file, finding.line) == ("pkg/x/evolved.go", 9)
    assert finding.message.startswith("test TestA failed: panic: zzz") and "characters cut]" in finding.message
    assert len(finding.message) < gooutput.MESSAGE_CHARS + 40
    assert max(len(ln) for ln in run.text.splitlines()) < gooutput.LINE_CHARS + 40


def test_insert_registration_into_single_import_and_one_line_body():
    src = 'package runner\n\nimport "fmt"\n\ntype Runner struct{}\n\nfunc (r *Runner) registerInTreePlugins() {}\n\nvar _ = fmt.Sprint\n'
    out = toolchain.insert_registration(src, IMPORT, REGISTER)
    assert 'import (\n\t"fmt"\n' in out and IMPORT in out
    assert "registerInTreePlugins() {\n\t" + REGISTER + "\n}" in out


def _failure(*outputs: str, test: str | None = "TestA", pkg_fails: bool = False):
    pkg = gooutput.MODULE + "/pkg/x"
    events = [{"Action": "run", "Package": pkg, "Test": test}] if test else []
    events += [{"Action": "output", "Package": pkg, "Test": test, "Output": o} for o in outputs]
    events += [{"Action": "fail", "Package": pkg, "Test": test}] if test else []
    events += [{"Action": "fail", "Package": pkg}] if pkg_fails or not test else []
    [finding] = gooutput.parse_test_json("\n".join(json.dumps(e) for e in events)).findings
    return finding


@pytest.mark.parametrize(
    ("finding", "opening"),
    [
        (_failure("    x_test.go:12: Score = 0.4, want 0.7\n"), "on this case the plugin did otherwise"),
        (
            _failure("panic: runtime error: index out of range\n", "\t" + gooutput.MODULE + "/pkg/x/evolved.go:9\n"),
            "the plugin panicked",
        ),
        (_failure("panic: test timed out after 1m0s\n", test=None), "ran past go test's time limit"),
        (_failure("FAIL\tgithub.com/llm-d/llm-d-router/pkg/x [setup failed]\n", test=None), "outside any test"),
    ],
    ids=["located", "panic", "timeout", "outside-any-test"],
)
def test_every_failing_generated_test_says_what_a_researcher_can_do(finding, opening):
    """Found in a researcher's trial: gate 1 showed a CRITICAL toolchain.test row with an empty "Suggested fix".
    A generated test states what the compiled evolved program did, so each kind of failure says how to tell
    nondeterminism from a translator bug, and what to do about each."""
    assert finding.check == gooutput.CHECK_TEST and finding.fix, finding
    assert opening in finding.fix, finding.fix
    for step in ("translate the program again", "range over a map", "maintainers", "reject it at gate 1"):
        assert step in finding.fix, (step, finding.fix)


def test_a_cmp_diff_failure_says_which_side_is_the_evolved_program_and_what_to_do():
    finding = _failure(
        "    x_test.go:30: Unexpected output (-want +got):   x.Out{\n",
        "        - \tScore: 0.7,\n",
        "        + \tScore: 0.4,\n",
    )
    assert "Score: want 0.7, got 0.4" in finding.message, finding.message
    assert "want" in finding.fix and "translate the program again" in finding.fix, finding.fix
