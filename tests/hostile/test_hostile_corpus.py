"""The hostile corpus (tests/hostile/corpus): refused at the right line before anything runs, or stopped by a limit.

Every program tries to leave a marker file (``@MARKER@`` is replaced by a path under the test's
temporary directory). The refused ones must leave no marker, start no Go process and never reach
the translator; the two that only running can show (an endless loop, a 10 Gi-element allocation)
must end at the sandbox's limits with a CRITICAL finding naming the limit.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot import sandbox
from bot.cli import main
from bot.golang import harness_run, toolchain
from bot.golang.safety import check_evolved_text, critical
from bot.golang.translate import CHECK_NOT_MEASURED
from tests.conftest import REQUEST, git
from tests.toolchain.toolchain_samples import line_of

CORPUS = Path(__file__).parent / "corpus"

#: file -> the CRITICAL findings it must get, as (check, text on the offending line).
REFUSED = {
    "h01_init_side_effect.go": [("safety.import", '"os/exec"'), ("safety.init", "func init()")],
    "h02_package_initializer.go": [("safety.import", '"os"'), ("safety.package-initializer", "var planted = plant()")],
    "h03_exec_in_block.go": [("safety.import", '"os/exec"')],
    "h04_exec_in_helper.go": [("safety.import", 'x "os/exec"')],
    "h05_file_writes.go": [("safety.import", '"os"')],
    "h06_net_dial.go": [("safety.import", '"net"'), ("safety.import", '"net/http"')],
    "h07_cgo.go": [("safety.cgo", 'import "C"')],
    "h08_go_generate.go": [("safety.directive", "//go:generate touch")],
    "h09_unsafe.go": [
        ("safety.import", '"unsafe"'),
        ("safety.directive", "//go:linkname nanotime"),
        ("safety.bodyless-func", "func nanotime() int64"),
    ],
    "h12_goroutine.go": [
        ("safety.channel", "done := make(chan bool)"),
        ("safety.goroutine", "go func() {"),
        ("safety.channel", "done <- true"),
    ],
    "h13_openevolve_exec.py": [("safety.import", '"os/exec"')],
    "h14_line_block_directive.go": [
        ("safety.directive", "/*line adapter.go:40*/"),
        ("safety.directive", "/*line register.go:12:3*/"),
    ],
    "h15_invisible_characters.go": [
        ("safety.invisible-character", "\tlimit\u3164 := 0.0"),
        ("safety.invisible-character", "> limit\u3164 {"),
        ("safety.invisible-character", "/* check \u202e"),
        ("safety.invisible-character", '"admin\u200d"'),
    ],
    "h16_lint_suppression.go": [
        ("safety.lint-suppression", "//nolint:all"),  # the first: helperY's doc comment
        ("safety.lint-suppression", "//revive:disable"),
        ("safety.lint-suppression", "//nolint:all // evolved"),
        ("safety.lint-suppression", "EffectiveLoad()) //nolint:all"),
        ("safety.lint-suppression", "// nolint:gocritic"),
        ("safety.lint-suppression", "//lint:ignore SA4006"),
        ("safety.lint-suppression", "// #nosec G404"),
    ],
}
#: What only running shows: file -> the limit that must stop it.
RUN_LIMITED = {"h10_infinite_loop.go": "test time limit", "h11_huge_allocation.go": "memory limit"}


def test_the_corpus_is_fully_described():
    assert not set(REFUSED) & set(RUN_LIMITED)
    assert set(REFUSED) | set(RUN_LIMITED) == {p.name for p in CORPUS.iterdir() if p.suffix in (".go", ".py")}


def expected(name: str) -> set[tuple[str, int]]:
    text = (CORPUS / name).read_text()
    return {(check, line_of(text, needle)) for check, needle in REFUSED[name]}


def armed(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """The program with its marker pointing into tmp_path (the path it must never create)."""
    marker = tmp_path / "marker" / "HOSTILE-CODE-RAN"
    marker.parent.mkdir()
    text = (CORPUS / name).read_text().replace("@MARKER@", str(marker)).replace("@MARKER_NAME@", marker.name)
    src = tmp_path / name
    src.write_text(text)
    return src, marker


@pytest.fixture()
def nothing_runs(monkeypatch):
    """Fail the test if any Go process is started or the translator reaches the program."""
    calls: list[str] = []

    def refuse(name):
        def boom(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} was reached for a refused program")

        return boom

    import bot.golang.translate  # noqa: F401 - imported before patching, so no module binds the patched generate

    monkeypatch.setattr(sandbox, "run", refuse("a Go process"))
    monkeypatch.setattr("bot.golang.analyze.analyze", refuse("the analysis"))
    monkeypatch.setattr("bot.golang.generate.generate", refuse("the generator (and its evaluator)"))
    monkeypatch.setattr("bot.golang.translate.generate", refuse("the generator (and its evaluator)"))
    return calls


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_statically_at_the_right_lines(name):
    found = critical(check_evolved_text((CORPUS / name).read_text(), name))
    assert {(f.check, f.source_line) for f in found} == expected(name)
    assert all(f.fix for f in found)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_promote_translate_refuses_and_runs_nothing(name, tmp_path, capsys, nothing_runs):
    src, marker = armed(name, tmp_path)
    out = tmp_path / "out"
    assert main(["translate", str(src), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    findings = json.loads((out / "findings.json").read_text())
    assert {(f["check"], f["source_line"]) for f in findings if f["severity"] == "CRITICAL"} == expected(name)
    assert sorted(p.name for p in out.iterdir()) == ["findings.json"]  # nothing generated
    assert not marker.exists() and nothing_runs == []


def _request_for(src: Path, tmp_path: Path) -> Path:
    doc = yaml.safe_load(REQUEST.read_text())
    doc["source"] = str(src)
    path = tmp_path / "promotion.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_promote_run_stops_before_stage_1_with_exit_2(name, tmp_path, capsys, nothing_runs):
    src, marker = armed(name, tmp_path)
    work, fork = tmp_path / "work", tmp_path / "fork"
    code = main(["run", str(_request_for(src, tmp_path)), "--work", str(work), "--fork", str(fork), "--approve", "all"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("promote: error: ") and "\n" not in err, err
    first = min(expected(name), key=lambda cl: cl[1])
    assert f"{src}:{first[1]}: refused before anything is built or run" in err
    assert not (work / "state.json").exists()
    if (fork / ".git").exists():
        assert "promotion/" not in git(fork, "branch", "--list")
    assert not marker.exists() and nothing_runs == []


def test_the_cli_process_refuses_too(tmp_path):
    """The real `promote` executable, as a user runs it, not only main() in-process."""
    src, marker = armed("h03_exec_in_block.go", tmp_path)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "promote"), "translate", str(src), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "CRITICAL safety.import line 6" in proc.stderr
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUN_LIMITED))
def test_what_only_running_shows_is_stopped_by_the_sandbox_limits(name, tmp_path, capsys, monkeypatch):
    if not sandbox.available():
        pytest.skip("bubblewrap cannot start on this machine")
    monkeypatch.setattr(toolchain, "DEFAULT_TEST_SECONDS", 10)
    monkeypatch.setattr(
        harness_run, "RUN_LIMITS", sandbox.Limits(wall_seconds=10, cpu_seconds=10, memory_bytes=4 << 30)
    )
    src, marker = armed(name, tmp_path)
    out = tmp_path / "out"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(["translate", str(src), "--out", str(out)]) == 1
    grew_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grew_kib < 1 << 20, "the translator's own process grew by more than 1 GiB"
    capsys.readouterr()
    findings = json.loads((out / "findings.json").read_text())
    limits = [f for f in findings if f["check"] == toolchain.CHECK_LIMIT]
    assert len(limits) == 1 and limits[0]["severity"] == "CRITICAL", findings
    assert RUN_LIMITED[name] in limits[0]["message"]
    assert limits[0]["file"].endswith("evolved.go") and limits[0]["line"]
    # The harness built; it died at run time, and the fidelity finding says so instead of naming a build error.
    [unknown] = [f for f in findings if f["check"] == CHECK_NOT_MEASURED]
    assert "the differential harness built but died at run time, stopped at the sandbox's" in unknown["message"]
    assert "build" not in unknown["fix"] and "crashed the harness" in unknown["fix"]
    if name == "h11_huge_allocation.go":
        assert ": fatal error: out of memory; no parameter got" in unknown["message"], unknown["message"]
    assert not marker.exists()
