"""`promote upstream-patch`: the minimal llm-d-router change, that applies to llm-d-router and passes its checks."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.cli import main
from bot.model import PolicyKind, TranslationSummary
from bot.upstream import MIRROR, RUNNER_GO, UpstreamError, apply_to_mirror, format_patch, upstream_change

PKG = "pkg/epp/framework/plugins/scheduling/scorer/demo"
SUMMARY = TranslationSummary(
    kind=PolicyKind.ROUTING,
    plugin_type="demo-scorer",
    package_dir=PKG,
    signals=["QueueDepth"],
    registration_import=f'demo "github.com/llm-d/llm-d-router/{PKG}"',
    registration_line="fwkplugin.Register(demo.DemoType, fwkplugin.StabilityAlpha, demo.DemoFactory)",
)
BRANCH_FILES = {
    f"{PKG}/demo.go": "package demo\n",
    f"{PKG}/demo_test.go": "package demo\n",
    f"{PKG}/README.md": "# demo\n",
    "deploy/config/demo-scorer-epp-config.yaml": "kind: EndpointPickerConfig\n",
    "docs/promotion/demo-scorer/report.md": "# the evidence stays on the fork\n",
    "benchmarks/promotion/demo-scorer/README.md": "plan\n",
}


def _change():
    runner = (MIRROR / RUNNER_GO).read_text()
    return upstream_change(
        SUMMARY, BRANCH_FILES, runner, origin={"framework": "openevolve", "run": "r", "iteration": 3}
    )


def test_the_change_carries_the_package_the_config_and_the_registration_only():
    change = _change()
    assert change.paths == sorted(
        [
            f"{PKG}/README.md",
            f"{PKG}/demo.go",
            f"{PKG}/demo_test.go",
            "deploy/config/demo-scorer-epp-config.yaml",
            RUNNER_GO,
        ]
    )
    assert SUMMARY.registration_line in change.files[RUNNER_GO]
    assert change.subject == "Add the demo-scorer routing plugin (Alpha)"
    with pytest.raises(UpstreamError, match="no Go code"):
        upstream_change(SUMMARY, {"deploy/config/demo-scorer-epp-config.yaml": ""}, "")


def test_the_patch_applies_to_the_mirror_and_not_to_a_tree_whose_runner_differs(tmp_path):
    patch = format_patch(_change())
    assert patch.startswith("From ") and "Subject: [PATCH] Add the demo-scorer routing plugin (Alpha)" in patch
    assert "docs/promotion" not in patch and "benchmarks/" not in patch
    applied = apply_to_mirror(patch)
    assert set(applied) == set(_change().files)
    assert applied[RUNNER_GO] == _change().files[RUNNER_GO]
    other = tmp_path / "llm-d-router"
    shutil.copytree(MIRROR, other)
    runner = other / RUNNER_GO
    runner.write_text(re.sub(r"import \((.|\n)*?\)", 'import (\n\t"fmt"\n)', runner.read_text(), count=1))
    with pytest.raises(UpstreamError, match="does not apply"):
        apply_to_mirror(patch, other)


def test_the_patch_asks_for_a_sign_off_and_repeats_why_the_promotion_is_not_ready():
    """Found by a maintainer: the patch had no Signed-off-by and read as ready, though its evidence was sample
    data and its gates were passed by --approve. A bot cannot sign off for a person: the notes ask for it."""
    reasons = ["its benchmark evidence is sample data", "gate 1, 2, 3 passed by --approve, not by a person"]
    runner = (MIRROR / RUNNER_GO).read_text()
    patch = format_patch(upstream_change(SUMMARY, BRANCH_FILES, runner, not_ready=reasons))
    message, _, rest = patch.partition("\n---\n")
    notes = rest.split("\n diff", 1)[0].split(" cmd/epp", 1)[0]
    assert "Not ready for upstream review" in message and "sample data" in message and "--approve" in message
    assert "`git commit -s`" in notes and "if the repository requires DCO" in notes and "sample data" in notes
    assert not re.search(r"^Signed-off-by:", patch, re.M)  # the submitter's, never the bot's
    assert set(apply_to_mirror(patch)) == set(_change().files)  # `git am` leaves the notes out
    ready = format_patch(_change())
    assert "`git commit -s`" in ready and "Not ready" not in ready


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["upstream-patch", "--work", str(tmp_path / "none")]) == 2
    assert "no promotion here" in capsys.readouterr().err
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "fork")], check=True)
    assert main(["upstream-patch", "--fork", str(tmp_path / "fork"), "--branch", "promotion/x"]) == 2
    assert "is not a branch of the fork" in capsys.readouterr().err


@pytest.mark.slow
def test_the_bundled_examples_patch_applies_and_passes_go_vet_and_go_test(full_run, tmp_path, capsys):
    """The acceptance line: from the finished example, a patch that applies to llm-d-router and passes its checks."""
    _, work, fork = full_run
    out = tmp_path / "up" / "plugin.patch"
    code = main(["upstream-patch", "--work", str(work), "--out", str(out)])
    said = capsys.readouterr().out
    assert code == 0, said
    assert "applies to llm-d-router" in said and "go vet: pass" in said and " 0 failed" in said
    assert re.search(r"go test: [1-9]\d* passed", said)
    assert "git am -s" in said and "`git commit -s`" in said
    assert "its benchmark evidence is sample data" in said and "passed by --approve, not by a person" in said
    patch = out.read_text()
    assert "Not ready for upstream review" in patch.partition("\n---\n")[0]
    files = re.findall(r"^diff --git a/(\S+) ", patch, flags=re.MULTILINE)
    assert RUNNER_GO in files and "deploy/config/evolved-adaptive-scorer-epp-config.yaml" in files
    assert any(f.endswith("_test.go") for f in files)
    assert all(f.startswith(("pkg/epp/framework/plugins/", "deploy/config/", "cmd/epp/runner/")) for f in files), files
    for local in (str(work), str(fork), str(PROJECT_ROOT), f"{Path.home()}/"):
        assert local not in patch


@pytest.mark.slow
def test_a_promotion_that_is_not_finished_is_refused_with_where_it_stands(tmp_path, capsys):
    """Found by a README audit: a patch was cut, exit 0, from a promotion still waiting at gate 1 (and from one
    rejected at gate 3), its notes never saying so; the README promises it "from a finished promotion"."""
    from tests.conftest import REQUEST

    work, fork = tmp_path / "work", tmp_path / "fork"
    assert main(["run", str(REQUEST), "--work", str(work), "--fork", str(fork), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["upstream-patch", "--work", str(work), "--no-check"]) == 2
    err = capsys.readouterr().err
    assert "is not finished (waiting for a decision at gate 1" in err and "promote status" in err
    assert not (work / "upstream").exists()
    assert main(["reject", "1", "--reason", "not this one", "--work", str(work), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["upstream-patch", "--work", str(work), "--no-check"]) == 2
    assert "is not finished (rejected at gate 1)" in capsys.readouterr().err
