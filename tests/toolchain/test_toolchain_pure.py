"""The pure parts of the toolchain adapter: registration editing and output parsing."""

from __future__ import annotations

import json

import pytest

from bot import PROJECT_ROOT
from bot.golang import gooutput, toolchain
from bot.model import Severity

from .toolchain_samples import IMPORT, REGISTER

RUNNER = (PROJECT_ROOT / "gomirror" / "llm-d-router" / toolchain.RUNNER_GO).read_text()


def test_insert_registration_adds_import_and_line_at_end():
    out = toolchain.insert_registration(RUNNER, IMPORT, REGISTER)
    body = out[out.index("registerInTreePlugins() {") :]
    body = body[: body.index("\n}\n")]
    assert body.rstrip().splitlines()[-1] == "\t" + REGISTER
    imports = out[out.index("import (") : out.index("\n)\n")]
    assert "\t" + IMPORT in imports.splitlines()
    llmd = [ln.strip() for ln in imports.splitlines() if "llm-d-router/" in ln]
    paths = [ln[ln.index('"') :] for ln in llmd]
    assert paths == sorted(paths)  # gofmt order kept inside the group


def test_insert_registration_is_idempotent():
    once = toolchain.insert_registration(RUNNER, IMPORT, REGISTER)
    twice = toolchain.insert_registration(once, IMPORT, REGISTER)
    assert twice == once
    assert once.count(REGISTER) == 1 and once.count(IMPORT) == 1


def test_insert_registration_accepts_bare_and_aliased_imports():
    out = toolchain.insert_registration(
        RUNNER, "toy github.com/example/toy", "fwkplugin.Register(toy.Type, fwkplugin.StabilityAlpha, toy.Factory)"
    )
    assert '\ttoy "github.com/example/toy"' in out


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


def test_insert_registration_into_single_import_and_one_line_body():
    src = 'package runner\n\nimport "fmt"\n\ntype Runner struct{}\n\nfunc (r *Runner) registerInTreePlugins() {}\n\nvar _ = fmt.Sprint\n'
    out = toolchain.insert_registration(src, IMPORT, REGISTER)
    assert 'import (\n\t"fmt"\n' in out and IMPORT in out
    assert "registerInTreePlugins() {\n\t" + REGISTER + "\n}" in out
